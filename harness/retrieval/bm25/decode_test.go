package bm25

import (
	"fmt"
	"math/rand"
	"slices"
	"strings"
	"testing"

	"github.com/ragbench/ragbench/harness/corpus"
)

// widthCorpus is a corpus whose block lists have many gap widths (a term every 2 to 3,000 documents, some
// with random gaps), tf widths from 0 (every tf 1) to 6 bits (tfs up to 40), and lists of a length that
// is not a multiple of 16 or 128, so that decode and addBlocks meet short runs, partial steps and last
// blocks.
func widthCorpus(r *rand.Rand, n int) []corpus.Document {
	docs := randomCorpus(r, n, 300)
	every := []int{2, 3, 7, 45, 53, 130, 997, 3001}
	for i := range docs {
		var b strings.Builder
		for _, e := range every {
			if i%e == 0 {
				fmt.Fprintf(&b, " e%d", e)
			}
		}
		if r.Intn(40) == 0 { // random gaps
			b.WriteString(" scatter")
		}
		if i%11 == 0 { // tfs 1 to 40
			b.WriteString(strings.Repeat(" heavy", 1+r.Intn(40)))
		}
		if i%5 == 0 && r.Intn(3) == 0 { // tfs 1 to 3
			b.WriteString(strings.Repeat(" few", 1+r.Intn(3)))
		}
		docs[i].Text += b.String()
	}
	return docs
}

// TestDecodeMatchesBruteForce is the property test of the block decoding in the whole search: queries
// over widthCorpus's lists, windows from 7 to 65,536 documents (blocks reaching past a window, whole
// blocks in one), both merges, k from 1 to all, against the exhaustive scorer.
func TestDecodeMatchesBruteForce(t *testing.T) {
	r := rand.New(rand.NewSource(28))
	const n = 20011
	ix, _ := build(t, widthCorpus(r, n), Options{Analyzer: AnalyzerStandard})
	queries := []string{
		"e2 e3", "e7 e45 e53", "e997 e3001 heavy", "scatter few e130", "e2 e3 e7 e45 e53 e130 e997 e3001",
		"heavy few scatter", "e3001", "heavy",
	}
	for range 12 {
		var q []string
		for j := 0; j < 2+r.Intn(5); j++ {
			q = append(q, []string{"e2", "e3", "e7", "e45", "e53", "e130", "e997", "e3001", "scatter", "heavy", "few", fmt.Sprintf("w%d", r.Intn(300))}[r.Intn(12)])
		}
		queries = append(queries, strings.Join(q, " "))
	}
	defer func(w, m int) { windowDocs, taatMinLists = w, m }(windowDocs, taatMinLists)
	for i, query := range queries {
		k := []int{1, 10, 100, 2 * n}[i%4]
		want, err := ix.BruteForce(query, k)
		if err != nil {
			t.Fatal(err)
		}
		for _, w := range []int{7, 512, 8192, 65536} {
			for _, tm := range []int{0, 2} {
				windowDocs, taatMinLists = w, tm
				got, err := ix.Search(t.Context(), query, k)
				if err != nil {
					t.Fatal(err)
				}
				if !slices.Equal(got, want) {
					t.Fatalf("query %q k=%d window %d taatMin %d: differs from brute force:\n got %v\nwant %v", query, k, w, tm, got, want)
				}
			}
		}
	}
}
