package bm25

import (
	"fmt"
	"math/rand"
	"slices"
	"strings"
	"testing"
)

// TestFusedDecodeMatchesBruteForce is the property test of addBlocks, gatherTAAT's decoding of essential
// block lists straight into the window: block lists whose tfs are all 1 (tf width 0, the loop without tf
// loads), with tfs of 1 and 2 mixed, one whose single block spans the whole corpus (every window inside
// it), windows from 7 documents (every block reaches past a window) to 65,536 (whole blocks inside a
// window), k from 1 to above the number of matches, against the exhaustive scorer. Mutants caught by it
// (tried by hand): no list bit in the tf width 0 loop, a gap read one posting late in the whole-block
// loop, the tf = 1 factor for every tf; in the loop over the decoded postings of a block that reaches
// past the window: the stop test at d > hi, the tf = 1 factor, a stored contribution 10% low, no union
// bit. (A cursor left one posting early adds that posting to the next window twice: a sum too large
// only keeps more candidates, whose exact scores come from the stored contributions, so no test can
// see it.)
func TestFusedDecodeMatchesBruteForce(t *testing.T) {
	r := rand.New(rand.NewSource(41))
	const n = 20011
	docs := randomCorpus(r, n, 400)
	for i := range docs {
		if i%45 == 0 {
			docs[i].Text += " solo" // tf 1 everywhere: blocks of tf width 0
		}
		if i%53 == 0 {
			docs[i].Text += " pair" // tfs 1 and 2
			if i%3 == 0 {
				docs[i].Text += " pair"
			}
		}
		if i%997 == 0 {
			docs[i].Text += " rare" // one block over the whole corpus
		}
		if i >= n-300 && i%2 == 0 {
			docs[i].Text += " tail" // the corpus's last documents only
		}
	}
	ix, _ := build(t, docs, Options{Analyzer: AnalyzerStandard})
	queries := []string{
		"solo pair rare", "solo pair", "solo rare tail", "pair rare w3 w5", "solo pair rare w1 w2 w7",
		"solo solo pair", "tail solo pair w9", "rare tail w11 w13 w17",
	}
	z := rand.NewZipf(r, 1.05, 1, 400)
	for range 12 {
		terms := []string{[]string{"solo", "pair", "rare", "tail"}[r.Intn(4)], []string{"solo", "pair", "rare"}[r.Intn(3)]}
		for j := 0; j < r.Intn(6); j++ {
			terms = append(terms, fmt.Sprintf("w%d", z.Uint64()))
		}
		queries = append(queries, strings.Join(terms, " "))
	}
	defer func(b, m int) { windowDocs, taatMinLists = b, m }(windowDocs, taatMinLists)
	taatMinLists = 2
	for _, p := range []Params{{K1: 0.9, B: 0.4}, {K1: 1.2, B: 0.75}} {
		if err := ix.SetParams(p); err != nil {
			t.Fatal(err)
		}
		for i, query := range queries {
			k := []int{1, 10, 100, 2 * n}[i%4]
			want, err := ix.BruteForce(query, k)
			if err != nil {
				t.Fatal(err)
			}
			for _, w := range []int{7, 64, 512, 4096, 65536} {
				windowDocs = w
				got, err := ix.Search(t.Context(), query, k)
				if err != nil {
					t.Fatal(err)
				}
				if !slices.Equal(got, want) {
					t.Fatalf("params %+v query %q k=%d window %d: differs from brute force:\n got %v\nwant %v", p, query, k, w, got, want)
				}
			}
		}
	}
}
