package bm25

import (
	"encoding/binary"
	"math/bits"
)

// taatMinLists is the smallest number of essential lists for which maxScoreBatches merges a window term
// at a time (gatherTAAT) instead of document at a time (gather); 0 turns it off. A variable only so
// that tests can run both merges on the same queries.
var taatMinLists = 3

// taatMaxLists is the largest number of essential lists gatherTAAT takes (its per-list scratch is
// windowDocs values per list); more go to gather.
const taatMaxLists = 16

// taatBoundBias scales the bound gatherTAAT prunes with: 1, except in the test that checks that a
// bound too low is caught.
var taatBoundBias = 1.0

// taatWindow is the state of a window that gatherTAAT has accumulated but not yet handed out in full.
type taatWindow struct {
	pending bool                 // a window is accumulated and its scan is not finished
	lo      uint32               // the window's first document
	wi      int                  // the next word of union to scan (its bits not yet scanned are left in it)
	acc     []float64            // per offset: the sum of the essential lists' contributions, in list order
	mask    []uint16             // per offset: the essential lists that have the document (bit j: list ess+j)
	val     []float64            // per essential list and offset: the list's contribution (valid where mask says)
	union   []uint64             // the offsets where any essential list has a posting, cleared as they are scanned
	cmask   []uint16             // per candidate: its mask
	sel     [windowCands]uint16  // scanWords's scratch: the offsets of the kept documents (a scanned one is written at the next place, kept or not)
	selA    [windowCands]float64 // and their sums
	selM    [windowCands]uint16  // and their masks
	ones    uint64               // scanWords's planes of the union word it scans (pp.at)
	twos    uint64
}

// gatherTAAT is gather for several essential lists (at most taatMaxLists): the window of width
// documents that starts at the bitmap word (64 documents) of the first of their current documents is
// accumulated list by list (each list's postings added to a per-document sum, in list order as gather
// adds them, so the sums are the same bit for bit), then its documents are scanned in order (scan.go)
// and those whose sum plus the presence planes' bound of the non-essential lists (planes.go; at most
// bound, what they can add to any document) reaches theta become candidates (without rows of
// contributions: contrib has them), at most windowCands per
// call: a window with more is handed out over several calls (pending), during which the caller must keep
// ess as it was when the window was accumulated. The per-list loops have no branch on which list holds
// the next document, which gather's merge mispredicts. A block list's postings are decoded straight
// into the window (addBlocks).
func (sc *batchScratch) gatherTAAT(qts []*queryTerm, ess, width int, bound, theta float64, norms []uint8, kt, t1 *[256]float64, tab *tfTable) (int, bool) {
	tw := &sc.taat
	nw := (width + 63) / 64
	if !tw.pending {
		d := uint32(noDoc)
		for _, q := range qts[ess:] {
			d = min(d, q.cur.doc)
		}
		if d == noDoc {
			return 0, true
		}
		if width >= 64 {
			d &^= 63 // the window's words are the bitmaps' words (presencePlanes.at reads one word each)
		}
		ne := len(qts) - ess
		if len(tw.acc) < width {
			tw.acc, tw.mask, tw.union = make([]float64, width), make([]uint16, width), make([]uint64, nw)
		}
		if len(tw.val) < ne*width {
			tw.val = make([]float64, ne*width)
		}
		if len(tw.cmask) < windowCands {
			tw.cmask = make([]uint16, windowCands)
		}
		hi := uint32(min(uint64(d)+uint64(width), noDoc))
		// Pending from here on: a corrupt index can panic in the middle of the accumulation (Search
		// recovers), and the next search with this scratch must then clear the partial window.
		tw.pending = true
		acc, mask, u := tw.acc[:width], tw.mask[:width], tw.union[:nw]
		for j, q := range qts[ess:] {
			c := &q.cur
			w := q.weight
			val := tw.val[j*width : j*width+width]
			bit := uint16(1) << j
			if c.dense && c.ones {
				tw.addDenseOnes(c, d, hi, w, bit, val, norms, t1)
				continue
			}
			if !c.dense {
				tw.addBlocks(c, d, hi, w, bit, val, norms, kt, tab)
				continue
			}
			if c.tmin <= 1 {
				tw.addDenseTf2(c, d, hi, w, bit, val, norms, kt, tab)
				continue
			}
			// A tf >= 2 bitmap with a tf floor (tfmin.go): next skips the postings below it.
			for c.doc < hi {
				off := c.doc - d
				v := w * tfNorm(float64(c.tf), kt[norms[c.doc]]) // as maxScoreDAAT computes it
				addTo(acc, val, mask, u, off, v, bit)
				c.next()
			}
		}
		tw.lo, tw.wi = d, 0
		sc.pp.set(qts[:ess], bound, taatBoundBias)
	}
	return sc.scanWords(norms, theta, nw), false
}

// addBlocks adds the postings of the block list c below hi to the window that starts at lo (as
// gatherTAAT's loop over a cursor does: weight w, list bit bit, contributions val), decoding the
// bit-packed gaps and tfs of the blocks straight into the window's arrays rather than into the cursor's
// and back. The cursor ends on its first posting at or after hi (or at the end), in the state next
// would leave it in.
func (tw *taatWindow) addBlocks(c *cursor, lo, hi uint32, w float64, bit uint16, val []float64, norms []uint8, kt *[256]float64, tab *tfTable) {
	acc, mask, u := tw.acc[:len(val)], tw.mask[:len(val)], tw.union
	if c.doc >= hi {
		return
	}
	tw.add(c.doc-lo, c.tf, norms[c.doc], w, bit, val, kt, tab)
	for {
		// The cursor's decoded postings below hi.
		if c.i < c.m {
			i, m := c.i, c.m
			for ; i < m; i++ {
				d, t := c.docs[uint(i)%blockSize], c.tfs[uint(i)%blockSize]
				if d >= hi {
					c.i, c.doc, c.tf = i+1, d, t
					return
				}
				off := d - lo
				v := tab.factor(t, norms[d], kt) * w // as in add
				addTo(acc, val, mask, u, off, v, bit)
			}
			c.i, c.doc, c.tf = m, c.docs[uint(m-1)%blockSize], c.tfs[uint(m-1)%blockSize]
		}
		// The rest of the block (or the next block), decoded straight into the window.
		if c.m == c.n {
			if c.block+1 >= c.nb {
				c.doc = noDoc
				return
			}
			c.enter(c.block + 1)
		}
		data, bg, bt := c.data, c.bg, c.bt
		m, n := c.m, c.n
		gb, tb := c.gapBit+m*int(bg), c.tfBit+m*int(bt)
		if (gb+(n-m)*int(bg))>>3+8 > len(data) || (tb+(n-m)*int(bt))>>3+8 > len(data) {
			c.decode(n, 0) // near the end of the postings: by the tested loads, then from the arrays
			continue
		}
		if c.lastDoc(c.block) >= hi {
			// The block reaches past the window: decode the rest of it into the cursor's arrays (as next
			// does), a tight loop, then add those below hi from there (the loop above), another.
			c.decode(n, 0)
			continue
		}
		gmask, tmask := uint64(1)<<bg-1, uint64(1)<<bt-1
		d, t := c.last, uint32(1)
		// The whole rest of the block is in the window: no test per posting.
		if bt == 0 { // all tfs 1
			for ; m < n; m++ {
				d += uint32(binary.LittleEndian.Uint64(data[gb>>3:]) >> (gb & 7) & gmask)
				gb += int(bg)
				off := d - lo
				v := w * tab[norms[d]] // as in add (tf 1)
				addTo(acc, val, mask, u, off, v, bit)
			}
		} else {
			for ; m < n; m++ {
				d += uint32(binary.LittleEndian.Uint64(data[gb>>3:]) >> (gb & 7) & gmask)
				t = uint32(binary.LittleEndian.Uint64(data[tb>>3:])>>(tb&7)&tmask) + 1
				gb += int(bg)
				tb += int(bt)
				off := d - lo
				v := tab.factor(t, norms[d], kt) * w // as in add
				addTo(acc, val, mask, u, off, v, bit)
			}
		}
		// The block is done and its last posting added: the cursor stands on it, as next leaves it.
		c.last, c.m, c.i = d, n, n
		c.doc, c.tf = d, t
	}
}

// addDenseTf2 adds the postings of the tf >= 2 bitmap list c (no tf floor: c.tmin <= 1) below hi to the
// window that starts at lo, as gatherTAAT's loop over a cursor does (weight w, list bit bit,
// contributions val): the bitmap's set bits in order with the posting number carried along, each tf
// read from the nibbles (an escape from the table), its factor from tab. The cursor ends on its first
// posting at or after hi (or at the end) in the state nextDense would leave it in.
func (tw *taatWindow) addDenseTf2(c *cursor, lo, hi uint32, w float64, bit uint16, val []float64, norms []uint8, kt *[256]float64, tab *tfTable) {
	doc := c.doc
	if doc >= hi {
		return
	}
	acc, mask, u := tw.acc[:len(val)], tw.mask[:len(val)], tw.union
	nib, bm := c.nib, c.bits
	wi, x, r, t := c.wi, c.w, c.rank, c.tf
	for {
		off := doc - lo
		v := tab.factor(t, norms[doc], kt) * w // as in add
		addTo(acc, val, mask, u, off, v, bit)
		for x == 0 { // as nextDense
			wi++
			if wi >= c.words {
				// At the end: doc, tf, rank and block stay those of the last posting, as nextDense leaves them.
				c.wi, c.w, c.rank, c.tf = c.words, 0, r, t
				c.block = int(doc / denseWindow)
				c.doc = noDoc
				return
			}
			x = binary.LittleEndian.Uint64(bm[8*wi:])
		}
		doc = uint32(wi*64 + bits.TrailingZeros64(x))
		x &= x - 1
		r++
		if n := uint32(nib[r>>1]>>(4*(r&1))) & 15; n != 0 {
			t = n
		} else {
			t = c.tfAt(r) // an escape
		}
		if doc >= hi {
			break
		}
	}
	c.wi, c.w, c.rank, c.doc, c.tf = wi, x, r, doc, t
	c.block = int(doc / denseWindow)
}

// addDenseOnes adds the postings of the tf = 1 bitmap list c below hi to the window that starts at lo,
// as gatherTAAT's loop over a cursor does (weight w, list bit bit, contributions val, factors from t1,
// the table of tfNorm(1, K)), with the step to the next bitmap word inline too. The cursor ends on its
// first posting at or after hi (or at the end) in the state nextDense would leave it in.
func (tw *taatWindow) addDenseOnes(c *cursor, lo, hi uint32, w float64, bit uint16, val []float64, norms []uint8, t1 *[256]float64) {
	doc := c.doc
	if doc >= hi {
		return
	}
	acc, mask, u := tw.acc[:len(val)], tw.mask[:len(val)], tw.union
	bm := c.bits
	wi, x := c.wi, c.w
	for {
		off := doc - lo
		v := w * t1[norms[doc]] // as probeOnes computes it
		addTo(acc, val, mask, u, off, v, bit)
		for x == 0 { // as nextDense
			wi++
			if wi >= c.words {
				// At the end: block stays that of the last posting, as nextDense leaves it.
				c.wi, c.w = c.words, 0
				c.block = int(doc / denseWindow)
				c.doc = noDoc
				return
			}
			x = binary.LittleEndian.Uint64(bm[8*wi:])
		}
		doc = uint32(wi*64 + bits.TrailingZeros64(x))
		x &= x - 1
		if doc >= hi {
			break
		}
	}
	c.wi, c.w, c.doc = wi, x, doc
	c.block = int(doc / denseWindow)
}

// add adds a posting of tf t at offset off of the window, of a document of norm byte nrm, for the list
// of weight w, bit bit and contributions val.
func (tw *taatWindow) add(off, t uint32, nrm uint8, w float64, bit uint16, val []float64, kt *[256]float64, tab *tfTable) {
	addTo(tw.acc, val, tw.mask, tw.union, off, tab.factor(t, nrm, kt)*w, bit)
}

// addTo records the contribution v, at offset off of a window, of the list of bit bit and contributions
// val: into the sum acc, val, the mask and the union. The arrays are arguments, not read from the
// taatWindow, so that a hot loop that calls it (inlined) keeps them in registers.
func addTo(acc, val []float64, mask []uint16, u []uint64, off uint32, v float64, bit uint16) {
	acc[off] += v
	val[off] = v
	mask[off] |= bit
	u[off/64] |= 1 << (off % 64)
}

// tfTabMax is the largest tf whose factors a tfTable holds.
const tfTabMax = 4

// tfTable holds, at (tf-1)*256 + norm byte, tfNorm(tf, K[norm]) for tf 1 to tfTabMax: the same values
// as tfNorm computes (so w times one is the same bit for bit as maxScoreDAAT's w * tfNorm), without its
// division nor a branch on tf 1.
type tfTable [tfTabMax * 256]float64

// factor returns tfNorm(t, kt[nrm]) for a tf t >= 1, from the table where it has it; the table must be
// built from kt.
func (tab *tfTable) factor(t uint32, nrm uint8, kt *[256]float64) float64 {
	if t > tfTabMax {
		return tfNorm(float64(t), kt[nrm])
	}
	return tab[((t-1)<<8|uint32(nrm))%(tfTabMax*256)]
}

// ones returns the table's first row: tfNorm(1, K) per norm byte, a tf = 1 posting's factor.
func (tab *tfTable) ones() *[256]float64 { return (*[256]float64)(tab[:256]) }

// build fills the table for the norm table kt.
func (tab *tfTable) build(kt *[256]float64) {
	for t := 1; t <= tfTabMax; t++ {
		for n, k := range kt {
			tab[(t-1)*256+n] = tfNorm(float64(t), k)
		}
	}
}

// contrib returns essential list j's contribution to candidate idx of the window last accumulated (0
// when the list does not have it).
func (sc *batchScratch) contrib(j, width int, idx uint16) float64 {
	if sc.taat.cmask[idx]>>j&1 == 0 {
		return 0
	}
	return sc.taat.val[j*width+int(sc.cdoc[idx]-sc.taat.lo)]
}
