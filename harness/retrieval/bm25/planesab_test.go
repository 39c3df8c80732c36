package bm25

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"
)

// planesABFlags are the switches TestPlanesAB turns off by name (true is their default).
var planesABFlags = map[string]*bool{
	"planesdirect": &usePlanesDirect,
	"planes":       &usePresencePlanes,
	"splitblocks":  &useSplitBlocks,
}

// TestPlanesAB compares variants of the search in one process, interleaved a chunk of 25 queries at a
// time, so that the machine's drift, which moves separate runs by 5-30%, falls on all variants alike: in
// round r chunk c runs with variant (c+r) mod n, so over n rounds each variant runs every query once, and
// each query meets its data as cold as in TestSinglePass (last touched a round before). BM25_PLANES_AB
// lists the variants, separated by "|", each a comma-separated list of switches to turn off
// (planesABFlags; empty: all on). Skipped without BM25_QPROF_INDEX and BM25_PLANES_AB.
func TestPlanesAB(t *testing.T) {
	spec := os.Getenv("BM25_PLANES_AB")
	if spec == "" || os.Getenv("BM25_QPROF_INDEX") == "" {
		t.Skip("set BM25_QPROF_INDEX and BM25_PLANES_AB")
	}
	variants := strings.Split(spec, "|")
	set := func(off string) {
		for _, p := range planesABFlags {
			*p = true
		}
		for _, f := range strings.Split(off, ",") {
			if f == "" {
				continue
			}
			p, ok := planesABFlags[f]
			if !ok {
				t.Fatalf("BM25_PLANES_AB: unknown switch %q", f)
			}
			*p = false
		}
	}
	defer set("")
	ix := qprofIndex(t)
	qs := qprofQueries(t, 2000)
	ctx := context.Background()
	for _, q := range qs[:min(50, len(qs))] { // warm-up, as in TestSinglePass: else the first chunk pays it
		if _, err := ix.Search(ctx, q, 10); err != nil {
			t.Fatal(err)
		}
	}
	const chunk = 25
	total := make([]time.Duration, len(variants))
	for r := range variants { // each round runs every query once, a chunk with each variant in turn
		for ci := 0; ci*chunk < len(qs); ci++ {
			i := (ci + r) % len(variants)
			set(variants[i])
			c0 := CPUTime()
			for _, q := range qs[ci*chunk : min(len(qs), ci*chunk+chunk)] {
				if _, err := ix.Search(ctx, q, 10); err != nil {
					t.Fatal(err)
				}
			}
			total[i] += CPUTime() - c0
		}
	}
	for i, v := range variants {
		t.Logf("off=%-20q %5.0f q per CPU-second", v, float64(len(qs))/total[i].Seconds())
	}
}
