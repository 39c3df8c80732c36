package bm25

import (
	"encoding/binary"
	"math/bits"
	"unsafe"
)

// usePresencePlanes lets the batch scorer bound each gathered document's non-essential contribution by
// which of the non-essential bitmap lists have it (presencePlanes) instead of by the bound of them all.
// A variable only so that tests and A/B runs can compare.
var usePresencePlanes = true

// presencePlanes bounds what the non-essential lists can add to a document from the bitmaps of the
// non-essential dense lists, a bitmap word (64 documents) at a time: ones marks the documents that are in
// at least one of them, twos those in at least two (a carry-save count over the words). A document in
// none can get at most what the non-essential block lists can add; one in exactly one at most that plus
// the largest bitmap list's bound; one in two or more the bound of all the non-essential lists. Most
// documents of the essential lists are in none (on the 1M NQ-open index, at the final threshold, 7k of
// the 20k documents that the bound of all the lists keeps are in one or more, and 3k pass the planes'
// bound), so the probes of the non-essential lists run for far fewer candidates. The bound is never
// below a document's real non-essential contribution, so the results are the same.
//
// word reads the bitmaps' words through their base pointers, without a bounds check per bitmap and word
// (set checks once that every bitmap has all the words; query round 21). Tighter bounds (the exact sum
// of the present bitmaps' bounds), fewer bitmaps (only those with the largest bounds), the planes of a
// whole window computed bitmap by bitmap, and prefetching the next window's lines were measured and did
// not pay (docs/retrieval.md): the candidates that the exact sum drops (half of them) were dropped by
// their first probe anyway.
type presencePlanes struct {
	bms    [][]byte         // the bitmaps of the non-essential dense lists
	ptrs   []unsafe.Pointer // their first bytes (only while every one has nwords words)
	nwords int              // the words every bitmap of ptrs has (0: none, word reads bms)
	tab    [4]float64       // the bound by a document's plane bits (ones | twos<<1)
	wones  []uint64         // window's planes (window, useSIMDPlanes): ones of the window's word i
	wtwos  []uint64         // and twos
	wok    bool             // wones and wtwos hold the planes of the current window (set clears it)
	foffs  []uint16         // useFlatScan: the offsets of the window's union documents, in order (unionOffsets)
	fn, fi int              // their number, and the next one to scan
	flat   bool             // foffs holds the current window's union (scanFlat scans it)
	snorms []uint8          // scanFlat's norms and window words, for flatStop
	snw    int
}

// usePlanesDirect lets word read the bitmaps through ptrs; off, through bms with a bounds check each. A
// variable only so that tests and A/B runs can compare.
var usePlanesDirect = true

// set takes the non-essential lists ne, whose bound together is bound (what the batch scorer used for
// every document before), each bound scaled by bias (1 but in a test).
func (pp *presencePlanes) set(ne []*queryTerm, bound, bias float64) {
	pp.bms = pp.bms[:0]
	blocks, top := 0.0, 0.0
	for _, q := range ne {
		if c := &q.cur; c.dense && usePresencePlanes {
			top = max(top, q.ub)
			pp.bms = append(pp.bms, c.bits)
		} else {
			blocks += q.ub
		}
	}
	pp.ptrs, pp.nwords = pp.ptrs[:0], 0
	if usePlanesDirect && len(pp.bms) > 0 {
		pp.nwords = len(pp.bms[0]) / 8
		for _, bm := range pp.bms {
			pp.nwords = min(pp.nwords, len(bm)/8)
		}
		if pp.nwords > 0 {
			for _, bm := range pp.bms {
				pp.ptrs = append(pp.ptrs, unsafe.Pointer(unsafe.SliceData(bm)))
			}
		}
	}
	pp.wok, pp.flat = false, false
	// Without dense lists every document takes min(bound, blocks) = bound.
	pp.tab = [4]float64{min(bound, blocks) * bias, min(bound, blocks+top) * bias, bound * bias, bound * bias}
}

// word returns the planes of bitmap word g (documents 64g to 64g+63): ones and twos.
func (pp *presencePlanes) word(g uint32) (ones, twos uint64) {
	if int(g) < pp.nwords { // every bitmap has word g (set checked): no bounds check per bitmap
		off := uintptr(g) * 8
		for _, p := range pp.ptrs {
			x := binary.LittleEndian.Uint64((*[8]byte)(unsafe.Add(p, off))[:])
			twos |= ones & x
			ones |= x
		}
		return ones, twos
	}
	return pp.wordChecked(g)
}

// wordChecked is word through bms, each read bounds-checked (past a bitmap's end: an index error, which
// Search reports as a corrupt index, as it did before word had ptrs).
func (pp *presencePlanes) wordChecked(g uint32) (ones, twos uint64) {
	for _, bm := range pp.bms {
		x := binary.LittleEndian.Uint64(bm[8*g:])
		twos |= ones & x
		ones |= x
	}
	return ones, twos
}

// at returns the planes of the 64 documents from d (d%64 is 0 but in tests of windows narrower than a
// word; bits past the bitmaps' end are 0).
func (pp *presencePlanes) at(d uint32) (ones, twos uint64) {
	g, s := d/64, d%64
	if s == 0 {
		return pp.word(g)
	}
	for _, bm := range pp.bms {
		x := binary.LittleEndian.Uint64(bm[8*g:]) >> s
		if int(g+1) < len(bm)/8 {
			x |= binary.LittleEndian.Uint64(bm[8*(g+1):]) << (64 - s)
		}
		twos |= ones & x
		ones |= x
	}
	return ones, twos
}

// bound returns the bound for the document at bit b of a word whose planes are ones and twos.
func (pp *presencePlanes) bound(ones, twos uint64, b uint32) float64 {
	return pp.tab[(ones>>(b%64)&1|(twos>>(b%64)&1)<<1)&3]
}

// window computes the planes of a whole window before its scan (query round 27): the nw bitmap words
// from the one of document lo, into wones and wtwos, with planesWindow (512 bits a step in the SIMD
// build), and then the scan reads them from there (scanWordsRegs) instead of calling at per nonzero
// union word. Only with useSIMDPlanes (off, or lo not at a word's start: the scan calls at as before).
// The words past nwords (past the end of a bitmap, or usePlanesDirect off) are computed by at where the
// union u has documents (a bitmap too short for them is an index error, as before) and are 0 elsewhere.
func (pp *presencePlanes) window(lo uint32, u []uint64) {
	pp.wok, pp.flat = false, false
	if !useSIMDPlanes || lo%64 != 0 {
		return
	}
	nw := len(u)
	if cap(pp.wones) < max(nw, 1<<10) { // at least 1,024 words: scanFlat indexes them without a bounds check
		pp.wones, pp.wtwos = make([]uint64, max(nw, 1<<10)), make([]uint64, max(nw, 1<<10))
	}
	ones, twos := pp.wones[:nw], pp.wtwos[:nw]
	g := int(lo / 64)
	n := 0
	if len(pp.ptrs) > 0 {
		n = max(0, min(nw, pp.nwords-g))
		planesWindow(ones[:n], twos[:n], pp.ptrs, uintptr(g)*8)
	}
	for i := n; i < nw; i++ {
		ones[i], twos[i] = 0, 0
		if u[i] != 0 && len(pp.bms) > 0 {
			ones[i], twos[i] = pp.at(lo + uint32(i)*64)
		}
	}
	pp.wok = true
	if useFlatScan {
		if cap(pp.foffs) < 64*nw+32 {
			pp.foffs = make([]uint16, 64*nw+32)
		}
		pp.fn, pp.fi, pp.flat = unionOffsets(pp.foffs[:64*nw+32], u), 0, true
	}
}

// unionOffsetsScalar is unionOffsets a bit at a time.
func unionOffsetsScalar(offs []uint16, u []uint64) int {
	n := 0
	for wi, x := range u {
		for ; x != 0; x &= x - 1 {
			offs[n] = uint16(wi*64 + bits.TrailingZeros64(x))
			n++
		}
	}
	return n
}

// planesWindowScalar is planesWindow a word at a time: the planes of the len(ones) words from byte off
// of the bitmaps at ptrs (each has them all).
func planesWindowScalar(ones, twos []uint64, ptrs []unsafe.Pointer, off uintptr) {
	twos = twos[:len(ones)]
	for i := range ones {
		o, t := uint64(0), uint64(0)
		for _, p := range ptrs {
			x := binary.LittleEndian.Uint64((*[8]byte)(unsafe.Add(p, off+uintptr(i)*8))[:])
			t |= o & x
			o |= x
		}
		ones[i], twos[i] = o, t
	}
}
