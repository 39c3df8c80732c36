package bm25

import (
	"encoding/binary"
	"unsafe"
)

// presencePlanes bounds what the non-essential lists can add to a document from the bitmaps of the
// non-essential dense lists, a bitmap word (64 documents) at a time: ones marks the documents that are in
// at least one of them, twos those in at least two (a carry-save count over the words). A document in
// none can get at most what the non-essential block lists can add; one in exactly one at most that plus
// the largest bitmap list's bound; one in two or more the bound of all the non-essential lists. Most
// documents of the essential lists are in none, so the probes of the non-essential lists run for far
// fewer candidates. The bound is never below a document's real non-essential contribution, so the
// results are the same as with the bound of all the lists.
//
// word reads the bitmaps' words through their base pointers, without a bounds check per bitmap and word
// (set checks once that every bitmap has all the words).
type presencePlanes struct {
	bms    [][]byte         // the bitmaps of the non-essential dense lists
	ptrs   []unsafe.Pointer // their first bytes (only while every one has nwords words)
	nwords int              // the words every bitmap of ptrs has (0: none, word reads bms)
	tab    [4]float64       // the bound by a document's plane bits (ones | twos<<1)
}

// set takes the non-essential lists ne, whose bound together is bound (what the batch scorer used for
// every document before), each bound scaled by bias (1 but in a test).
func (pp *presencePlanes) set(ne []*queryTerm, bound, bias float64) {
	pp.bms = pp.bms[:0]
	blocks, top := 0.0, 0.0
	for _, q := range ne {
		if c := &q.cur; c.dense {
			top = max(top, q.ub)
			pp.bms = append(pp.bms, c.bits)
		} else {
			blocks += q.ub
		}
	}
	pp.ptrs, pp.nwords = pp.ptrs[:0], 0
	if len(pp.bms) > 0 {
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

// wordChecked is word through bms, each read bounds-checked: a word past a bitmap's end (which a sound
// index does not have) panics, and Search reports the failure.
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
