package bm25

import (
	"fmt"
	"math/bits"
	"math/rand"
	"os"
	"slices"
	"strconv"
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

// scan runs the scan of the loaded window to its end (scanWordsRegs, or scanWords) and returns the
// candidates kept.
func (sb *scanBench) scan(regs bool) int {
	sc, tw := sb.sc, &sb.sc.taat
	nw := len(tw.union)
	kept := 0
	for tw.pending {
		if regs {
			kept += sc.scanWordsRegs(sb.norms, sb.theta, nw)
		} else {
			kept += sc.scanWords(sb.norms, sb.theta, nw)
		}
	}
	return kept
}

// BenchmarkScan times gatherTAAT's scan of a window of 4,096 documents whose union has the density of the
// 1M NQ-open index's average (2.2%: a quarter of the words zero, but real unions have more documents
// per nonzero word, see TestScanReal), scanWords (words) against scanWordsRegs (regs), and the loading
// of the window alone (load, to subtract); per window.
func BenchmarkScan(b *testing.B) {
	r := rand.New(rand.NewSource(5))
	sb := newScanBench(r, 512, 4096, 0.022)
	for _, c := range []struct {
		name       string
		scan, regs bool
	}{{"load", false, false}, {"words", true, false}, {"regs", true, true}} {
		b.Run(c.name, func(b *testing.B) {
			kept := 0
			for i := 0; i < b.N; i++ {
				sb.load(i % len(sb.unions))
				if c.scan {
					kept += sb.scan(c.regs)
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

// capturedWindow is a window of a real search as gatherTAAT accumulated it, for TestScanReal.
type capturedWindow struct {
	lo    uint32
	union []uint64
	offs  []int
	acc   []float64
	mask  []uint16
	pp    presencePlanes
	theta float64
}

// TestScanReal (with BM25_SCANREAL=N set) times the scans (scanWords, words; scanWordsRegs, regs;
// the window's planes computed first by presencePlanes.window and read by scanWordsRegs, planes; and over the
// union's offsets, scanFlat, flat) of
// the windows of real searches (BM25_QPROF_INDEX and BM25_QPROF_QUERIES,
// 300 queries), captured once and replayed, N rounds of the variants alternated: per document, the
// loading of the windows included (load alone, to subtract).
func TestScanReal(t *testing.T) {
	rounds, _ := strconv.Atoi(os.Getenv("BM25_SCANREAL"))
	if rounds <= 0 {
		t.Skip("set BM25_SCANREAL to a number of rounds")
	}
	ix := qprofIndex(t)
	qs := qprofQueries(t, 300)
	var wins []capturedWindow
	scanCapture = func(sc *batchScratch, nw int, theta float64) {
		tw := &sc.taat
		w := capturedWindow{lo: tw.lo, union: append([]uint64(nil), tw.union[:nw]...), theta: theta}
		w.pp = sc.pp // its slices are the scratch's, reused by the next window: copied
		w.pp.bms, w.pp.ptrs = slices.Clone(sc.pp.bms), slices.Clone(sc.pp.ptrs)
		w.pp.wones, w.pp.wtwos, w.pp.wok, w.pp.foffs, w.pp.flat = nil, nil, false, nil, false // planes computes them in the replay
		for wi, x := range w.union {
			for ; x != 0; x &= x - 1 {
				off := wi*64 + bits.TrailingZeros64(x)
				w.offs = append(w.offs, off)
				w.acc = append(w.acc, tw.acc[off])
				w.mask = append(w.mask, tw.mask[off])
			}
		}
		wins = append(wins, w)
	}
	for _, q := range qs {
		ix.Search(t.Context(), q, 10)
	}
	scanCapture = nil
	docs := 0
	for _, w := range wins {
		docs += len(w.offs)
	}
	t.Logf("%d windows, %d documents", len(wins), docs)
	sc := new(batchScratch)
	sc.reset(windowCands, 1)
	tw := &sc.taat
	width := windowDocs
	nw := (width + 63) / 64
	tw.acc, tw.mask, tw.union, tw.cmask = make([]float64, width), make([]uint16, width), make([]uint64, nw), make([]uint16, windowCands)
	norms := ix.norms
	for r := range rounds {
		for _, c := range []struct {
			name                     string
			scan, regs, planes, flat bool
		}{{"load", false, false, false, false}, {"words", true, false, false, false}, {"regs", true, true, false, false}, {"planes", true, true, true, false}, {"flat", true, true, true, true}} {
			res := testing.Benchmark(func(b *testing.B) {
				defer func(v, f bool) { useSIMDPlanes, useFlatScan = v, f }(useSIMDPlanes, useFlatScan)
				useSIMDPlanes, useFlatScan = planesKernelRuns, c.flat && flatKernelRuns // planesWindow and unionOffsets: SIMD in the SIMD build, scalar without it
				var foffs []uint16
				var wones, wtwos []uint64
				kept := 0
				for i := 0; i < b.N; i++ {
					w := &wins[i%len(wins)]
					copy(tw.union, w.union)
					for j, off := range w.offs {
						tw.acc[off], tw.mask[off] = w.acc[j], w.mask[j]
					}
					tw.lo, tw.wi, tw.pending = w.lo, 0, true
					sc.pp = w.pp
					sc.pp.wones, sc.pp.wtwos, sc.pp.foffs = wones, wtwos, foffs
					if c.planes {
						sc.pp.window(w.lo, tw.union[:nw])
						wones, wtwos, foffs = sc.pp.wones, sc.pp.wtwos, sc.pp.foffs
					}
					if !c.scan {
						clear(tw.union)
						for _, off := range w.offs {
							tw.acc[off], tw.mask[off] = 0, 0
						}
						continue
					}
					for tw.pending {
						if c.regs {
							kept += sc.scanWordsRegs(norms, w.theta, nw)
						} else {
							kept += sc.scanWords(norms, w.theta, nw)
						}
					}
				}
				b.ReportMetric(float64(kept)/float64(b.N), "kept/window")
			})
			t.Logf("round %d %-8s %6.2f ns/doc (%s)", r, c.name, float64(res.NsPerOp())*float64(len(wins))/float64(docs), res)
		}
	}
}

// TestScanRegsMatchesScanWords checks scanWordsRegs against scanWords on random windows: the same
// candidates (documents, sums, norms, masks, numbers) in the same calls, and the window cleared, for
// sparse and dense unions (up to all 4,096 documents, so that a window hands its candidates out over
// several calls) and widths that are not a multiple of 64. A bound 10% low in scanWordsRegs fails it.
// scanWordsRegs runs also with the window's planes computed first (useSIMDPlanes: read from the arrays), and
// over the union's offsets (useFlatScan: scanFlat).
func TestScanRegsMatchesScanWords(t *testing.T) {
	r := rand.New(rand.NewSource(11))
	for trial := 0; trial < 300; trial++ {
		width := []int{1, 7, 64, 100, 4096, 4096, 4096}[trial%7]
		p := []float64{0.01, 0.05, 0.3, 1}[r.Intn(4)]
		sb := newScanBench(r, 1, width, p)
		sb.theta = []float64{0, 0.5, 0.97, 2}[r.Intn(4)]
		type call struct {
			doc   []uint32
			acc   []float64
			nrm   []uint8
			alive []uint16
			mask  []uint16
		}
		run := func(regs, planes, flat bool) []call {
			defer func(v, f bool) { useSIMDPlanes, useFlatScan = v, f }(useSIMDPlanes, useFlatScan)
			useSIMDPlanes, useFlatScan = planes && planesKernelRuns, flat && flatKernelRuns
			sb.load(0)
			sc, tw := sb.sc, &sb.sc.taat
			sc.pp.window(tw.lo, tw.union[:(width+63)/64]) // as gatherTAAT: the window's planes with useSIMDPlanes
			if sc.pp.wok != planes || sc.pp.flat != (planes && flat) {
				t.Fatalf("trial %d: window's planes %v, offsets %v, want %v, %v", trial, sc.pp.wok, sc.pp.flat, planes, flat)
			}
			for j := range tw.mask {
				if tw.mask[j] != 0 {
					tw.mask[j] = uint16(j)&7 + 1 // masks that differ between documents
				}
			}
			nw := (width + 63) / 64
			var calls []call
			for tw.pending {
				var n int
				if regs {
					n = sc.scanWordsRegs(sb.norms, sb.theta, nw)
				} else {
					n = sc.scanWords(sb.norms, sb.theta, nw)
				}
				calls = append(calls, call{slices.Clone(sc.cdoc[:n]), slices.Clone(sc.cacc[:n]), slices.Clone(sc.cnrm[:n]), slices.Clone(sc.alive[:n]), slices.Clone(tw.cmask[:n])})
			}
			if slices.ContainsFunc(tw.acc, func(a float64) bool { return a != 0 }) || slices.ContainsFunc(tw.mask, func(m uint16) bool { return m != 0 }) || slices.ContainsFunc(tw.union, func(x uint64) bool { return x != 0 }) {
				t.Fatalf("trial %d (regs %v): the window is not cleared", trial, regs)
			}
			return calls
		}
		want := run(false, false, false)
		for _, c := range [][2]bool{{false, false}, {true, false}, {true, true}} {
			if got := run(true, c[0], c[1]); len(want) == 0 || fmt.Sprint(got) != fmt.Sprint(want) {
				t.Fatalf("trial %d (width %d, density %v, theta %v): scanWordsRegs (window's planes %v, flat %v)\n%v\nscanWords\n%v", trial, width, p, sb.theta, c[0], c[1], got, want)
			}
		}
	}
}
