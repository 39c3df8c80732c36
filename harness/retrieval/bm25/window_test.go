package bm25

import (
	"fmt"
	"math/rand"
	"strings"
	"testing"
)

// TestWindowsMatchBruteForce is the property test of the window scorer on a corpus several windows
// long: block and dense lists mixed, terms clustered in a few windows (so that windows are skipped and
// lists end or start at window edges), exact ties, k below and above the number of matches, and
// parameters that cannot use the stored bounds. Each query is checked against the exhaustive scorer with
// the window scorer and with the document-at-a-time one.
func TestWindowsMatchBruteForce(t *testing.T) {
	r := rand.New(rand.NewSource(17))
	const n = 3*winDocs + 777
	docs := randomCorpus(r, n, 500) // a small vocabulary: many dense terms, the rest in blocks
	for i := range docs {
		switch {
		case i >= winDocs-70 && i < winDocs+70 && i%3 == 0:
			docs[i].Text += " edge" // around a window edge
		case i >= 2*winDocs+100 && i < 2*winDocs+400 && i%7 == 0:
			docs[i].Text += " cluster cluster" // one region only: other windows have nothing of it
		case i%997 == 0:
			docs[i].Text += " tied" // identical short additions: exact ties across windows
		}
		if i >= n-64 {
			docs[i].Text += " tail" // the last documents, past the last full window
		}
	}
	ix, _ := build(t, docs, Options{Analyzer: AnalyzerStandard})
	if c := countForms(t, ix); c.blocks == 0 || c.denseHiBits == 0 || c.denseHiBlocks == 0 {
		t.Fatalf("the corpus lacks a posting form: %+v", c)
	}
	z := rand.NewZipf(r, 1.05, 1, 600)
	special := []string{"edge", "cluster", "tied", "tail"}
	defer func(u bool) { useWindows = u }(useWindows)
	for _, p := range []Params{{K1: 0.9, B: 0.4}, {K1: 1.2, B: 0.75}, {K1: 0.9, B: 0.4, ExactLength: true}} {
		if err := ix.SetParams(p); err != nil {
			t.Fatal(err)
		}
		for q := 0; q < 60; q++ {
			var terms []string
			for j := 0; j < 1+r.Intn(8); j++ {
				terms = append(terms, fmt.Sprintf("w%d", z.Uint64()))
			}
			if r.Intn(2) == 0 {
				terms = append(terms, special[r.Intn(len(special))])
			}
			query := strings.Join(terms, " ")
			k := []int{1, 7, 10, 100, 2 * n}[r.Intn(5)]
			for _, u := range []bool{true, false} {
				useWindows = u
				checkSearch(t, ix, p, query, k)
			}
		}
		for _, query := range []string{"tied", "edge", "cluster", "tail", "tail edge tied cluster"} {
			for _, k := range []int{1, 3, 1000} {
				useWindows = true
				checkSearch(t, ix, p, query, k)
			}
		}
	}
}
