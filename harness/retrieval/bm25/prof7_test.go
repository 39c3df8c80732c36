package bm25

import (
	"context"
	"os"
	"strconv"
	"strings"
	"testing"
)

// TestSearchLoop runs the single pass's queries BM25_QPROF_PASSES times (default 5) without timing, for
// CPU profiles of the search alone (the index opened without checksums). Skipped without BM25_QPROF_INDEX.
func TestSearchLoop(t *testing.T) {
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
			if l = strings.TrimSpace(l); l != "" && len(qs) < 2000 {
				qs = append(qs, l)
			}
		}
	} else {
		s := NewSynth(2)
		for range 2000 {
			qs = append(qs, s.Query())
		}
	}
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
