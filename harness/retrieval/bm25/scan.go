package bm25

import "math/bits"

// This file is gatherTAAT's scan of a window's union: the documents that any essential list has, in
// order, each a candidate when its sum plus the presence planes' bound of the non-essential lists
// reaches theta (query round 22 in docs/retrieval.md).

// useScanRegs selects scanWordsRegs for gatherTAAT's scan instead of scanWords. A variable only so that
// tests and A/B runs can compare.
var useScanRegs = true

// scanWordsRegs is scanWords with its inner loop's values in registers. scanWords's loop kept more
// values live than amd64 has registers for (the five candidate slices, the sums, masks, norms, the
// planes, theta), so Go's register allocator spilled the loop-carried ones, the word's remaining bits x
// and the candidate count n, to the stack: every document then waited for a store-to-load round trip on
// each. Here the loop writes only the offset, sum and mask of each document (into fixed arrays of the
// window, at fixed places from sc), the planes of the word are read from the window too, and the
// documents, norms and numbers of the kept ones are written after the loop (fillKept).
func (sc *batchScratch) scanWordsRegs(norms []uint8, theta float64, nw int) int {
	if sc.pp.flat {
		return sc.scanFlat(norms, theta, nw)
	}
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
		if sc.pp.wok { // the window's planes were computed before the scan (useSIMDPlanes, query round 27)
			tw.ones, tw.twos = sc.pp.wones[wi], sc.pp.wtwos[wi]
		} else {
			tw.ones, tw.twos = sc.pp.at(tw.lo + uint32(wi)*64)
		}
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

// scanFlat is scanWordsRegs over the offsets of the window's union documents (presencePlanes.window
// wrote them, useFlatScan): one loop over the documents, without the loop per union word whose exits
// (after one to a few documents) mispredict. Its calls hand out the same candidates as scanWordsRegs;
// the union is cleared when the window is done.
func (sc *batchScratch) scanFlat(norms []uint8, theta float64, nw int) int {
	tw, pp := &sc.taat, &sc.pp
	pp.snorms, pp.snw = norms, nw // for flatStop: not live in the loop's registers
	acc := tw.acc
	mask := tw.mask[:len(acc)] // allocated together, of one length
	wones, wtwos := (*[1 << 10]uint64)(pp.wones), (*[1 << 10]uint64)(pp.wtwos)
	offs := pp.foffs[pp.fi:pp.fn]
	n := uint(0)
	for i, off := range offs {
		a, m := acc[off], mask[off]
		acc[off], mask[off] = 0, 0
		j := n % windowCands
		tw.sel[j], tw.selA[j], tw.selM[j] = off, a, m
		w, b := uint(off)/64&(1<<10-1), uint(off)%64                  // windows have at most 65,536 documents (1,024 words), wones 1,024 words at least
		c := b2u(wones[w]&(1<<b) != 0) | b2u(wtwos[w]&(1<<b) != 0)<<1 // bit tests (BTQ): no shift count in CX
		n += b2u(a*pruneSlack+pp.tab[c&3] >= theta)                   // kept, without a branch
		if n == windowCands {
			return sc.flatStop(i)
		}
	}
	return sc.flatDone(int(n))
}

// flatDone ends scanFlat's last call for the window, with n candidates.
//
//go:noinline
func (sc *batchScratch) flatDone(n int) int {
	tw, pp := &sc.taat, &sc.pp
	pp.fi = pp.fn
	clear(tw.union[:pp.snw])
	tw.pending = false
	sc.fillKept(pp.snorms, n)
	return n
}

// flatStop ends a call of scanFlat at windowCands candidates, the i-th offset from pp.fi the last one
// scanned.
//
//go:noinline
func (sc *batchScratch) flatStop(i int) int {
	tw, pp := &sc.taat, &sc.pp
	pp.fi += i + 1
	w, nw := uint(pp.foffs[pp.fi-1])/64, pp.snw
	// as scanWordsRegs: pending while the word has documents left or is not the last
	tw.pending = pp.fi < pp.fn && uint(pp.foffs[pp.fi])/64 == w || int(w) < nw-1
	if !tw.pending {
		clear(tw.union[:nw])
	}
	sc.fillKept(pp.snorms, windowCands)
	return windowCands
}

// fillKept writes the first n candidates from the offsets, sums and masks that scanWordsRegs kept.
func (sc *batchScratch) fillKept(norms []uint8, n int) {
	tw := &sc.taat
	lo := tw.lo
	cdoc, cacc, cnrm, alive, cmask := sc.cdoc[:n], sc.cacc[:n], sc.cnrm[:n], sc.alive[:n], tw.cmask[:n]
	for j, off := range tw.sel[:n] {
		d := lo + uint32(off)
		cdoc[j], cacc[j], cnrm[j], alive[j], cmask[j] = d, tw.selA[j], norms[d], uint16(j), tw.selM[j]
	}
}

// scanWords is gatherTAAT's scan as it was before scanWordsRegs (useScanRegs off): over the window's union words from
// the first not yet scanned, skipping the zero words, and over each word's set bits, a document becoming
// a candidate when its sum plus the planes' bound reaches theta (kept without a branch). At windowCands
// candidates it stops, the word's bits not yet scanned left in the union for the next call.
func (sc *batchScratch) scanWords(norms []uint8, theta float64, nw int) int {
	tw := &sc.taat
	cdoc, cacc, cnrm, alive, cmask := sc.cdoc[:windowCands], sc.cacc[:windowCands], sc.cnrm[:windowCands], sc.alive[:windowCands], tw.cmask[:windowCands]
	acc, mask, u, lo, pp := tw.acc, tw.mask, tw.union[:nw], tw.lo, &sc.pp
	n := 0
	for wi := tw.wi; wi < nw; wi++ {
		x := u[wi]
		if x == 0 {
			continue
		}
		ones, twos := pp.at(lo + uint32(wi)*64)
		for x != 0 {
			b := bits.TrailingZeros64(x)
			off := wi*64 + b
			x &= x - 1
			a, m := acc[off], mask[off]
			acc[off], mask[off] = 0, 0
			d := lo + uint32(off)
			cdoc[n], cacc[n], cnrm[n], alive[n], cmask[n] = d, a, norms[d], uint16(n), m
			n += int(b2u(a*pruneSlack+pp.bound(ones, twos, uint32(b)) >= theta)) // kept, without a branch
			if n == windowCands {
				u[wi], tw.wi = x, wi
				if x == 0 && wi == nw-1 {
					tw.pending = false
				}
				return n
			}
		}
		u[wi] = 0
	}
	tw.pending = false
	return n
}

// scanCapture, when set (by a benchmark only), sees every window gatherTAAT has accumulated before its
// scan: the scratch, the window's words and the threshold.
var scanCapture func(sc *batchScratch, nw int, theta float64)
