package bm25

import "math/bits"

// useScanExtract lets gatherTAAT scan a window's union in two passes (extract, then scanExtracted)
// instead of one loop over the union's words and their set bits (scanWords). Off: on the 1M NQ-open
// index it did not pay (query round 20 in docs/retrieval.md: the one loop's mispredicted branches cost
// less than the second pass's work). A variable only so that tests and A/B runs can compare.
var useScanExtract = false

// scanUnroll is how many set bits extract takes from every nonzero union word without a test; a word
// with more takes the rest in a loop. On the 1M NQ-open index a nonzero union word has 3.2 documents on
// average, 22% have more than 4 and 5% more than 8.
const scanUnroll = 8

// extract turns the window's union (its first nw words) into the list of its documents' offsets, in
// order (offs[:on]), records the presence planes of each nonzero word (pl: pp.at of the word's first
// document) and clears the union. The one-loop scan it replaces tested every word for zero and ran an
// inner loop over the word's bits, both close to coin flips on real text (a quarter of the words are
// zero, the others have from one to many bits): here the nonzero words are listed first without a
// branch (the index written, the position advanced by whether the word is nonzero), and each of them
// writes its first scanUnroll offsets whether or not it has them (in 8-byte stores), its write position
// then advanced by its popcount (Lemire's bitmap decoding), so the only data-dependent branch left is
// the rarer word with more bits.
func (tw *taatWindow) extract(pp *presencePlanes, nw, width int) {
	if len(tw.nz) < nw {
		tw.nz = make([]uint16, nw)
	}
	if len(tw.offs) < width+scanUnroll {
		tw.offs = make([]uint16, width+scanUnroll)
	}
	u, nz, offs, lo := tw.union[:nw], tw.nz[:nw], tw.offs, tw.lo
	pl := &tw.pl
	k := 0
	for wi, x := range u {
		nz[k] = uint16(wi)
		k += int(b2u(x != 0))
	}
	p := 0
	for _, wi := range nz[:k] {
		x := u[wi]
		ones, twos := pp.at(lo + uint32(wi)*64)
		pl[wi%taatMaxWords] = [2]uint64{ones, twos}
		c := bits.OnesCount64(x)
		// The word's first scanUnroll offsets (its bit numbers plus 64 wi: below 65,536, as a window is
		// at most 65,536 documents), written whether or not the word has them: past the word's count
		// they are garbage that the next word overwrites, or past on.
		base := uint64(wi) * 64 * 0x0001_0001_0001_0001
		o := offs[p : p+scanUnroll : p+scanUnroll]
		x = put4(o[0:4:4], x, base)
		x = put4(o[4:8:8], x, base)
		if x != 0 { // more than scanUnroll bits
			for q := p + scanUnroll; x != 0; q++ {
				offs[q] = wi*64 + uint16(bits.TrailingZeros64(x))
				x &= x - 1
			}
		}
		p += c
	}
	clear(u)
	tw.oi, tw.on = 0, p
}

// put4 writes the bit numbers of the lowest four set bits of x (64 for those it does not have) plus
// base (in each 16-bit lane) to o, in one 8-byte store, and returns x without them.
func put4(o []uint16, x, base uint64) uint64 {
	b0 := uint64(bits.TrailingZeros64(x))
	x &= x - 1
	b1 := uint64(bits.TrailingZeros64(x))
	x &= x - 1
	b2 := uint64(bits.TrailingZeros64(x))
	x &= x - 1
	b3 := uint64(bits.TrailingZeros64(x))
	x &= x - 1
	v := base + (b0 | b1<<16 | b2<<32 | b3<<48)
	o = o[:4]
	o[0], o[1], o[2], o[3] = uint16(v), uint16(v>>16), uint16(v>>32), uint16(v>>48)
	return x
}

// taatMaxWords is the most union words a window has (65,536 documents).
const taatMaxWords = 1 << 16 / 64

// scanExtracted is the candidate pass of gatherTAAT's scan over the offsets that extract listed: a
// straight loop (selectKept) that keeps the documents whose sum plus the planes' bound reaches theta,
// then the kept ones written as the candidates, and the sums and masks of the documents scanned
// cleared. At windowCands candidates it stops, and the next call goes on from there (the window stays
// pending). Most documents are not kept, so most of the one-loop scan's stores into the candidates'
// arrays are saved.
func (sc *batchScratch) scanExtracted(norms []uint8, theta float64) int {
	tw := &sc.taat
	acc, mask, lo := tw.acc, tw.mask, tw.lo
	offs := tw.offs[tw.oi:tw.on]
	n, i := sc.selectKept(offs, acc, theta)
	cdoc, cacc, cnrm, alive, cmask := sc.cdoc[:n], sc.cacc[:n], sc.cnrm[:n], sc.alive[:n], tw.cmask[:n]
	for j, off := range tw.sel[:n] {
		d := lo + uint32(off)
		cdoc[j], cacc[j], cnrm[j], alive[j], cmask[j] = d, acc[off], norms[d], uint16(j), mask[off]
	}
	for _, off := range offs[:i] {
		acc[off], mask[off] = 0, 0
	}
	tw.oi += i
	tw.pending = tw.oi < tw.on
	return n
}

// selectKept writes to tw.sel, in order, the offsets of offs whose sum (acc) plus the planes' bound
// (from the planes of their words, tw.pl) reaches theta, up to windowCands of them, without a branch per
// offset; it returns how many it kept and how many offsets it scanned. (Everything else it reads is at a
// fixed place from sc, so that the loop's values fit in registers: a variable shift takes CX, and a
// loop that spilled its counter ran a store-to-load round trip per offset.)
func (sc *batchScratch) selectKept(offs []uint16, acc []float64, theta float64) (int, int) {
	n := uint(0)
	for i, off := range offs {
		pl := &sc.taat.pl[off/64%taatMaxWords]
		sc.taat.sel[n%windowCands] = off
		n += b2u(acc[off]*pruneSlack+sc.pp.bound(pl[0], pl[1], uint32(off)) >= theta) // kept, without a branch
		if n == windowCands {
			return int(n), i + 1
		}
	}
	return int(n), len(offs)
}

// scanWords is gatherTAAT's scan in one loop (useScanExtract off): over the window's union words from
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

// useScanRegs selects scanWordsRegs for gatherTAAT's scan (when useScanExtract is off). A variable only
// so that tests and A/B runs can compare.
var useScanRegs = true

// scanWordsRegs is scanWords with its inner loop's values in registers. scanWords's loop kept more
// values live than amd64 has registers for (the five candidate slices, the sums, masks, norms, the
// planes, theta), so Go's register allocator spilled the loop-carried ones, the word's remaining bits x
// and the candidate count n, to the stack: every document then waited for a store-to-load round trip on
// each. Here the loop writes only the offset, sum and mask of each document (into fixed arrays of the
// window, at fixed places from sc), the planes of the word are read from the window too, and the
// documents, norms and numbers of the kept ones are written after the loop (fillKept).
func (sc *batchScratch) scanWordsRegs(norms []uint8, theta float64, nw int) int {
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
