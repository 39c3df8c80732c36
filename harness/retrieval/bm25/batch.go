package bm25

import (
	"encoding/binary"
	"math"
	"sync"
)

// windowDocs is the width of the document windows whose candidates maxScoreBatches gathers before it
// probes the non-essential lists for them (at most 65,536). A variable only so that tests can make
// windows small.
var windowDocs = 8192

// windowCands caps the candidates a window keeps (the window ends early at that many), so that the
// scratch stays small: a window's candidate arrays and contribution rows take windowCands * (15 + 8 *
// lists) bytes. At most 65,536.
const windowCands = 512

// tfFloorOthers returns, per list of qts, the sum over the other terms (query positions) of the largest
// bound among each term's lists; nil when no list of qts is a tf >= 2 bitmap.
func tfFloorOthers(qts []*queryTerm, npos int) []float64 {
	any := false
	for _, q := range qts {
		any = any || q.cur.dense && !q.cur.ones
	}
	if !any {
		return nil
	}
	var tmBuf [16]float64
	termMax := zeroed(&tmBuf, npos)
	for _, q := range qts {
		termMax[q.pos] = max(termMax[q.pos], q.ub)
	}
	others := make([]float64, len(qts))
	for i, q := range qts {
		for p, v := range termMax {
			if p != q.pos {
				others[i] += v
			}
		}
	}
	return others
}

// pruneSlack pads the batch scorer's running sums before they are compared with the threshold: they add
// the contributions in another order than the exact score (query order), so they may differ from it in
// the last bits. A document is dropped only when its padded bound is below the threshold.
const pruneSlack = 1 + 1e-9

// batchScratch is the batch scorer's working memory, recycled between searches.
type batchScratch struct {
	cdoc  []uint32       // per candidate: the document
	cacc  []float64      // per candidate: its bound so far (contributions found, in probe order)
	cnrm  []uint8        // per candidate: its norm byte
	alive []uint16       // the candidates still in the running
	cm    []float64      // per candidate and list (row-major, nq per row): the list's contribution
	taat  taatWindow     // gatherTAAT's window
	marks candMarks      // probeBlocksScan's marks of the window's candidates
	pp    presencePlanes // the window's bound of the non-essential lists per document
}

var batchPool = sync.Pool{New: func() any { return new(batchScratch) }}

// reset sizes the scratch for b candidates over nq lists.
func (sc *batchScratch) reset(b, nq int) {
	if len(sc.cdoc) != b {
		sc.cdoc, sc.cacc, sc.cnrm, sc.alive = make([]uint32, b), make([]float64, b), make([]uint8, b), make([]uint16, b)
	}
	if need := b * nq; len(sc.cm) < need {
		sc.cm = make([]float64, need)
	}
}

// gather merges the essential lists qts[ess:] (document at a time, cursors on their current postings)
// into the candidates of the window of width documents that starts at the first of them (ending early
// when windowCands candidates are kept): a candidate's
// contributions go to its row of cm, and it is kept when their sum plus the presence planes' bound of
// what the non-essential lists can add to it (planes.go; at most bound, what they can add to any
// document) reaches theta. It returns the number kept (numbered 0 to n-1 in document order, all
// alive), and whether the lists have ended.
func (sc *batchScratch) gather(qts []*queryTerm, ess, width int, bound, theta float64, norms []uint8, kt *[256]float64) (int, bool) {
	nq := len(qts)
	var edocBuf [64]uint32 // the essential lists' current documents, read without their cursors
	var edocs []uint32
	if nq-ess <= len(edocBuf) {
		edocs = edocBuf[:nq-ess]
	} else {
		edocs = make([]uint32, nq-ess)
	}
	d := uint32(noDoc)
	for j := range edocs {
		edocs[j] = qts[ess+j].cur.doc
		d = min(d, edocs[j])
	}
	if d == noDoc {
		return 0, true
	}
	cdoc, cacc, cnrm, alive, cm := sc.cdoc[:windowCands], sc.cacc[:windowCands], sc.cnrm[:windowCands], sc.alive[:windowCands], sc.cm
	hi := uint32(min(uint64(d)+uint64(width), noDoc))
	pp := &sc.pp
	pp.set(qts[:ess], bound, 1)
	g := d / 64
	ones, twos := pp.word(g)
	n := 0
	for d < hi && n < windowCands {
		nrm := norms[d]
		k := kt[nrm]
		row := cm[n*nq : n*nq+nq]
		acc := 0.0
		next := uint32(noDoc)
		for j, e := range edocs {
			v := 0.0
			if e == d {
				q := qts[ess+j]
				c := &q.cur
				v = q.weight * tfNorm(float64(c.tf), k) // as maxScoreDAAT computes it
				if c.i < c.m {                          // next, inlined
					c.doc, c.tf = c.docs[c.i], c.tfs[c.i]
					c.i++
				} else if !c.nextInWord() {
					c.nextSlow()
				}
				e = c.doc
				edocs[j] = e
			}
			next = min(next, e)
			row[ess+j] = v
			acc += v
		}
		cdoc[n], cacc[n], cnrm[n], alive[n] = d, acc, nrm, uint16(n)
		if d/64 != g {
			g = d / 64
			ones, twos = pp.word(g)
		}
		n += int(b2u(acc*pruneSlack+pp.bound(ones, twos, d) >= theta))
		d = next
	}
	return n, false
}

// b2u is 1 for true and 0 for false.
func b2u(b bool) uint {
	if b {
		return 1
	}
	return 0
}

// probeOnes probes the tf = 1 bitmap of c (weight w) for the first live alive candidates, adds the
// contributions to their sums, and keeps those whose sum plus bound reaches theta. It returns how many it
// kept (at the front of alive). The contributions are not recorded in the rows: the few survivors get
// them again from bitmapContrib.
func (sc *batchScratch) probeOnes(c *cursor, live int, w float64, t1 *[256]float64, bound, theta float64) int {
	bm := c.bits
	for _, idx := range sc.alive[:live] {
		sc.cacc[idx] += onesContrib(bm, sc.cdoc[idx], sc.cnrm[idx], w, t1)
	}
	return sc.keep(live, bound, theta)
}

// bitmapContrib returns the contribution of the bitmap list c (weight w) to document d of norm byte nrm,
// as probeOnes and probeDense compute it (so bit for bit their values).
func bitmapContrib(c *cursor, d uint32, nrm uint8, w float64, kt, t1 *[256]float64) float64 {
	if c.ones {
		return onesContrib(c.bits, d, nrm, w, t1)
	}
	return denseContrib(c, d, nrm, w, kt)
}

// onesContrib returns the contribution of the tf = 1 bitmap bm (weight w) to document d of norm byte nrm:
// w * tfNorm(1, K) as maxScoreDAAT computes it (t1 holds tfNorm(1, K) per norm byte), or 0, without a
// branch.
func onesContrib(bm []byte, d uint32, nrm uint8, w float64, t1 *[256]float64) float64 {
	bit := binary.LittleEndian.Uint64(bm[8*(d/64):]) >> (d % 64) & 1
	return w * t1[nrm] * float64(bit)
}

// denseContrib returns the contribution of the tf >= 2 bitmap list c (weight w) to document d of norm
// byte nrm: w * tfNorm(tf, K) as maxScoreDAAT computes it, or 0.
func denseContrib(c *cursor, d uint32, nrm uint8, w float64, kt *[256]float64) float64 {
	if c.word(int(d/64))>>(d%64)&1 == 0 {
		return 0
	}
	return w * tfNorm(float64(c.tfAt(c.rankBefore(d))), kt[nrm])
}

// keep moves the first live alive candidates whose sum plus bound reaches theta to the front of alive,
// in order, and returns how many there are. It is a pass of its own, without a branch, after the probe
// loop: there the bitmap reads miss the cache, and a keep decided in the same loop would either
// mispredict or (without a branch) make each store into alive wait for the previous candidate's read.
func (sc *batchScratch) keep(live int, bound, theta float64) int {
	m := 0
	alive, cacc := sc.alive[:live], sc.cacc
	for _, idx := range alive {
		alive[m] = idx
		m += int(b2u(cacc[idx]*pruneSlack+bound >= theta))
	}
	return m
}

// probeDense is probeOnes for a tf >= 2 bitmap.
func (sc *batchScratch) probeDense(c *cursor, live int, w float64, kt *[256]float64, bound, theta float64) int {
	for _, idx := range sc.alive[:live] {
		sc.cacc[idx] += denseContrib(c, sc.cdoc[idx], sc.cnrm[idx], w, kt)
	}
	return sc.keep(live, bound, theta)
}

// fillSlack makes further bitmap lists non-essential once the prefix rule has stopped at ess: MaxScore
// needs only that the non-essential lists together cannot lift a document to theta, not that they are a
// prefix of the order, so an essential bitmap list whose bound still fits under theta beside qts[:ess]
// (its increment is its bound less the largest bound among its own term's non-essential lists, as in
// setPrefix) is probed instead of iterated too. Such a list moves to qts[ess] (the lists between shift
// up one, and others, the per-list sums of tfFloorOthers, along), and prefix is set again for the new
// order. It returns the new ess. Only bitmap lists move: the presence planes bound a bitmap list's
// contribution per document, while a block list's bound would be added to every document's bound and
// make nearly every union document a candidate.
func fillSlack(qts []*queryTerm, prefix, others []float64, npos, ess int, theta float64) int {
	for j := ess; j < len(qts); j++ {
		q := qts[j]
		if !q.cur.dense {
			continue
		}
		top := 0.0 // the largest bound among q's term's non-essential lists
		for _, p := range qts[:ess] {
			if p.pos == q.pos {
				top = max(top, p.ub)
			}
		}
		if prefix[ess]+max(0, q.ub-top) >= theta {
			continue
		}
		copy(qts[ess+1:j+1], qts[ess:j])
		qts[ess] = q
		if others != nil {
			o := others[j]
			copy(others[ess+1:j+1], others[ess:j])
			others[ess] = o
		}
		ess++
		setPrefix(qts, prefix, npos)
		// The lists now at ess..j did not fit before the move and fit less now (a sibling's increment
		// falls by what the move added): go on after them.
	}
	return ess
}

// maxScore returns the top k documents of the query lists qts from the threshold theta0 (see
// maxScoreDAAT for the contract): with the batch scorer unless exact lengths are asked for.
func (ix *Index) maxScore(qts []*queryTerm, k int, theta0 float64) []ScoredDoc {
	if !ix.params.ExactLength {
		return ix.maxScoreBatches(qts, k, theta0)
	}
	return ix.maxScoreDAAT(qts, k, theta0)
}

// maxScoreBatches is MaxScore with the non-essential lists probed a batch of candidates at a time, as
// Lucene's MaxScoreBulkScorer does: per window of windowDocs documents, the essential lists are merged
// into candidates, each with its contributions and their sum (document at a time by gather, or term at a
// time by gatherTAAT when there are taatMinLists or more, taat.go); the
// non-essential lists are then probed list by list, largest bound first, for all the candidates still
// alive (a block list by one scan against the candidates' marks, probescan.go), dropping after each list
// those that can no longer reach the threshold (short loops over arrays,
// instead of the document-at-a-time loop's branching between lists per candidate); the survivors are
// scored exactly, their contributions summed in query order as maxScoreDAAT does, so the results are
// the same bit for bit. The threshold rises inside the last pass; the essential lists are chosen again
// for each window. Exact lengths are not supported (maxScore uses maxScoreDAAT for them).
func (ix *Index) maxScoreBatches(qts []*queryTerm, k int, theta0 float64) []ScoredDoc {
	nq := len(qts)
	prefix, npos := sortByBound(qts)
	contrib := make([]float64, npos) // per query position, for the exact sum
	width := min(max(windowDocs, 1), 1<<16)
	sc := batchPool.Get().(*batchScratch)
	defer batchPool.Put(sc)
	sc.reset(windowCands, nq)
	norms, kt, t1 := ix.norms, &ix.k, ix.tf.ones()
	h := topK{k: k, h: make([]ScoredDoc, 0, min(k, 256))}
	theta := theta0
	for _, q := range qts {
		q.cur.next()
	}
	ess := 0
	// others[i]: what the terms other than qts[i]'s can add to a document (the largest bound among each
	// term's lists), for the tf floors of the tf >= 2 bitmap lists (tfmin.go); floorTheta is the
	// threshold they were set for.
	others := tfFloorOthers(qts, npos)
	floorTheta := math.Inf(-1)
	// fillTheta is the threshold fillSlack last ran for.
	fillTheta := math.Inf(-1)
	if sc.taat.pending { // left by a search that failed (a corrupt index): its sums are not cleared
		clear(sc.taat.acc)
		clear(sc.taat.mask)
		clear(sc.taat.union)
		sc.taat.pending = false
	}
	if sc.marks.on { // likewise
		clear(sc.marks.cb)
		sc.marks.on = false
	}
	for {
		// While gatherTAAT hands out a window over several calls, the essential lists stay as they were.
		if !sc.taat.pending {
			for ess < nq && prefix[ess+1] < theta {
				ess++
			}
			if theta > fillTheta {
				fillTheta = theta
				ess = fillSlack(qts, prefix, others, npos, ess, theta)
			}
			if ess == nq {
				break
			}
			if others != nil && theta > floorTheta {
				floorTheta = theta
				for j := ess; j < nq; j++ {
					if q := qts[j]; q.cur.dense && !q.cur.ones {
						q.cur.tmin = tfFloor(q.weight, kt[q.list.minNrm], others[j], theta)
					}
				}
			}
		}
		var live int
		var end bool
		taat := false
		if ne := nq - ess; sc.taat.pending || taatMinLists > 0 && ne >= taatMinLists && ne <= taatMaxLists {
			taat = true
			live, end = sc.gatherTAAT(qts, ess, width, prefix[ess], theta, norms, kt, t1, &ix.tf)
		} else {
			live, end = sc.gather(qts, ess, width, prefix[ess], theta, norms, kt)
		}
		if end {
			break
		}
		ncand := live
		// The non-essential lists, largest bound first, each probed for every remaining candidate.
		for i := ess - 1; i >= 0 && live > 0; i-- {
			q := qts[i]
			switch c := &q.cur; {
			case c.dense && c.ones:
				live = sc.probeOnes(c, live, q.weight, t1, prefix[i], theta)
			case c.dense:
				live = sc.probeDense(c, live, q.weight, kt, prefix[i], theta)
			default:
				live = sc.probeBlocksScan(c, i, nq, ncand, live, width, q.weight, kt, prefix[i], theta)
			}
		}
		sc.unmark(ncand)
		// The survivors, scored exactly: contributions by query position, summed in query order.
		for _, idx := range sc.alive[:live] {
			clear(contrib)
			row := sc.cm[int(idx)*nq : int(idx)*nq+nq]
			d, nrm := sc.cdoc[idx], sc.cnrm[idx]
			for i, q := range qts[:ess] {
				v := row[i]
				if q.cur.dense { // not recorded by probeOnes or probeDense
					v = bitmapContrib(&q.cur, d, nrm, q.weight, kt, t1)
				}
				contrib[q.pos] += v // at most one list of a term has the document: v + 0 is v
			}
			if taat { // the essential lists' contributions are in the window, not in the row
				for j, q := range qts[ess:] {
					contrib[q.pos] += sc.contrib(j, width, idx)
				}
			} else {
				for j, q := range qts[ess:] {
					contrib[q.pos] += row[ess+j]
				}
			}
			s := 0.0
			for _, v := range contrib {
				s += v
			}
			if s >= theta || h.len() < k {
				h.push(ScoredDoc{Doc: sc.cdoc[idx], Score: s})
				if h.len() == k && h.min().Score > theta {
					theta = h.min().Score
				}
			}
		}
	}
	return h.sorted()
}
