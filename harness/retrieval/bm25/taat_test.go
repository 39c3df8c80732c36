package bm25

import (
	"fmt"
	"math/rand"
	"slices"
	"strings"
	"testing"
)

// TestTAATMatchesBruteForce is the property test of gatherTAAT, the term-at-a-time merge of several
// essential lists: queries of 2 to 12 terms (block lists, tf = 1 and tf >= 2 bitmaps, and one list of a
// dense term essential while its other is not), k from 1 to above the number of matches (a window with
// more than windowCands candidates is handed out over several calls), windows from 1 document to
// 65,536, both merges for each query, three parameter settings (exact lengths use the document-at-a-time
// scorer). A mutant that prunes with a bound 20% too low must fail it.
func TestTAATMatchesBruteForce(t *testing.T) {
	r := rand.New(rand.NewSource(23))
	const n = 13065
	docs := randomCorpus(r, n, 400)
	for i := range docs {
		if i%5 == 0 {
			docs[i].Text += " often"
		}
		if i >= 6000 && i < 9000 && i%3 == 0 {
			docs[i].Text += " middle middle"
		}
	}
	ix, _ := build(t, docs, Options{Analyzer: AnalyzerStandard})
	z := rand.NewZipf(r, 1.05, 1, 500)
	var queries []string
	for q := 0; q < 50; q++ {
		var terms []string
		for j := 0; j < 2+r.Intn(11); j++ {
			terms = append(terms, fmt.Sprintf("w%d", z.Uint64()))
		}
		if r.Intn(3) == 0 {
			terms = append(terms, []string{"often", "middle"}[r.Intn(2)])
		}
		queries = append(queries, strings.Join(terms, " "))
	}
	queries = append(queries, "w1 w2 w3", "often middle w5 w7", "w200 w300 w350 w390")
	defer func(b, m int) { windowDocs, taatMinLists = b, m }(windowDocs, taatMinLists)
	for _, p := range []Params{{K1: 0.9, B: 0.4}, {K1: 1.2, B: 0.75}, {K1: 0.9, B: 0.4, ExactLength: true}} {
		if err := ix.SetParams(p); err != nil {
			t.Fatal(err)
		}
		for i, query := range queries {
			k := []int{1, 7, 10, 100, 2 * n}[i%5]
			want, err := ix.BruteForce(query, k)
			if err != nil {
				t.Fatal(err)
			}
			for _, w := range []int{1, 7, 64, 512, 4096, 65536} {
				for _, m := range []int{0, 2, 3} {
					windowDocs, taatMinLists = w, m
					got, err := ix.Search(t.Context(), query, k)
					if err != nil {
						t.Fatal(err)
					}
					if !slices.Equal(got, want) {
						t.Fatalf("params %+v query %q k=%d window %d taatMinLists %d: differs from brute force:\n got %v\nwant %v", p, query, k, w, m, got, want)
					}
				}
			}
		}
	}
	// The mutant: candidates pruned with a bound 20% too low must change some result.
	ix.SetParams(Params{K1: 0.9, B: 0.4})
	windowDocs, taatMinLists = 4096, 2
	defer func() { taatBoundBias = 1 }()
	taatBoundBias = 0.8
	caught := false
	for _, q := range queries {
		for _, k := range []int{1, 10, 100} {
			got, _ := ix.Search(t.Context(), q, k)
			want, _ := ix.BruteForce(q, k)
			caught = caught || fmt.Sprint(got) != fmt.Sprint(want)
		}
	}
	if !caught {
		t.Fatal("gatherTAAT pruning with a bound 20% too low went unnoticed")
	}
}
