package ngram

import (
	"runtime"
	"time"
)

// The induce passes of SA-IS on two or more cores, after libsais: each block of the suffix array is
// processed in three phases.
//
//  1. Gather, in parallel: for every entry, the symbol of the suffix it induces and that suffix's
//     type flag (random reads of the text: the cache misses that dominate the pass).
//  2. Assign, sequentially, in scan order: bucket counters give each induced suffix its slot. A slot
//     inside the current block is written at once (the scan reaches it later in this block, and its
//     gathered value is then stale, which phase 2 notices and computes directly); the others are
//     listed.
//  3. Place, in parallel: the listed entries are stored (random writes to the suffix array).
//
// Phases 1 and 3 split the block between the caller and a helper goroutine; the phases are joined by
// channel handoffs, so no two goroutines touch the same entry at once.
//
// On a busy machine the helper's thread may wait for the OS scheduler at every handoff, which costs
// more than it saves. So each pass watches the handoffs: once the caller has spent more time waiting
// for the helper than working on its own half, the rest of the pass runs both halves on the caller,
// and the next pass tries again. (Polling the channels instead of blocking on them was measured and
// dropped: on a loaded machine it made the passes slower still.)

// saisParBlock is the number of suffix-array entries per block of the parallel induce passes: large
// enough that a block's half (about a millisecond) dwarfs a handoff, small enough that the block's
// scratch (4 arrays of this many int32) stays in the CPU caches.
const saisParBlock = 1 << 17

// saisParMin is the smallest text whose induce passes are split across goroutines. It is a variable
// so that tests can run the parallel passes on small texts.
var saisParMin = 1 << 20

// saisPar holds the scratch of the parallel induce passes and the helper goroutine.
type saisPar struct {
	gv, gg []int32 // a block's entries as gathered, and the symbols (with type flags) they induce
	pp, pe []int32 // the stores leaving the block: positions and entries
	work   chan func()
	done   chan struct{}

	// The current pass's handoff accounting (see above).
	own, wait time.Duration
	forks     int
	off       bool
}

// newSaisPar returns the parallel scratch, or nil when only one core is available.
func newSaisPar() *saisPar {
	if runtime.GOMAXPROCS(0) < 2 {
		return nil
	}
	p := &saisPar{
		gv: make([]int32, saisParBlock), gg: make([]int32, saisParBlock),
		pp: make([]int32, saisParBlock), pe: make([]int32, saisParBlock),
		work: make(chan func()), done: make(chan struct{}),
	}
	go func() {
		for fn := range p.work {
			fn()
			p.done <- struct{}{}
		}
	}()
	return p
}

// close stops the helper goroutine.
func (p *saisPar) close() {
	if p != nil {
		close(p.work)
	}
}

// startPass resets the handoff accounting at the start of a pass.
func (p *saisPar) startPass() {
	p.own, p.wait, p.forks, p.off = 0, 0, 0, false
}

// both runs a on the calling goroutine and b on the helper, and returns when both are done; or both
// on the caller once handoffs have proved too slow in this pass.
func (p *saisPar) both(a, b func()) {
	if p.off {
		a()
		b()
		return
	}
	t0 := time.Now()
	p.work <- b
	a()
	t1 := time.Now()
	<-p.done
	p.own += t1.Sub(t0)
	p.wait += time.Since(t1)
	p.forks++
	if p.forks >= 8 && p.wait > p.own {
		p.off = true
	}
}

// split runs fn over [0, n) in two halves at once, or in one piece when n is small.
func (p *saisPar) split(n int, fn func(lo, hi int)) {
	if n < 4096 {
		fn(0, n)
		return
	}
	h := n / 2
	p.both(func() { fn(0, h) }, func() { fn(h, n) })
}

// symL returns the symbol of L-type suffix j, flagged when j-1 is S-type or absent.
func symL(s []int32, j int32) int32 {
	c := s[j]
	if j == 0 || s[j-1] < c {
		return c | saisFlag
	}
	return c
}

// symS returns the symbol of S-type suffix j, flagged when j-1 is S-type or absent.
func symS(s []int32, j int32) int32 {
	c := s[j]
	if j == 0 || s[j-1] <= c {
		return c | saisFlag
	}
	return c
}

// induceLPar is induceL in parallel blocks.
func (p *saisPar) induceL(s, sa, cnt, bkt []int32, clearUsed bool) {
	bucketStarts(cnt, bkt)
	p.startPass()
	n := len(sa)
	gv, gg, pp, pe := p.gv, p.gg, p.pp, p.pe
	for a := 0; a < n; a += saisParBlock {
		end := min(a+saisParBlock, n)
		blk := sa[a:end]
		p.split(len(blk), func(lo, hi int) {
			for x := lo; x < hi; x++ {
				v := blk[x]
				gv[x] = v
				if v > 0 {
					gg[x] = symL(s, v-1)
				}
			}
		})
		np := 0
		for x, v := range blk {
			if v <= 0 {
				continue
			}
			j := v - 1
			g := gg[x]
			if v != gv[x] { // written into this block after the gather
				g = symL(s, j)
			}
			c := g &^ saisFlag
			e := j
			if g < 0 {
				e = ^j
			}
			q := bkt[c]
			bkt[c] = q + 1
			if int(q) < end {
				sa[q] = e
			} else {
				pp[np], pe[np] = q, e
				np++
			}
			if clearUsed {
				blk[x] = 0
			}
		}
		p.split(np, func(lo, hi int) {
			for i := lo; i < hi; i++ {
				sa[pp[i]] = pe[i]
			}
		})
	}
}

// induceSPar is induceS in parallel blocks.
func (p *saisPar) induceS(s, sa, cnt, bkt []int32, stage1 bool) {
	bucketEnds(cnt, bkt)
	p.startPass()
	n := len(sa)
	gv, gg, pp, pe := p.gv, p.gg, p.pp, p.pe
	for b := n; b > 0; b -= saisParBlock {
		a := max(b-saisParBlock, 0)
		blk := sa[a:b]
		p.split(len(blk), func(lo, hi int) {
			for x := lo; x < hi; x++ {
				v := blk[x]
				gv[x] = v
				if v < -1 {
					gg[x] = symS(s, ^v-1)
				}
			}
		})
		np := 0
		for x := len(blk) - 1; x >= 0; x-- {
			v := blk[x]
			if v >= 0 {
				continue
			}
			g := gg[x]
			stale := v != gv[x]
			v = ^v
			if stage1 {
				blk[x] = 0
			} else {
				blk[x] = v
			}
			if v == 0 {
				continue
			}
			j := v - 1
			if stale {
				g = symS(s, j)
			}
			c := g &^ saisFlag
			e := j
			if g < 0 {
				e = ^j
			}
			q := bkt[c] - 1
			bkt[c] = q
			if int(q) >= a {
				sa[q] = e
			} else {
				pp[np], pe[np] = q, e
				np++
			}
		}
		p.split(np, func(lo, hi int) {
			for i := lo; i < hi; i++ {
				sa[pp[i]] = pe[i]
			}
		})
	}
}
