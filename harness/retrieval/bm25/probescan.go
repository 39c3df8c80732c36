package bm25

import "math/bits"

// candMarks marks a window's candidates by document, for probeBlocksScan: bit d-base of cb is set for
// every candidate d gathered in the window (alive or not), and idx[d-base] is its number.
type candMarks struct {
	on   bool // the marks are set for the current window
	base uint32
	cb   []uint64
	idx  []uint16
	hd   []uint32 // the documents found by the current probe
	ht   []uint32 // and their tfs
}

// mark sets the marks of the n candidates gathered in the current window (documents cdoc[:n], in order,
// within width documents of the first), unless they are set.
func (sc *batchScratch) mark(n, width int) {
	cm := &sc.marks
	if cm.on {
		return
	}
	if len(cm.idx) < width {
		cm.cb, cm.idx = make([]uint64, (width+63)/64), make([]uint16, width)
	}
	if len(cm.hd) < windowCands {
		cm.hd, cm.ht = make([]uint32, windowCands), make([]uint32, windowCands)
	}
	cm.on, cm.base = true, sc.cdoc[0]
	for i, d := range sc.cdoc[:n] {
		off := d - cm.base
		cm.cb[off/64] |= 1 << (off % 64)
		cm.idx[off] = uint16(i)
	}
}

// unmark clears the marks of the n candidates of the window that ends.
func (sc *batchScratch) unmark(n int) {
	cm := &sc.marks
	if !cm.on {
		return
	}
	if n > 0 { // the candidates are in document order: their marks are in the words up to the last's
		clear(cm.cb[:(sc.cdoc[n-1]-cm.base)/64+1])
	}
	cm.on = false
}

// probeBlocksScan probes the non-essential block list c (list i of nq, weight w) for the live
// candidates, as probeOnes does for a bitmap, and records each candidate's contribution in its row. It
// makes one pass over the list's postings from the first live candidate to the last: the postings' gaps
// are decoded in a row and each document is tested against the window's candidate marks (most postings
// are no candidate's), instead of an advance per candidate that stops, with a mispredicted branch, at
// each. Blocks without a candidate are skipped as advance skips them. The cursor ends where advance to
// the last live candidate would leave it.
func (sc *batchScratch) probeBlocksScan(c *cursor, i, nq, ncand, live, width int, w float64, kt *[256]float64, bound, theta float64) int {
	sc.mark(ncand, width)
	cm := &sc.marks
	first, last := sc.cdoc[sc.alive[0]], sc.cdoc[sc.alive[live-1]]
	if c.doc < first {
		c.advance(first)
	}
	nh := c.scanMarked(last, cm.cb, cm.base, cm.hd, cm.ht)
	// Every live candidate's contribution is 0 but for the few found: zeros first, then the hits (a hit may be a candidate dropped before: its sums no longer
	// matter), then the keep pass.
	for _, idx := range sc.alive[:live] {
		sc.cm[int(idx)*nq+i] = 0
	}
	for h, d := range cm.hd[:nh] {
		idx := cm.idx[d-cm.base]
		v := w * tfNorm(float64(cm.ht[h]), kt[sc.cnrm[idx]]) // as maxScoreDAAT computes it
		sc.cm[int(idx)*nq+i] = v
		sc.cacc[idx] += v
	}
	return sc.keep(live, bound, theta)
}

// scanMarked moves a block cursor, which must stand on a posting at or after base, to its first posting
// at or after last, and records in hd and ht the documents and tfs of the postings on the way (its
// current one and that last one included) whose documents are marked in cb (bit d-base; last must be
// marked). It returns how many it recorded. Gaps are decoded in a row, and a tf only where the scan
// stops.
func (c *cursor) scanMarked(last uint32, cb []uint64, base uint32, hd, ht []uint32) int {
	n := 0
	for c.doc != noDoc {
		d := c.doc
		off := d - base
		if d >= last {
			if d == last {
				hd[n], ht[n] = d, c.tf
				n++
			}
			return n
		}
		if cb[off/64]>>(off%64)&1 != 0 {
			hd[n], ht[n] = d, c.tf
			n++
		}
		if c.i < c.m { // decoded already
			c.doc, c.tf = c.docs[c.i], c.tfs[c.i]
			c.i++
			continue
		}
		if c.m < c.n {
			// Decode gaps up to a marked document, one at or past last, or the block's end.
			data, bg := c.data, c.bg
			gmask := uint64(1)<<bg - 1
			m, dd := c.m, c.last
			gb := c.gapBit + m*int(bg)
			for m < c.n {
				dd += uint32(load64(data, gb>>3) >> (gb & 7) & gmask)
				c.docs[m] = dd
				gb += int(bg)
				m++
				if dd >= last {
					break
				}
				if o := dd - base; cb[o/64]>>(o%64)&1 != 0 {
					break
				}
			}
			tb := c.tfBit + (m-1)*int(c.bt)
			tf := uint32(load64(data, tb>>3)>>(tb&7)&(uint64(1)<<c.bt-1)) + 1
			c.tfs[m-1] = tf
			c.last, c.m, c.i = dd, m, m
			c.doc, c.tf = dd, tf
			continue
		}
		// The block is done: on to the first posting at or after the next marked document (there is
		// one: last is marked), skipping blocks without one.
		c.advance(base + nextMarked(cb, off+1))
	}
	return n
}

// nextMarked returns the first set bit of cb at or after from; there must be one.
func nextMarked(cb []uint64, from uint32) uint32 {
	wi := from / 64
	x := cb[wi] &^ (1<<(from%64) - 1)
	for x == 0 {
		wi++
		x = cb[wi]
	}
	return wi*64 + uint32(bits.TrailingZeros64(x))
}
