package bm25

import (
	"context"
	"os"
	"strconv"
	"testing"
)

// TestSearchLoop runs the single pass's queries BM25_QPROF_PASSES times (default 5) without timing, for
// CPU profiles of the search alone (the index opened without checksums). Skipped without BM25_QPROF_INDEX.
func TestSearchLoop(t *testing.T) {
	ix := qprofIndex(t)
	qs := qprofQueries(t, 2000)
	passes := 5
	if v, err := strconv.Atoi(os.Getenv("BM25_QPROF_PASSES")); err == nil && v > 0 {
		passes = v
	}
	ctx := context.Background()
	for _, q := range qs[:min(100, len(qs))] {
		ix.Search(ctx, q, 10)
	}
	for range passes {
		for _, q := range qs {
			if _, err := ix.Search(ctx, q, 10); err != nil {
				t.Fatal(err)
			}
		}
	}
}
