package bm25

import (
	"context"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestFailedSearchLeavesNoWindow checks that a search that fails on a corrupt index (a block list whose
// later blocks are damaged, so that the failure comes in the middle of a window's accumulation) leaves
// no partial window in the pooled scratch for the next search, on another index, to read: the good
// index's results must still equal the exhaustive scorer's after every failed search.
func TestFailedSearchLeavesNoWindow(t *testing.T) {
	r := rand.New(rand.NewSource(5))
	docs := randomCorpus(r, 6000, 300)
	good, dir := build(t, docs, Options{Analyzer: AnalyzerStandard})
	bad := t.TempDir()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if e.Name() == filePostings {
			for i := len(b) * 2 / 5; i < len(b)*3/5; i++ {
				b[i] = 0xff // widths above 32 bits: enter panics on every block here
			}
		}
		if err := os.WriteFile(filepath.Join(bad, e.Name()), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ix, err := OpenWith(bad, OpenOptions{SkipChecksums: true})
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	defer func(m int) { taatMinLists = m }(taatMinLists)
	taatMinLists = 2
	failed := 0
	for q := 0; q < 300; q++ {
		var terms []string
		for j := 0; j < 3+r.Intn(5); j++ {
			terms = append(terms, fmt.Sprintf("w%d", r.Intn(60)))
		}
		query := strings.Join(terms, " ")
		if _, err := ix.Search(context.Background(), query, 100); err != nil {
			failed++
		}
		got, err := good.Search(context.Background(), query, 100)
		if err != nil {
			t.Fatal(err)
		}
		want, _ := good.BruteForce(query, 100)
		if !slices.Equal(got, want) {
			t.Fatalf("query %q after a failed search: differs from brute force:\n got %v\nwant %v", query, got, want)
		}
	}
	if failed == 0 {
		t.Fatal("no search failed on the damaged index")
	}
	t.Logf("%d of 300 searches failed on the damaged index", failed)
}
