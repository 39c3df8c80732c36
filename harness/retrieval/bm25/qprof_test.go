package bm25

import (
	"context"
	"os"
	"testing"
)

// TestQueryRate times synthetic queries on an existing index (BM25_QPROF_INDEX); skipped otherwise.
func TestQueryRate(t *testing.T) {
	dir := os.Getenv("BM25_QPROF_INDEX")
	if dir == "" {
		t.Skip("set BM25_QPROF_INDEX to an index directory")
	}
	ix, err := OpenWith(dir, OpenOptions{SkipChecksums: true})
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	for _, kind := range []string{"zipf", "content"} {
		s := NewSynth(2)
		qs := make([]string, 500)
		for i := range qs {
			if kind == "zipf" {
				qs[i] = s.Query()
			} else {
				qs[i] = s.ContentQuery()
			}
		}
		c0 := CPUTime()
		for _, q := range qs {
			if _, err := ix.Search(context.Background(), q, 10); err != nil {
				t.Fatal(err)
			}
		}
		t.Logf("%s queries: %.0f per CPU-second", kind, float64(len(qs))/(CPUTime()-c0).Seconds())
	}
}
