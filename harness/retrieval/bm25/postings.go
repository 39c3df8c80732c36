package bm25

import (
	"encoding/binary"
	"math"
	"math/bits"
)

// A term's postings are stored in one of two kinds (the first byte of the term's postings):
//
//   - kindBlocks: blocks of blockSize varint postings behind skip entries, for most terms;
//   - kindDense: for a term in at least 1/denseDiv of the documents, a bitmap over all documents, a
//     rank directory with a score bound per denseWindow documents, and the tfs as nibbles. A dense term
//     can then be probed for a document in constant time (a bit test, a rank and a nibble) instead of
//     decoding a block up to it, which is where MaxScore spends its time: the frequent terms are the
//     non-essential ones, probed for every candidate of the others.
const (
	kindBlocks = 0
	kindDense  = 1

	denseDiv     = 16
	denseWindow  = 256 // documents per directory entry: 4 bitmap words
	dirEntrySize = 8   // uint32 rank of the window's first document, float32 the window's bound
	escEntrySize = 8   // uint32 rank, uint32 tf
	// denseHeaderSize is the kind byte and the uint32 escape count.
	denseHeaderSize = 1 + 4
)

// denseSizes returns the bitmap words and directory entries of a dense term over n documents.
func denseSizes(n int) (words, dirs int) {
	words = (n + 63) / 64
	return words, (words + denseWindow/64 - 1) / (denseWindow / 64)
}

// isDense reports whether a term with df postings over n documents is stored dense.
func isDense(df, n int) bool { return df*denseDiv >= n }

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
	var esc []uint32
	data = append(data, kindDense, 0, 0, 0, 0)
	escAt := len(data) - 4
	bm := len(data)
	data = append(data, make([]byte, 8*words+dirEntrySize*dirs+(len(docs)+1)/2)...)
	dir := bm + 8*words
	nib := dir + dirEntrySize*dirs
	var bound float32
	e := -1 // the directory entry being filled
	for r, d := range docs {
		w := bm + 8*int(d/64)
		binary.LittleEndian.PutUint64(data[w:], binary.LittleEndian.Uint64(data[w:])|1<<(d%64))
		for e < int(d/denseWindow) {
			e++
			binary.LittleEndian.PutUint32(data[dir+dirEntrySize*e:], uint32(r))
		}
		v := float32(tfNorm(float64(tfs[r]), K[norms[d]]))
		bound = max(bound, v)
		be := data[dir+dirEntrySize*e+4:]
		binary.LittleEndian.PutUint32(be, math.Float32bits(max(v, math.Float32frombits(binary.LittleEndian.Uint32(be)))))
		if tf := tfs[r]; tf <= 15 {
			data[nib+r/2] |= byte(tf) << (4 * (r % 2))
		} else {
			esc = append(esc, uint32(r), tf)
		}
	}
	for e++; e < dirs; e++ {
		binary.LittleEndian.PutUint32(data[dir+dirEntrySize*e:], uint32(len(docs)))
	}
	binary.LittleEndian.PutUint32(data[escAt:], uint32(len(esc)/2))
	for _, x := range esc {
		data = binary.LittleEndian.AppendUint32(data, x)
	}
	return data, bound
}

// encodeBlocks appends a block-encoded posting list: its skip entries, then its blocks. It returns the
// list's largest tf/(tf+K).
func encodeBlocks(docs, tfs []uint32, norms []uint8, K *[256]float64, data []byte) ([]byte, float32) {
	nb := (len(docs) + blockSize - 1) / blockSize
	skipAt := len(data)
	data = append(data, make([]byte, nb*skipEntrySize)...)
	start := len(data)
	var bound float32
	prevLast := uint32(0)
	for s, bi := 0, 0; s < len(docs); s, bi = s+blockSize, bi+1 {
		e := min(s+blockSize, len(docs))
		prev := prevLast
		var blockBound float32
		for k := s; k < e; k++ {
			g := uint64(docs[k] - prev)
			prev = docs[k]
			tf := tfs[k]
			if tf == 1 {
				data = binary.AppendUvarint(data, g<<1|1)
			} else {
				data = binary.AppendUvarint(data, g<<1)
				data = binary.AppendUvarint(data, uint64(tf))
			}
			if v := float32(tfNorm(float64(tf), K[norms[docs[k]]])); v > blockBound {
				blockBound = v
			}
		}
		bound = max(bound, blockBound)
		prevLast = docs[e-1]
		se := data[skipAt+bi*skipEntrySize:]
		binary.LittleEndian.PutUint32(se, prevLast)
		binary.LittleEndian.PutUint32(se[4:], uint32(len(data)-start))
		binary.LittleEndian.PutUint32(se[8:], math.Float32bits(blockBound))
	}
	return data, bound
}

// popcount is bits.OnesCount64, named for the rank computations.
func popcount(w uint64) int { return bits.OnesCount64(w) }
