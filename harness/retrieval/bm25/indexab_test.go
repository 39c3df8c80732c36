package bm25

import (
	"context"
	"fmt"
	"math"
	"os"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"
)

// TestIndexAB compares two indexes of the same corpus (BM25_QPROF_INDEX and BM25_QPROF_INDEX_B, for
// example built with different dense thresholds) in one process and query by query: each query is
// searched 3 times on each index, the fastest kept, the order of the two turning with each query (as in
// TestBatchAB). It reports both rates, the percentiles of the per-query times, and the queries whose time
// rose most from A to B (BM25_QPROF_AB_TOP, default 15), with the lists of their terms on both indexes;
// BM25_QPROF_AB_OUT names a file for every query's two times (tab-separated). The results must be the
// same on both indexes. The queries are as in TestQueryRateFastest (BM25_QPROF_QUERIES, or synthetic).
// BM25_QPROF_ORDER_A and BM25_QPROF_ORDER_B set each side's list order (listOrder), BM25_QPROF_ALPHA_A
// and BM25_QPROF_ALPHA_B its orderAlpha; B may name the same index as A. Skipped without both index variables.
func TestIndexAB(t *testing.T) {
	a := qprofIndex(t)
	b := qprofIndexEnv(t, "BM25_QPROF_INDEX_B")
	qs := qprofQueries(t, 2000)
	ixs := [2]*Index{a, b}
	// BM25_QPROF_ORDER_A and _B: the list order (listOrder) of each side, default the current one.
	orders := [2]int{listOrder, listOrder}
	for i, v := range []string{os.Getenv("BM25_QPROF_ORDER_A"), os.Getenv("BM25_QPROF_ORDER_B")} {
		if v != "" {
			if _, err := fmt.Sscan(v, &orders[i]); err != nil {
				t.Fatalf("BM25_QPROF_ORDER: %q: %v", v, err)
			}
		}
	}
	defer func(o int, a float64) { listOrder, orderAlpha = o, a }(listOrder, orderAlpha)
	// BM25_QPROF_ALPHA_A and _B: each side's orderAlpha, default the current one.
	alphas := [2]float64{orderAlpha, orderAlpha}

	for i, v := range []string{os.Getenv("BM25_QPROF_ALPHA_A"), os.Getenv("BM25_QPROF_ALPHA_B")} {
		if v != "" {
			if _, err := fmt.Sscan(v, &alphas[i]); err != nil {
				t.Fatalf("BM25_QPROF_ALPHA: %q: %v", v, err)
			}
		}
	}
	// BM25_QPROF_AB_OFF_A=densetf2 (or denseones, recompute, scanregs): side A runs without
	// addDenseTf2 (addDenseOnes, the bitmap contributions recomputed for the survivors, the union scan
	// in registers), B with it, so that one
	// binary compares the two paths query by query on one index.
	tf2 := [2]bool{useDenseTf2, useDenseTf2}
	ones := [2]bool{useDenseOnes, useDenseOnes}
	recomp := [2]bool{useBitmapRecompute, useBitmapRecompute}
	regs := [2]bool{useScanRegs, useScanRegs}
	switch os.Getenv("BM25_QPROF_AB_OFF_A") {
	case "scanregs": // A: the union scan as it was (scanWords), B: scanWordsRegs
		regs[0] = false
	case "densetf2":
		tf2[0] = false
	case "denseones":
		ones[0] = false
	case "recompute":
		recomp[0] = false
	}
	defer func(v, o, r, sr bool) {
		useDenseTf2, useDenseOnes, useBitmapRecompute, useScanRegs = v, o, r, sr
	}(useDenseTf2, useDenseOnes, useBitmapRecompute, useScanRegs)
	times := make([][2]time.Duration, len(qs))
	ctx := context.Background()
	for qi, q := range qs {
		var res [2][]ScoredDoc
		for k := range 2 {
			i := (k + qi) % 2
			best := time.Duration(math.MaxInt64)
			listOrder, orderAlpha, useDenseTf2, useDenseOnes = orders[i], alphas[i], tf2[i], ones[i]
			useBitmapRecompute, useScanRegs = recomp[i], regs[i]
			for range 3 {
				start := time.Now()
				r, err := ixs[i].Search(ctx, q, 10)
				if err != nil {
					t.Fatal(err)
				}
				best = min(best, time.Since(start))
				res[i] = r
			}
			times[qi][i] = best
		}
		if fmt.Sprint(res[0]) != fmt.Sprint(res[1]) {
			t.Errorf("query %d %q: results differ:\nA %v\nB %v", qi, q, res[0], res[1])
		}
	}
	for i, name := range []string{"A", "B"} {
		var total time.Duration
		lat := make([]time.Duration, len(qs))
		for qi := range qs {
			total += times[qi][i]
			lat[qi] = times[qi][i]
		}
		sort.Slice(lat, func(x, y int) bool { return lat[x] < lat[y] })
		t.Logf("%s: %.0f queries/s (fastest of 3), p50 %v, p90 %v, p99 %v, max %v", name, float64(len(qs))/total.Seconds(),
			lat[len(lat)/2].Round(time.Microsecond), lat[len(lat)*9/10].Round(time.Microsecond),
			lat[len(lat)*99/100].Round(time.Microsecond), lat[len(lat)-1].Round(time.Microsecond))
	}
	if f := os.Getenv("BM25_QPROF_AB_OUT"); f != "" {
		var sb strings.Builder
		for qi, q := range qs {
			fmt.Fprintf(&sb, "%d\t%d\t%s\n", times[qi][0].Nanoseconds(), times[qi][1].Nanoseconds(), q)
		}
		if err := os.WriteFile(f, []byte(sb.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	top := 15
	fmt.Sscan(os.Getenv("BM25_QPROF_AB_TOP"), &top)
	order := make([]int, len(qs))
	for i := range order {
		order[i] = i
	}
	sort.Slice(order, func(x, y int) bool {
		dx, dy := times[order[x]][1]-times[order[x]][0], times[order[y]][1]-times[order[y]][0]
		return dx > dy
	})
	for _, qi := range order[:min(top, len(order))] {
		r, err := a.Search(ctx, qs[qi], 10)
		if err != nil {
			t.Fatal(err)
		}
		kth := 0.0
		if len(r) > 0 {
			kth = r[len(r)-1].Score
		}
		listOrder, orderAlpha = orders[0], alphas[0]
		da := describeLists(t, a, qs[qi])
		listOrder, orderAlpha = orders[1], alphas[1]
		db := describeLists(t, b, qs[qi])
		t.Logf("%v -> %v (%+.0f%%) %q, k-th score %.2f\n  A: %s\n  B: %s", times[qi][0].Round(time.Microsecond), times[qi][1].Round(time.Microsecond),
			100*(float64(times[qi][1])/float64(times[qi][0])-1), qs[qi], kth, da, db)
	}
}

// describeLists returns the query's posting lists on ix: per list its kind (b: blocks, d: tf >= 2
// bitmap, 1: tf = 1 bitmap), its postings, its bound times the term's weight and (in parentheses) the
// prefix bound, in the order of sortByBound under the current listOrder.
func describeLists(t *testing.T, ix *Index, q string) string {
	qts, err := ix.prepare(q)
	if err != nil {
		t.Fatal(err)
	}
	defer release(qts)
	prefix, _ := sortByBound(qts)
	var parts []string
	for i, qt := range qts {
		kind := "b"
		switch qt.list.kind {
		case listDense:
			kind = "d"
		case listOnes:
			kind = "1"
		}
		parts = append(parts, fmt.Sprintf("%d%s%d:%.2f(%.1f)", qt.pos, kind, qt.list.n, qt.ub, prefix[i+1]))
	}
	return strings.Join(parts, " ")
}

// TestDenseCensus counts the terms of the index named by BM25_QPROF_INDEX (skipped without it) whose
// postings reach 1/32, 1/48, 1/64, 1/96 and 1/128 of the documents, with the bytes their postings take
// now, and of each term's tf >= 2 postings likewise: the figures for the size of other thresholds.
func TestDenseCensus(t *testing.T) {
	ix := qprofIndex(t)
	n := ix.Len()
	divs := []int{32, 48, 64, 96, 128}
	terms, his := make([]int, len(divs)), make([]int, len(divs))
	bytes := make([]int64, len(divs))
	offs := make([]uint64, ix.nTerms)
	for i := range offs {
		offs[i] = ix.info(i).off
	}
	slices.Sort(offs)
	for i := 0; i < ix.nTerms; i++ {
		inf := ix.info(i)
		end := uint64(len(ix.postings))
		if j, _ := slices.BinarySearch(offs, inf.off); j+1 < len(offs) {
			end = offs[j+1]
		}
		ls, nl, err := ix.lists(inf)
		if err != nil {
			t.Fatal(err)
		}
		nHi := inf.df
		for _, l := range ls[:nl] {
			if l.kind == listOnes {
				nHi -= l.n
			}
		}
		if ix.postings[inf.off] == kindBlocks {
			nHi = 0 // not known without decoding; counted below only for dense terms
		}
		for j, d := range divs {
			if int(inf.df)*d >= n {
				terms[j]++
				bytes[j] += int64(end - inf.off)
				if int(nHi)*d >= n {
					his[j]++
				}
			}
		}
	}
	for j, d := range divs {
		t.Logf("df >= n/%d: %d terms, %.1f MB of postings now; of them %d (dense now) with tf >= 2 in n/%d", d, terms[j], float64(bytes[j])/1e6, his[j], d)
	}
}
