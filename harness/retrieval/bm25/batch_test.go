package bm25

import (
	"fmt"
	"math/rand"
	"strings"
	"testing"
)

// TestBatchesMatchBruteForce is the property test of the batch scorer: block and dense lists mixed,
// terms clustered in a few regions and at the end of the corpus, exact ties, k below and above the
// number of matches, parameters that cannot use the stored bounds, and windows of 1, 7, 64 and 512
// documents (so that windows end anywhere, also between documents of a tie). Each query is checked
// against the exhaustive scorer (exact lengths: with the document-at-a-time scorer).
func TestBatchesMatchBruteForce(t *testing.T) {
	r := rand.New(rand.NewSource(17))
	const n, w = 13065, 4096
	docs := randomCorpus(r, n, 500) // a small vocabulary: many dense terms, the rest in blocks
	for i := range docs {
		switch {
		case i >= w-70 && i < w+70 && i%3 == 0:
			docs[i].Text += " edge" // around a window edge
		case i >= 2*w+100 && i < 2*w+400 && i%7 == 0:
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
	defer func(b int) { windowDocs = b }(windowDocs)
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
			windowDocs = []int{1, 7, 64, 512}[r.Intn(4)]
			checkSearch(t, ix, p, query, k)
		}
		var many []string // more essential lists than gather keeps on its stack
		for j := 0; j < 90; j++ {
			many = append(many, fmt.Sprintf("w%d", j*5))
		}
		for _, query := range []string{"tied", "edge", "cluster", "tail", "tail edge tied cluster", strings.Join(many, " ")} {
			for _, k := range []int{1, 3, 1000} {
				for _, b := range []int{1, 3, 512} {
					windowDocs = b
					checkSearch(t, ix, p, query, k)
				}
			}
		}
	}
}
