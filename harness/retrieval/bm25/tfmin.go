package bm25

import "math/bits"

// The tf floor of an essential tf >= 2 bitmap list.
//
// A document with tf t in list i of term T scores at most w_i * t/(t + K_min) from T, where K_min is the
// norm table's value at the list's smallest norm byte (K grows with the length), plus, from every other
// term, at most the largest bound of that term's lists (a document is in one list of a term only). When
// that sum stays below the threshold for every t below some t_min, no document of list i with a tf below
// t_min can reach the top k, whatever other lists it is in: such documents need not become candidates
// through list i. The batch scorer sets t_min per window (the threshold rises) on every essential
// tf >= 2 bitmap list, and the cursor then steps only to postings whose tf nibble is at least t_min,
// found 16 at a time in the nibble array, without touching the bitmap or the norms of the others.
//
// A skipped document can still turn up as a candidate of another essential list; its contribution from
// list i is then missing, so its sum is below its true score, which is below the threshold: it cannot
// enter the final top k, because the threshold is the k-th score of k real documents that all reach it
// and are found with their exact scores (none of them is skipped: each of them reaches the bound above).

const (
	nibLo  = 0x0F0F0F0F0F0F0F0F // the low nibble of each byte
	nibOne = 0x0101010101010101
	nibB4  = 0x1010101010101010 // bit 4 of each byte
)

// nibblesAtLeast returns, for the 16 tf nibbles packed in v (low nibble first: rank 2j is the low nibble
// of byte j, rank 2j+1 its high nibble), a mask with bit 8j set when rank 2j passes and bit 8j+1 when
// rank 2j+1 passes; a nibble passes when it is at least t (2 <= t <= 16) or 0 (an escape, tf > 15).
func nibblesAtLeast(v uint64, t uint32) uint64 {
	add := uint64(16-t) * nibOne // x + (16 - t) has bit 4 set iff x >= t (x <= 15, so no carry out of a byte)
	lo, hi := v&nibLo, v>>4&nibLo
	pl := (lo + add | ^(lo + nibLo)) & nibB4 // ^(x + 15) has bit 4 set iff x == 0
	ph := (hi + add | ^(hi + nibLo)) & nibB4
	return pl>>4 | ph>>3
}

// nextTfAtLeast returns the first posting number r' >= r of a tf >= 2 bitmap list whose tf is at least t
// (2 <= t <= 16: nibble at least t, or an escape), or df when there is none.
func (c *cursor) nextTfAtLeast(r int, t uint32) int {
	n, nib := c.df, c.nib
	for r < n {
		b := r >> 1
		var v uint64
		if b+8 <= len(nib) {
			v = uint64(nib[b]) | uint64(nib[b+1])<<8 | uint64(nib[b+2])<<16 | uint64(nib[b+3])<<24 |
				uint64(nib[b+4])<<32 | uint64(nib[b+5])<<40 | uint64(nib[b+6])<<48 | uint64(nib[b+7])<<56
		} else {
			v = load64(nib, b) // zeros past the end read as escapes: cut off by the check against n
		}
		if m := nibblesAtLeast(v, t) &^ uint64(r&1); m != 0 {
			p := bits.TrailingZeros64(m)
			return min(2*b+p>>3<<1+p&7, n)
		}
		r = 2*b + 16
	}
	return n
}

// seekRank moves a tf >= 2 bitmap cursor forward to its posting number r (r > c.rank, r < df).
func (c *cursor) seekRank(r int) {
	skip := r - c.rank - 1
	if c.wi >= 0 && c.wi < c.words {
		if pc := bits.OnesCount64(c.w); skip < pc {
			// Within the current word: drop skip set bits.
			w := c.w
			for ; skip > 0; skip-- {
				w &= w - 1
			}
			c.setAt(c.wi, w, r)
			return
		}
	}
	// Past the current word: find the directory window holding posting r, then the word.
	wpd := denseWindow / 64
	first := c.wi + 1 // the first word not yet passed
	rk := c.rank + 1 + bits.OnesCount64(c.w)
	if c.wi < 0 {
		first, rk = 0, 0
	}
	e := first / wpd
	for e+1 < c.nb && c.dirRank(e+1) <= r {
		e++
	}
	j := first
	if e*wpd > first {
		j, rk = e*wpd, c.dirRank(e)
	}
	w := c.word(j)
	for pc := bits.OnesCount64(w); rk+pc <= r; pc = bits.OnesCount64(w) {
		rk += pc
		j++
		w = c.word(j)
	}
	for skip = r - rk; skip > 0; skip-- {
		w &= w - 1
	}
	c.setAt(j, w, r)
}

// dirRank is the number of postings before directory window e of a tf >= 2 bitmap list.
func (c *cursor) dirRank(e int) int {
	d := c.dir[dirEntrySize*e:]
	return int(uint32(d[0]) | uint32(d[1])<<8 | uint32(d[2])<<16 | uint32(d[3])<<24)
}

// setAt puts a tf >= 2 bitmap cursor on the lowest set bit of w, posting number r, in word wi.
func (c *cursor) setAt(wi int, w uint64, r int) {
	c.wi = wi
	c.doc = uint32(wi*64 + bits.TrailingZeros64(w))
	c.w = w & (w - 1)
	c.rank = r
	c.tf = c.tfAt(r)
	c.block = int(c.doc / denseWindow)
}

// nextDenseMin is nextDense for a tf >= 2 bitmap cursor with a tf floor (c.tmin >= 2).
func (c *cursor) nextDenseMin() {
	r := c.nextTfAtLeast(c.rank+1, c.tmin)
	if r >= c.df {
		c.wi, c.w, c.doc = c.words, 0, noDoc
		return
	}
	c.seekRank(r)
}

// tfFloor returns the smallest tf (2 to 16; 16 stands for the escapes, tf > 15) that a document of a
// tf >= 2 bitmap list with weight w and smallest norm table value kmin needs to reach theta when every
// other term adds at most others; 1 or less when no floor applies.
func tfFloor(w, kmin, others, theta float64) uint32 {
	w *= tfFloorBias
	if w*tfNorm(2, kmin)+others*pruneSlack >= theta/pruneSlack {
		return 1
	}
	t := uint32(3)
	for ; t < 16; t++ {
		if w*tfNorm(float64(t), kmin)+others*pruneSlack >= theta/pruneSlack {
			break
		}
	}
	return t
}

// tfFloorBias scales the bound tfFloor uses; 1 except in the mutation test, which lowers it to check that
// the property tests catch a floor that is too high.
var tfFloorBias = 1.0
