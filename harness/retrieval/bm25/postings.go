package bm25

import (
	"encoding/binary"
	"math"
	"math/bits"
)

// A term's postings are stored in one of two kinds (the first byte of the term's postings):
//
//   - kindBlocks: blocks of blockSize varint postings behind skip entries, for most terms;
//   - kindDense: for a term in at least 1/denseDiv of the documents, a bitmap over all documents of
//     those where the term's tf is 1, with a score bound per denseWindow documents, and the postings
//     with tf >= 2: when they are in at least 1/denseHiDiv of the documents themselves, as a second
//     bitmap with a rank directory (and a bound) per denseWindow documents and the tfs as nibbles;
//     otherwise block-encoded like a kindBlocks term.
//
// A dense term can be probed for a document in constant time (a bit test, and for tf >= 2 a rank and a
// nibble) instead of by decoding a block up to it, which is where MaxScore spends its time: the frequent
// terms are the non-essential ones, probed for the candidates of the others. The search treats a dense
// term's two bitmaps as two posting lists (every posting is in exactly one): the tf = 1 list's bound is
// well below the term's, so that it becomes non-essential, probed instead of iterated, long before the
// whole term could; only the documents with tf >= 2 (a fifth of a frequent word's) remain to iterate.
const (
	kindBlocks = 0
	kindDense  = 1

	// denseDiv: a term in at least 1/denseDiv of the documents is dense (its tf = 1 postings a bitmap);
	// denseHiDiv: its tf >= 2 postings are a bitmap too when they are in at least 1/denseHiDiv of the
	// documents.
	denseDiv     = 64
	denseHiDiv   = 48
	denseWindow  = 256 // documents per directory entry: 4 bitmap words
	dirEntrySize = 8   // tf >= 2 directory: uint32 postings before the window, float32 the window's bound
	oneEntrySize = 4   // tf = 1 directory: float32 the window's bound
	escEntrySize = 8   // uint32 posting number, uint32 tf
	// denseHeaderSize is the kind byte, uint32 escape count, uint32 tf >= 2 postings, the tf = 1
	// postings' smallest norm byte and float32 their largest tf/(tf+K), and the tf >= 2 postings' form
	// (hiBits or hiBlocks).
	denseHeaderSize = 1 + 4 + 4 + 1 + 4 + 1

	hiBits   = 0
	hiBlocks = 1
)

// denseSizes returns the bitmap words and directory entries of a dense term over n documents.
func denseSizes(n int) (words, dirs int) {
	words = (n + 63) / 64
	return words, (words + denseWindow/64 - 1) / (denseWindow / 64)
}

// isDense reports whether a term with df postings over n documents is stored dense.
func isDense(df, n int) bool { return df*denseDiv >= n }

// isDenseHi reports whether a dense term's nHi postings with tf >= 2, over n documents, are stored as a
// bitmap (else as blocks).
func isDenseHi(nHi, n int) bool { return nHi*denseHiDiv >= n }

// encodeTerm appends one term's postings, in the postings.bin layout described in format.go, to data,
// and returns the term's record without its offset. skips is scratch space, returned empty: the build
// writes the returned skips then data, and the whole layout is in data. docs are strictly increasing
// document ordinals and tfs their term frequencies; norms are the documents' norm bytes (one per
// document, so len(norms) is the number of documents) and K the default parameters' norm table, from
// which the score bounds are computed. This is the single place the build encodes postings; the search
// decodes them.
func encodeTerm(docs, tfs []uint32, norms []uint8, K *[256]float64, data, skips []byte) (termRec, []byte, []byte) {
	rec := termRec{df: uint32(len(docs)), minNrm: 255}
	for k, d := range docs {
		rec.maxTf = max(rec.maxTf, tfs[k])
		rec.minNrm = min(rec.minNrm, norms[d])
	}
	if isDense(len(docs), len(norms)) {
		data, rec.bound = encodeDense(docs, tfs, norms, K, data)
	} else {
		data = append(data, kindBlocks)
		data, rec.bound = encodeBlocks(docs, tfs, norms, K, data)
	}
	return rec, data, skips[:0]
}

// encodeDense appends a dense term and returns its largest tf/(tf+K).
func encodeDense(docs, tfs []uint32, norms []uint8, K *[256]float64, data []byte) ([]byte, float32) {
	words, dirs := denseSizes(len(norms))
	nHi, loMin := 0, uint8(255)
	for k, d := range docs {
		if tfs[k] > 1 {
			nHi++
		} else {
			loMin = min(loMin, norms[d])
		}
	}
	if !isDenseHi(nHi, len(norms)) {
		return encodeDenseHiBlocks(docs, tfs, norms, K, data, nHi, loMin)
	}
	hiBm := make([]uint64, words)
	loBits := make([]uint64, words)
	hiDir := make([]byte, dirEntrySize*dirs)
	loDir := make([]byte, oneEntrySize*dirs)
	nib := make([]byte, (nHi+1)/2)
	var esc []byte
	var bound, loBound float32
	r, e := 0, -1 // r: tf >= 2 postings so far; e: the tf >= 2 directory entry filled so far
	for k, d := range docs {
		tf := tfs[k]
		v := float32(tfNorm(float64(tf), K[norms[d]]))
		bound = max(bound, v)
		w := int(d / denseWindow)
		if tf == 1 {
			loBits[d/64] |= 1 << (d % 64)
			loBound = max(loBound, v)
			b := loDir[oneEntrySize*w:]
			binary.LittleEndian.PutUint32(b, math.Float32bits(max(v, math.Float32frombits(binary.LittleEndian.Uint32(b)))))
			continue
		}
		hiBm[d/64] |= 1 << (d % 64)
		for ; e < w; e++ {
			binary.LittleEndian.PutUint32(hiDir[dirEntrySize*(e+1):], uint32(r))
		}
		b := hiDir[dirEntrySize*w+4:]
		binary.LittleEndian.PutUint32(b, math.Float32bits(max(v, math.Float32frombits(binary.LittleEndian.Uint32(b)))))
		if tf <= 15 {
			nib[r/2] |= byte(tf) << (4 * (r % 2))
		} else {
			esc = binary.LittleEndian.AppendUint32(esc, uint32(r))
			esc = binary.LittleEndian.AppendUint32(esc, tf)
		}
		r++
	}
	for e++; e < dirs; e++ {
		binary.LittleEndian.PutUint32(hiDir[dirEntrySize*e:], uint32(r))
	}
	data = append(data, kindDense)
	data = binary.LittleEndian.AppendUint32(data, uint32(len(esc)/escEntrySize))
	data = binary.LittleEndian.AppendUint32(data, uint32(nHi))
	data = append(data, loMin)
	data = binary.LittleEndian.AppendUint32(data, math.Float32bits(loBound))
	data = append(data, hiBits)
	for _, x := range hiBm {
		data = binary.LittleEndian.AppendUint64(data, x)
	}
	data = append(data, hiDir...)
	data = append(data, nib...)
	data = append(data, esc...)
	for _, x := range loBits {
		data = binary.LittleEndian.AppendUint64(data, x)
	}
	data = append(data, loDir...)
	return data, bound
}

// encodeDenseHiBlocks appends a dense term whose tf >= 2 postings are block-encoded; nHi counts them
// and loMin is the smallest norm byte of the others. It returns the term's largest tf/(tf+K).
func encodeDenseHiBlocks(docs, tfs []uint32, norms []uint8, K *[256]float64, data []byte, nHi int, loMin uint8) ([]byte, float32) {
	words, dirs := denseSizes(len(norms))
	hiD := make([]uint32, 0, nHi)
	hiT := make([]uint32, 0, nHi)
	loBm := make([]uint64, words)
	loDir := make([]byte, oneEntrySize*dirs)
	var loBound float32
	for k, d := range docs {
		tf := tfs[k]
		if tf > 1 {
			hiD, hiT = append(hiD, d), append(hiT, tf)
			continue
		}
		v := float32(tfNorm(1, K[norms[d]]))
		loBm[d/64] |= 1 << (d % 64)
		loBound = max(loBound, v)
		b := loDir[oneEntrySize*int(d/denseWindow):]
		binary.LittleEndian.PutUint32(b, math.Float32bits(max(v, math.Float32frombits(binary.LittleEndian.Uint32(b)))))
	}
	data = append(data, kindDense, 0, 0, 0, 0)
	data = binary.LittleEndian.AppendUint32(data, uint32(nHi))
	data = append(data, loMin)
	data = binary.LittleEndian.AppendUint32(data, math.Float32bits(loBound))
	data = append(data, hiBlocks)
	data, hiBound := encodeBlocks(hiD, hiT, norms, K, data)
	for _, x := range loBm {
		data = binary.LittleEndian.AppendUint64(data, x)
	}
	data = append(data, loDir...)
	return data, max(hiBound, loBound)
}

// encodeBlocks appends a block-encoded posting list: its skip entries, then its blocks. It returns the
// list's largest tf/(tf+K). A block is bit-packed (see format.go): the widths of its document gaps and of
// its tf-1 values, then the gaps and the tf-1 values at those widths.
func encodeBlocks(docs, tfs []uint32, norms []uint8, K *[256]float64, data []byte) ([]byte, float32) {
	nb := (len(docs) + blockSize - 1) / blockSize
	skipAt := len(data)
	data = append(data, make([]byte, nb*skipEntrySize)...)
	start := len(data)
	var bound float32
	prevLast := uint32(0)
	for s, bi := 0, 0; s < len(docs); s, bi = s+blockSize, bi+1 {
		e := min(s+blockSize, len(docs))
		var blockBound float32
		for k := s; k < e; k++ {
			if v := float32(tfNorm(float64(tfs[k]), K[norms[docs[k]]])); v > blockBound {
				blockBound = v
			}
		}
		data = appendBlock(data, docs[s:e], tfs[s:e], prevLast)
		bound = max(bound, blockBound)
		prevLast = docs[e-1]
		se := data[skipAt+bi*skipEntrySize:]
		binary.LittleEndian.PutUint32(se, prevLast)
		binary.LittleEndian.PutUint32(se[4:], uint32(len(data)-start))
		binary.LittleEndian.PutUint32(se[8:], math.Float32bits(blockBound))
	}
	return data, bound
}

// appendBlock appends one bit-packed block of postings (docs, tfs) whose gaps start from prev.
func appendBlock(data []byte, docs, tfs []uint32, prev uint32) []byte {
	var gapBits, tfBits uint32
	p := prev
	for k, d := range docs {
		gapBits |= d - p
		p = d
		tfBits |= tfs[k] - 1
	}
	bg, bt := bits.Len32(gapBits), bits.Len32(tfBits)
	data = append(data, byte(bg), byte(bt))
	var acc uint64 // bits not yet written: fewer than 8 before each value is added
	nacc := 0
	for _, d := range docs {
		acc |= uint64(d-prev) << nacc
		prev = d
		for nacc += bg; nacc >= 8; nacc -= 8 {
			data = append(data, byte(acc))
			acc >>= 8
		}
	}
	if nacc > 0 {
		data = append(data, byte(acc))
	}
	acc, nacc = 0, 0
	for _, tf := range tfs {
		acc |= uint64(tf-1) << nacc
		for nacc += bt; nacc >= 8; nacc -= 8 {
			data = append(data, byte(acc))
			acc >>= 8
		}
	}
	if nacc > 0 {
		data = append(data, byte(acc))
	}
	return data
}

// packedLen is the byte length of a block of n postings bit-packed at gap width bg and tf width bt, its
// two width bytes included.
func packedLen(n, bg, bt int) int { return 2 + (n*bg+7)/8 + (n*bt+7)/8 }

// popcount is bits.OnesCount64, named for the rank computations.
func popcount(w uint64) int { return bits.OnesCount64(w) }
