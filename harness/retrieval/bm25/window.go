package bm25

import (
	"encoding/binary"
	"math/bits"
	"sort"
	"sync"
)

// winDocs is the width, in documents, of the windows that maxScoreWindows scores at a time (a multiple
// of 64, at most 65,536). In-process A/B on 1M synthetic passages: 1,024 and 16,384 were slower than 4,096.
const (
	winDocs  = 4096
	winWords = winDocs / 64
)

// useWindows selects maxScoreWindows over the document-at-a-time maxScoreDAAT where both apply. A
// variable only so that tests and A/B runs can compare the two.
var useWindows = true

// pruneSlack pads the window scorer's running sums before they are compared with the threshold: they add
// the contributions in another order than the exact score (query order), so they may differ from it in
// the last bits. A document is dropped only when its padded bound is below the threshold.
const pruneSlack = 1 + 1e-9

// winScratch is the window scorer's working memory, recycled between searches.
type winScratch struct {
	acc   [winDocs]float64    // per window offset: the essential lists' contributions summed; zero outside use
	vals  []*[winDocs]float64 // per essential list (slot): its contribution at each offset it has
	mem   []*[winWords]uint64 // per essential list (slot): the offsets it has
	cdoc  [winDocs]uint32     // per candidate: the document
	cacc  [winDocs]float64    // per candidate: its bound so far (contributions found, in probe order)
	cnrm  [winDocs]uint8      // per candidate: its norm byte
	alive [winDocs]uint16     // the candidates still in the running
	cm    []float64           // per candidate and non-essential list (row-major): the list's contribution
}

var winPool = sync.Pool{New: func() any { return new(winScratch) }}

// reset sizes the scratch for nq lists.
func (sc *winScratch) reset(nq int) {
	for len(sc.vals) < nq {
		sc.vals = append(sc.vals, new([winDocs]float64))
		sc.mem = append(sc.mem, new([winWords]uint64))
	}
	if need := winDocs * nq; len(sc.cm) < need {
		sc.cm = make([]float64, need)
	}
}

// addList adds the postings of an essential list's cursor c below hi (in the window starting at lo) to
// the accumulator, and records them in slot's contributions and bitset; c is left on its first posting
// at or after hi.
func (sc *winScratch) addList(c *cursor, w float64, lo, hi uint32, slot int, norms []uint8, kt *[256]float64) {
	vals, mem := sc.vals[slot], sc.mem[slot]
	for c.doc < hi {
		d := c.doc
		off := (d - lo) % winDocs
		v := w * tfNorm(float64(c.tf), kt[norms[d]]) // as maxScoreDAAT computes it
		vals[off] = v
		sc.acc[off] += v
		bit := uint64(1) << (off % 64)
		mem[off/64] |= bit
		if c.i < c.m { // next, inlined
			c.doc, c.tf = c.docs[c.i], c.tfs[c.i]
			c.i++
		} else {
			c.nextSlow()
		}
	}
}

// addOnly is addList and collect for a window with one essential list (list j of nq): the list's
// postings below hi become the candidates directly, kept when their contribution plus bound reaches
// theta, with the contribution recorded in the candidate's row of cm. It returns the number of
// candidates.
func (sc *winScratch) addOnly(c *cursor, j, nq int, w float64, hi uint32, bound, theta float64, norms []uint8, kt *[256]float64) int {
	n := 0
	for c.doc < hi {
		d := c.doc
		nrm := norms[d]
		v := w * tfNorm(float64(c.tf), kt[nrm]) // as maxScoreDAAT computes it
		x := n % winDocs
		sc.cdoc[x], sc.cacc[x], sc.cnrm[x], sc.alive[x] = d, v, nrm, uint16(x)
		sc.cm[x*nq+j] = v
		n += int(b2u(v*pruneSlack+bound >= theta))
		if c.i < c.m { // next, inlined
			c.doc, c.tf = c.docs[c.i], c.tfs[c.i]
			c.i++
		} else {
			c.nextSlow()
		}
	}
	return n
}

// addTwo is addOnly for a window with two essential lists (j and j+1 of nq, weights wa and wb), whose
// postings below hi are merged into candidates in document order.
func (sc *winScratch) addTwo(a, b *cursor, j, nq int, wa, wb float64, hi uint32, bound, theta float64, norms []uint8, kt *[256]float64) int {
	n := 0
	for {
		d := min(a.doc, b.doc)
		if d >= hi {
			break
		}
		nrm := norms[d]
		k := kt[nrm]
		va, vb := 0.0, 0.0
		if a.doc == d {
			va = wa * tfNorm(float64(a.tf), k) // as maxScoreDAAT computes it
			if a.i < a.m {
				a.doc, a.tf = a.docs[a.i], a.tfs[a.i]
				a.i++
			} else {
				a.nextSlow()
			}
		}
		if b.doc == d {
			vb = wb * tfNorm(float64(b.tf), k)
			if b.i < b.m {
				b.doc, b.tf = b.docs[b.i], b.tfs[b.i]
				b.i++
			} else {
				b.nextSlow()
			}
		}
		x := n % winDocs
		acc := va + vb
		sc.cdoc[x], sc.cacc[x], sc.cnrm[x], sc.alive[x] = d, acc, nrm, uint16(x)
		row := sc.cm[x*nq+j : x*nq+j+2]
		row[0], row[1] = va, vb
		n += int(b2u(acc*pruneSlack+bound >= theta))
	}
	return n
}

// collect turns the documents touched in the window starting at lo by the first ness essential lists
// (the union of their bitsets) into candidates, keeping those whose sum plus bound reaches theta, and
// clears the accumulator. It returns the number of candidates (numbered 0 to n-1 in document order, all
// alive). A word's bits are taken without branches, collectUnrolled at a time (most words have one to
// three), since the number of bits per word is what a branch would mispredict. (OR-ing the lists'
// bitsets here was 5% faster in-process than a union bitset kept by addList.)
func (sc *winScratch) collect(lo uint32, ness int, bound, theta float64, norms []uint8) int {
	n := 0
	mems := sc.mem[:ness]
	for wi := range winWords {
		var u uint64
		for _, m := range mems {
			u |= m[wi]
		}
		for {
			for range collectUnrolled {
				// With u == 0, off is bit 0 of the next word (or of this window, past the last word): its
				// accumulator is left as it is and no candidate is added.
				valid := b2u(u != 0)
				off := (wi*64 + bits.TrailingZeros64(u)) % winDocs
				u &= u - 1
				a := sc.acc[off]
				sc.acc[off] = a * float64(1-valid)
				x := n % winDocs
				sc.cdoc[x], sc.cacc[x], sc.alive[x] = lo+uint32(off), a, uint16(x)
				n += int(valid & b2u(a*pruneSlack+bound >= theta))
			}
			if u == 0 {
				break
			}
		}
	}
	for x := range sc.cdoc[:n] {
		sc.cnrm[x] = norms[sc.cdoc[x]]
	}
	return n
}

// collectUnrolled is how many bits collect takes from a word before testing whether any are left.
const collectUnrolled = 2

// b2u is 1 for true and 0 for false.
func b2u(b bool) uint {
	if b {
		return 1
	}
	return 0
}

// probeOnes probes the tf = 1 bitmap of c (list i of nq, weight w) for the first live alive candidates,
// records the contributions, and keeps those whose sum plus bound reaches theta. It returns how many it
// kept (at the front of alive).
func (sc *winScratch) probeOnes(c *cursor, i, nq, live int, w float64, t1 *[256]float64, bound, theta float64) int {
	m := 0
	bm := c.bits
	for _, idx := range sc.alive[:live] {
		d := sc.cdoc[idx%winDocs]
		bit := binary.LittleEndian.Uint64(bm[8*(d/64):]) >> (d % 64) & 1
		v := w * t1[sc.cnrm[idx%winDocs]] * float64(bit) // w * tfNorm(1, K) as maxScoreDAAT computes it, or 0
		sc.cm[int(idx)*nq+i] = v
		a := sc.cacc[idx%winDocs] + v
		sc.cacc[idx%winDocs] = a
		sc.alive[m%winDocs] = idx
		if a*pruneSlack+bound >= theta {
			m++
		}
	}
	return m
}

// probeDense is probeOnes for a tf >= 2 bitmap.
func (sc *winScratch) probeDense(c *cursor, i, nq, live int, w float64, kt *[256]float64, bound, theta float64) int {
	m := 0
	for _, idx := range sc.alive[:live] {
		d := sc.cdoc[idx%winDocs]
		v := 0.0
		if c.word(int(d/64))>>(d%64)&1 != 0 {
			v = w * tfNorm(float64(c.tfAt(c.rankBefore(d))), kt[sc.cnrm[idx%winDocs]])
		}
		sc.cm[int(idx)*nq+i] = v
		a := sc.cacc[idx%winDocs] + v
		sc.cacc[idx%winDocs] = a
		sc.alive[m%winDocs] = idx
		if a*pruneSlack+bound >= theta {
			m++
		}
	}
	return m
}

// probeBlocks is probeOnes for a block-encoded list, whose cursor moves forward to each candidate.
func (sc *winScratch) probeBlocks(c *cursor, i, nq, live int, w float64, kt *[256]float64, bound, theta float64) int {
	m := 0
	for _, idx := range sc.alive[:live] {
		d := sc.cdoc[idx%winDocs]
		if c.doc < d {
			c.advance(d)
		}
		v := 0.0
		if c.doc == d {
			v = w * tfNorm(float64(c.tf), kt[sc.cnrm[idx%winDocs]])
		}
		sc.cm[int(idx)*nq+i] = v
		a := sc.cacc[idx%winDocs] + v
		sc.cacc[idx%winDocs] = a
		sc.alive[m%winDocs] = idx
		if a*pruneSlack+bound >= theta {
			m++
		}
	}
	return m
}

// maxScore returns the top k documents of the query lists qts from the threshold theta0 (see
// maxScoreDAAT for the contract): with the window scorer unless exact lengths are asked for.
func (ix *Index) maxScore(qts []*queryTerm, k int, theta0 float64) []ScoredDoc {
	if useWindows && !ix.params.ExactLength {
		return ix.maxScoreWindows(qts, k, theta0)
	}
	return ix.maxScoreDAAT(qts, k, theta0)
}

// maxScoreWindows is MaxScore evaluated a window of windowDocs documents at a time, the idea of Lucene's
// MaxScoreBulkScorer: per window, the essential lists are added term at a time into an accumulator with
// a bitset of the documents they touched; the touched documents whose sum plus the non-essential lists'
// bound can reach the threshold become candidates; the non-essential lists are then probed list by list
// (largest bound first) for all remaining candidates at once, dropping those that can no longer reach the
// threshold after each list; the survivors are scored exactly, their contributions summed in query
// order as maxScoreDAAT does, so the results are the same bit for bit. The passes over candidates are
// short loops without the per-candidate branching between lists that the document-at-a-time loop has.
// The threshold rises between windows and inside the last pass; the essential lists are chosen again
// at each window. Exact lengths are not supported (maxScore uses maxScoreDAAT for them).
func (ix *Index) maxScoreWindows(qts []*queryTerm, k int, theta0 float64) []ScoredDoc {
	nq := len(qts)
	sort.SliceStable(qts, func(i, j int) bool { return qts[i].ub < qts[j].ub })
	prefix := make([]float64, nq+1)
	npos := qts[0].pos + 1
	for _, q := range qts {
		npos = max(npos, q.pos+1)
	}
	termMax := make([]float64, npos)
	for i, q := range qts {
		prefix[i+1] = prefix[i] + max(0, q.ub-termMax[q.pos])
		termMax[q.pos] = max(termMax[q.pos], q.ub)
	}
	contrib := termMax // reused: per query position, for the exact sum
	sc := winPool.Get().(*winScratch)
	defer winPool.Put(sc)
	sc.reset(nq)
	norms, kt, t1 := ix.norms, &ix.k, &ix.k1
	h := topK{k: k, h: make([]ScoredDoc, 0, min(k, 256))}
	theta := theta0
	for _, q := range qts {
		q.cur.next()
	}
	ess := 0
	for {
		for ess < nq && prefix[ess+1] < theta {
			ess++
		}
		lo := uint32(noDoc)
		for _, q := range qts[ess:] {
			lo = min(lo, q.cur.doc)
		}
		if lo == noDoc {
			break
		}
		lo &^= 63
		hi := uint32(min(uint64(lo)+winDocs, noDoc))
		// The essential lists, term at a time; then the candidates among the documents they touched.
		var live int
		rows := ess >= nq-2 // cm holds every list's contribution
		if ess == nq-1 {
			live = sc.addOnly(&qts[ess].cur, ess, nq, qts[ess].weight, hi, prefix[ess], theta, norms, kt)
		} else if rows {
			live = sc.addTwo(&qts[ess].cur, &qts[ess+1].cur, ess, nq, qts[ess].weight, qts[ess+1].weight, hi, prefix[ess], theta, norms, kt)
		} else {
			for j := ess; j < nq; j++ {
				sc.addList(&qts[j].cur, qts[j].weight, lo, hi, j-ess, norms, kt)
			}
			live = sc.collect(lo, nq-ess, prefix[ess], theta, norms)
		}
		// The non-essential lists, largest bound first, each probed for every remaining candidate.
		for i := ess - 1; i >= 0 && live > 0; i-- {
			q := qts[i]
			switch c := &q.cur; {
			case c.dense && c.ones:
				live = sc.probeOnes(c, i, nq, live, q.weight, t1, prefix[i], theta)
			case c.dense:
				live = sc.probeDense(c, i, nq, live, q.weight, kt, prefix[i], theta)
			default:
				live = sc.probeBlocks(c, i, nq, live, q.weight, kt, prefix[i], theta)
			}
		}
		// The survivors, scored exactly: contributions by query position, summed in query order.
		for _, idx := range sc.alive[:live] {
			d := sc.cdoc[idx]
			off := d - lo
			clear(contrib)
			row := sc.cm[int(idx)*nq:]
			if rows {
				for i, q := range qts {
					contrib[q.pos] += row[i] // at most one list of a term has the document: v + 0 is v
				}
			} else {
				for i, q := range qts[:ess] {
					contrib[q.pos] += row[i]
				}
				for j := ess; j < nq; j++ {
					if sc.mem[j-ess][off/64]>>(off%64)&1 != 0 {
						contrib[qts[j].pos] += sc.vals[j-ess][off]
					}
				}
			}
			s := 0.0
			for _, v := range contrib {
				s += v
			}
			if s >= theta || h.len() < k {
				h.push(ScoredDoc{Doc: d, Score: s})
				if h.len() == k && h.min().Score > theta {
					theta = h.min().Score
				}
			}
		}
		if !rows {
			for j := ess; j < nq; j++ {
				clear(sc.mem[j-ess][:])
			}
		}
	}
	return h.sorted()
}
