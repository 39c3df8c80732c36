package bm25

import (
	"context"
	"math"
	"os"
	"strings"
	"testing"
	"time"
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

// TestQueryRateFastest times queries on an existing index (BM25_QPROF_INDEX) in a way that resists a
// busy machine: each query is searched five times and its fastest time kept; the rate is the number of
// queries over the sum of those times. The queries are 1,000 synthetic ones, or the first 1,000 lines of
// BM25_QPROF_QUERIES. Skipped without BM25_QPROF_INDEX.
func TestQueryRateFastest(t *testing.T) {
	dir := os.Getenv("BM25_QPROF_INDEX")
	if dir == "" {
		t.Skip("set BM25_QPROF_INDEX to an index directory")
	}
	ix, err := OpenWith(dir, OpenOptions{SkipChecksums: true})
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	var qs []string
	if f := os.Getenv("BM25_QPROF_QUERIES"); f != "" {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range strings.Split(string(b), "\n") {
			if l != "" && len(qs) < 1000 {
				qs = append(qs, l)
			}
		}
	} else {
		s := NewSynth(2)
		for range 1000 {
			qs = append(qs, s.Query())
		}
	}
	var total time.Duration
	for _, q := range qs {
		best := time.Duration(math.MaxInt64)
		for range 5 {
			start := time.Now()
			if _, err := ix.Search(context.Background(), q, 10); err != nil {
				t.Fatal(err)
			}
			best = min(best, time.Since(start))
		}
		total += best
	}
	t.Logf("%d queries, fastest of 5 each: %.0f queries/s (mean %v)", len(qs), float64(len(qs))/total.Seconds(), total/time.Duration(len(qs)))
}
