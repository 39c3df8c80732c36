package bm25

import "math/bits"

// scanWords is gatherTAAT's scan of a window's union (the documents that any essential list has), from
// the first word not yet scanned, skipping the zero words, and over each word's set bits: a document
// becomes a candidate when its sum plus the presence planes' bound of the non-essential lists reaches
// theta (kept without a branch). At windowCands candidates it stops, the word's bits not yet scanned left
// in the union for the next call (pending); otherwise the window is done and its union cleared. Scanned
// documents' sums and masks are cleared as they are read.
//
// The inner loop writes only the offset, sum and mask of each document, into fixed arrays of the window,
// and reads the planes of the word from the window too, so that its loop-carried values (the word's
// remaining bits and the candidate count) stay in registers; the documents, norms and numbers of the
// kept ones are written after the loop (fillKept).
func (sc *batchScratch) scanWords(norms []uint8, theta float64, nw int) int {
	tw := &sc.taat
	acc := tw.acc
	mask := tw.mask[:len(acc)] // allocated together, of one length
	u := tw.union[:nw]
	n := uint(0)
	for wi := tw.wi; wi < nw; wi++ {
		x := u[wi]
		if x == 0 {
			continue
		}
		tw.ones, tw.twos = sc.pp.at(tw.lo + uint32(wi)*64)
		base := wi * 64
		for x != 0 {
			b := bits.TrailingZeros64(x)
			x &= x - 1
			off := base + b
			a, m := acc[off], mask[off]
			acc[off], mask[off] = 0, 0
			j := n % windowCands
			tw.sel[j], tw.selA[j], tw.selM[j] = uint16(off), a, m
			n += b2u(a*pruneSlack+sc.pp.bound(tw.ones, tw.twos, uint32(b)) >= theta) // kept, without a branch
			if n == windowCands {
				u[wi], tw.wi = x, wi
				tw.pending = x != 0 || wi < nw-1
				sc.fillKept(norms, int(n))
				return int(n)
			}
		}
		u[wi] = 0
	}
	tw.pending = false
	sc.fillKept(norms, int(n))
	return int(n)
}

// fillKept writes the first n candidates from the offsets, sums and masks that scanWords kept.
func (sc *batchScratch) fillKept(norms []uint8, n int) {
	tw := &sc.taat
	lo := tw.lo
	cdoc, cacc, cnrm, alive, cmask := sc.cdoc[:n], sc.cacc[:n], sc.cnrm[:n], sc.alive[:n], tw.cmask[:n]
	for j, off := range tw.sel[:n] {
		d := lo + uint32(off)
		cdoc[j], cacc[j], cnrm[j], alive[j], cmask[j] = d, tw.selA[j], norms[d], uint16(j), tw.selM[j]
	}
}
