package bm25

import (
	"fmt"
	"math"
	"math/rand"
	"reflect"
	"sort"
	"strings"
	"testing"
)

// TestInitialTheta is the property test of the initial threshold: on random queries over block and dense
// lists it is -Inf or the exact (brute-force) score of a document and at most the k-th best score, and
// MaxScore returns the same top k started from it, from -Inf, and from the k-th best score itself (the
// highest threshold that is allowed: ties at it must still be kept and ordered by ordinal).
func TestInitialTheta(t *testing.T) {
	r := rand.New(rand.NewSource(11))
	for _, c := range []struct {
		name         string
		docs, vocab  int
		zipfMax      uint64
		wantFiniteAt int // at least this many queries must get a finite threshold, so the path is exercised
	}{
		{"block lists", 3000, 2000, 2500, 50},
		{"dense lists", 3000, 300, 400, 50},
	} {
		t.Run(c.name, func(t *testing.T) {
			docs := randomCorpus(r, c.docs, c.vocab)
			ix, _ := build(t, docs, Options{Analyzer: AnalyzerStandard})
			z := rand.NewZipf(r, 1.05, 1, c.zipfMax)
			finite := 0
			for q := 0; q < 200; q++ {
				var terms []string
				for j := 0; j < 1+r.Intn(8); j++ {
					terms = append(terms, fmt.Sprintf("w%d", z.Uint64()))
				}
				query := strings.Join(terms, " ")
				k := []int{1, 5, 10, 100}[r.Intn(4)]
				all, err := ix.BruteForce(query, math.MaxInt32)
				if err != nil {
					t.Fatal(err)
				}
				scores := map[float64]bool{}
				for _, s := range all {
					scores[s.Score] = true
				}
				run := func(theta func([]*queryTerm) float64) ([]ScoredDoc, float64) {
					qts, err := ix.prepare(query)
					if err != nil {
						t.Fatal(err)
					}
					if len(qts) == 0 {
						return nil, math.Inf(-1)
					}
					defer release(qts)
					sort.SliceStable(qts, func(i, j int) bool { return qts[i].ub < qts[j].ub })
					th := theta(qts)
					return ix.maxScore(qts, k, th), th
				}
				got, th := run(func(qts []*queryTerm) float64 { return ix.initialTheta(qts, k) })
				if !math.IsInf(th, -1) {
					finite++
					if len(all) < k || th > all[k-1].Score || !scores[th] {
						t.Fatalf("query %q k=%d: initial threshold %v is not a document's score at most the k-th (%v)", query, k, th, all[:min(k, len(all))])
					}
				}
				want := all[:min(k, len(all))]
				if !reflect.DeepEqual(got, want) && len(want) > 0 {
					t.Fatalf("query %q k=%d threshold %v:\n got %v\nwant %v", query, k, th, got, want)
				}
				if len(all) >= k {
					oracle, _ := run(func([]*queryTerm) float64 { return all[k-1].Score })
					if !reflect.DeepEqual(oracle, want) {
						t.Fatalf("query %q k=%d from the k-th score:\n got %v\nwant %v", query, k, oracle, want)
					}
				}
				none, _ := run(func([]*queryTerm) float64 { return math.Inf(-1) })
				if !reflect.DeepEqual(none, want) && len(want) > 0 {
					t.Fatalf("query %q k=%d from -Inf:\n got %v\nwant %v", query, k, none, want)
				}
			}
			if finite < c.wantFiniteAt {
				t.Fatalf("%d queries had a finite initial threshold, want at least %d", finite, c.wantFiniteAt)
			}
			t.Logf("%d of 200 queries had a finite initial threshold", finite)
		})
	}
}
