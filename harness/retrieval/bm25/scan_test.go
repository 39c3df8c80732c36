package bm25

import (
	"math/rand"
	"testing"
)

// scanBench is a set of windows for the scan benchmarks: union words of a density like the 1M NQ-open
// index's (a quarter of the words zero), sums, and two non-essential bitmaps for the planes.
type scanBench struct {
	unions [][]uint64
	sums   [][]float64
	offs   [][]int // per window: the union's offsets, so that loading a window does not branch on its bits
	norms  []uint8
	theta  float64
	sc     *batchScratch
}

func newScanBench(r *rand.Rand, nwin, width int, p float64) *scanBench {
	nw := (width + 63) / 64
	sb := &scanBench{norms: make([]uint8, width), theta: 0.97, sc: new(batchScratch)}
	for i := range sb.norms {
		sb.norms[i] = uint8(r.Intn(256))
	}
	for w := 0; w < nwin; w++ {
		u := make([]uint64, nw)
		s := make([]float64, width)
		for off := 0; off < width; off++ {
			if r.Float64() < p {
				u[off/64] |= 1 << (off % 64)
				s[off] = r.Float64()
			}
		}
		var offs []int
		for off := 0; off < width; off++ {
			if u[off/64]>>(off%64)&1 != 0 {
				offs = append(offs, off)
			}
		}
		sb.unions, sb.sums, sb.offs = append(sb.unions, u), append(sb.sums, s), append(sb.offs, offs)
	}
	sc := sb.sc
	sc.reset(windowCands, 4)
	tw := &sc.taat
	tw.acc, tw.mask, tw.union, tw.cmask = make([]float64, width), make([]uint16, width), make([]uint64, nw), make([]uint16, windowCands)
	var ne []*queryTerm
	for range 2 {
		bm := make([]byte, 8*nw)
		for d := 0; d < width; d++ {
			if r.Float64() < 0.1 {
				bm[d/8] |= 1 << (d % 8)
			}
		}
		q := &queryTerm{ub: 0.02}
		q.cur.dense, q.cur.bits, q.cur.words = true, bm, nw
		ne = append(ne, q)
	}
	sc.pp.set(ne, 0.04, 1)
	return sb
}

// load puts window w into the scratch as gatherTAAT's accumulation leaves it.
func (sb *scanBench) load(w int) {
	tw := &sb.sc.taat
	u, s := sb.unions[w], sb.sums[w]
	copy(tw.union, u)
	for _, off := range sb.offs[w] {
		tw.acc[off], tw.mask[off] = s[off], 1
	}
	tw.lo, tw.wi, tw.pending = 0, 0, true
}

// scan runs the scan of the loaded window to its end and returns the candidates kept.
func (sb *scanBench) scan(extract bool) int {
	sc, tw := sb.sc, &sb.sc.taat
	nw, width := len(tw.union), len(tw.acc)
	if extract {
		tw.extract(&sc.pp, nw, width)
	}
	kept := 0
	for tw.pending {
		if extract {
			kept += sc.scanExtracted(sb.norms, sb.theta)
		} else {
			kept += sc.scanWords(sb.norms, sb.theta, nw)
		}
	}
	return kept
}

// BenchmarkScan times gatherTAAT's scan of a window of 4,096 documents whose union has the density of the
// 1M NQ-open index's (2.2%: a quarter of the words zero), one loop (words) against extract and
// scanExtracted (extract), and the loading of the window alone (load, to subtract); per window.
func BenchmarkScan(b *testing.B) {
	r := rand.New(rand.NewSource(5))
	sb := newScanBench(r, 512, 4096, 0.022)
	for _, c := range []struct {
		name    string
		scan    bool
		extract bool
	}{{"load", false, false}, {"words", true, false}, {"extract", true, true}} {
		b.Run(c.name, func(b *testing.B) {
			kept := 0
			for i := 0; i < b.N; i++ {
				sb.load(i % len(sb.unions))
				if c.scan {
					kept += sb.scan(c.extract)
				} else {
					tw := &sb.sc.taat
					clear(tw.union)
					for _, off := range sb.offs[i%len(sb.unions)] {
						tw.acc[off], tw.mask[off] = 0, 0
					}
				}
			}
			b.ReportMetric(float64(kept)/float64(b.N), "kept/window")
		})
	}
}
