package bm25

import (
	"encoding/binary"
	"math"
)

// encodeTerm appends one term's postings, in the postings.bin layout described in format.go, to skips
// (the block skip entries) and data (the blocks), and returns the term's record without its offset.
// docs are strictly increasing document ordinals and tfs their term frequencies; norms are the
// documents' norm bytes and K the default parameters' norm table, from which the block and term score
// bounds are computed. This is the single place the build encodes postings; the search decodes them.
func encodeTerm(docs, tfs []uint32, norms []uint8, K *[256]float64, data, skips []byte) (termRec, []byte, []byte) {
	rec := termRec{df: uint32(len(docs)), minNrm: 255}
	var tmp [binary.MaxVarintLen64]byte
	prevLast := uint32(0)
	for s := 0; s < len(docs); s += blockSize {
		e := min(s+blockSize, len(docs))
		prev := prevLast
		var blockBound float32
		for k := s; k < e; k++ {
			g := uint64(docs[k] - prev)
			prev = docs[k]
			tf := tfs[k]
			if tf == 1 {
				n := binary.PutUvarint(tmp[:], g<<1|1)
				data = append(data, tmp[:n]...)
			} else {
				n := binary.PutUvarint(tmp[:], g<<1)
				data = append(data, tmp[:n]...)
				n = binary.PutUvarint(tmp[:], uint64(tf))
				data = append(data, tmp[:n]...)
			}
			nm := norms[docs[k]]
			if tf > rec.maxTf {
				rec.maxTf = tf
			}
			if nm < rec.minNrm {
				rec.minNrm = nm
			}
			if v := float32(tfNorm(float64(tf), K[nm])); v > blockBound {
				blockBound = v
			}
		}
		rec.bound = max(rec.bound, blockBound)
		prevLast = docs[e-1]
		skips = binary.LittleEndian.AppendUint32(skips, prevLast)
		skips = binary.LittleEndian.AppendUint32(skips, uint32(len(data)))
		skips = binary.LittleEndian.AppendUint32(skips, math.Float32bits(blockBound))
	}
	return rec, data, skips
}
