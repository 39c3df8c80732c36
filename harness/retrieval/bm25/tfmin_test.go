package bm25

import (
	"fmt"
	"math/rand"
	"strings"
	"testing"

	"github.com/ragbench/ragbench/harness/corpus"
)

// TestNibblesAtLeast compares the SWAR nibble test with a nibble-by-nibble one: every t from 2 to 16, words
// of random nibbles, words of one repeated nibble (every value, the escape 0 included).
func TestNibblesAtLeast(t *testing.T) {
	r := rand.New(rand.NewSource(3))
	var words []uint64
	for x := uint64(0); x < 16; x++ {
		words = append(words, x*0x1111111111111111)
	}
	for range 2000 {
		words = append(words, r.Uint64())
	}
	for _, v := range words {
		for th := uint32(2); th <= 16; th++ {
			var want uint64
			for k := 0; k < 16; k++ {
				x := uint32(v >> (4 * k) & 15)
				if x == 0 || x >= th {
					want |= 1 << (8*(k/2) + k%2)
				}
			}
			if got := nibblesAtLeast(v, th); got != want {
				t.Fatalf("v=%016x t=%d: got %016x, want %016x", v, th, got, want)
			}
		}
	}
}

// tfCorpus is a corpus where "alpha" is in every document with tfs from 1 to 40 (its tf >= 2 postings a
// bitmap with nibbles and escapes), "beta" in a third of them, "gamma" rarer (a block list), and lengths
// vary so that the norms differ.
func tfCorpus(r *rand.Rand, n int) []corpus.Document {
	docs := make([]corpus.Document, n)
	for i := range docs {
		var sb strings.Builder
		tf := 1 + r.Intn(3)
		switch x := r.Intn(100); {
		case x < 8:
			tf = 4 + r.Intn(12)
		case x < 10:
			tf = 16 + r.Intn(25) // escapes
		}
		for range tf {
			sb.WriteString("alpha ")
		}
		if r.Intn(3) == 0 {
			for range 1 + r.Intn(4) {
				sb.WriteString("beta ")
			}
		}
		if r.Intn(40) == 0 {
			sb.WriteString("gamma ")
		}
		for range r.Intn(30) {
			fmt.Fprintf(&sb, "f%d ", r.Intn(50))
		}
		docs[i] = corpus.Document{ID: fmt.Sprint(i), Text: sb.String()}
	}
	return docs
}

// TestTfFloorCursor: a tf >= 2 bitmap cursor with a tf floor steps to exactly the postings with tf at or
// above it (escapes always), in order, from the start and after unfiltered steps, for every floor 2 to 16.
func TestTfFloorCursor(t *testing.T) {
	r := rand.New(rand.NewSource(5))
	ix, _ := build(t, tfCorpus(r, 9000), Options{Analyzer: AnalyzerStandard})
	i, ok := ix.lookup("alpha")
	if !ok {
		t.Fatal("no alpha")
	}
	ls, nl, err := ix.lists(ix.info(i))
	if err != nil || nl != 2 || ls[0].kind != listDense || len(ls[0].esc) == 0 {
		t.Fatalf("alpha: %d lists, first kind %d, %d escape bytes, err %v: want a tf >= 2 bitmap with escapes", nl, ls[0].kind, len(ls[0].esc), err)
	}
	var all []ScoredDoc // doc, tf
	var c cursor
	c.init(ix.postings, ls[0], ix.Len())
	for c.next(); c.doc != noDoc; c.next() {
		all = append(all, ScoredDoc{Doc: c.doc, Score: float64(c.tf)})
	}
	for th := uint32(2); th <= 16; th++ {
		for _, plain := range []int{0, 1, 5, 64, 700} { // unfiltered steps first
			c.init(ix.postings, ls[0], ix.Len())
			var got []ScoredDoc
			for range plain {
				if c.next(); c.doc != noDoc {
					got = append(got, ScoredDoc{Doc: c.doc, Score: float64(c.tf)})
				}
			}
			c.tmin = th
			for c.next(); c.doc != noDoc; c.next() {
				got = append(got, ScoredDoc{Doc: c.doc, Score: float64(c.tf)})
			}
			var want []ScoredDoc
			for k, p := range all {
				if k < plain || p.Score >= float64(th) {
					want = append(want, p)
				}
			}
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Fatalf("floor %d after %d plain steps: %d postings, want %d", th, plain, len(got), len(want))
			}
		}
	}
}

// TestTfFloorMatchesBruteForce is the property test of the tf floors: queries whose essential lists
// include a tf >= 2 bitmap (one saturated term alone, with a rarer term, with a term of tf = 1 only),
// k from 1 to above the number of matches, windows of 1 to 4,096 documents (the floor is set again per
// window), three parameter settings (exact lengths use the document-at-a-time scorer, no floors). A
// mutant whose bound is 15% too low must fail it.
func TestTfFloorMatchesBruteForce(t *testing.T) {
	r := rand.New(rand.NewSource(9))
	docs := tfCorpus(r, 9000)
	for i := 0; i < 400; i++ {
		docs[r.Intn(len(docs))].Text += " once" // tf = 1 only
	}
	ix, _ := build(t, docs, Options{Analyzer: AnalyzerStandard})
	queries := []string{"alpha", "alpha alpha", "beta", "alpha beta", "alpha gamma", "alpha once", "beta gamma once", "alpha beta gamma f1 f2", "f3 alpha"}
	defer func(b int) { windowDocs = b }(windowDocs)
	for _, p := range []Params{{K1: 0.9, B: 0.4}, {K1: 1.2, B: 0.75}, {K1: 0.9, B: 0.4, ExactLength: true}} {
		if err := ix.SetParams(p); err != nil {
			t.Fatal(err)
		}
		for _, q := range queries {
			for _, k := range []int{1, 3, 10, 100, 20000} {
				for _, w := range []int{1, 7, 256, 4096} {
					windowDocs = w
					checkSearch(t, ix, p, q, k)
				}
			}
		}
	}
	// The mutant: floors from a bound 15% too low must change some result.
	ix.SetParams(Params{K1: 0.9, B: 0.4})
	defer func() { tfFloorBias = 1 }()
	tfFloorBias = 0.85
	caught := false
	for _, q := range queries {
		for _, k := range []int{1, 10, 100} {
			got, _ := ix.Search(t.Context(), q, k)
			want, _ := ix.BruteForce(q, k)
			caught = caught || fmt.Sprint(got) != fmt.Sprint(want)
		}
	}
	if !caught {
		t.Fatal("a tf floor from a bound 15% too low went unnoticed")
	}
}
