package bm25

import (
	"fmt"
	"math/rand"
	"slices"
	"strings"
	"testing"

	"github.com/ragbench/ragbench/harness/corpus"
)

// simdCorpus is a corpus whose block lists have many gap widths (a term every 2 to 3,000 documents, some
// with random gaps), tf widths from 0 (every tf 1) to 6 bits (tfs up to 40), and lists of a length that
// is not a multiple of 16 or 128, so that decode and addBlocks meet short runs, partial steps and last
// blocks.
func simdCorpus(r *rand.Rand, n int) []corpus.Document {
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

// TestSIMDDecodeMatchesBruteForce is the property test of the AVX-512 block unpacking in the whole
// search (with GOEXPERIMENT=simd on a CPU that has it; otherwise both settings run the scalar loops):
// queries over simdCorpus's lists, windows from 7 to 65,536 documents (blocks reaching past a window,
// whole blocks in one), k from 1 to all, the kernels on and off, against the exhaustive scorer.
func TestSIMDDecodeMatchesBruteForce(t *testing.T) {
	r := rand.New(rand.NewSource(28))
	const n = 20011
	ix, _ := build(t, simdCorpus(r, n), Options{Analyzer: AnalyzerStandard})
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
	defer func(s bool, w, m int) { useSIMDDecode, windowDocs, taatMinLists = s, w, m }(useSIMDDecode, windowDocs, taatMinLists)
	for i, query := range queries {
		k := []int{1, 10, 100, 2 * n}[i%4]
		want, err := ix.BruteForce(query, k)
		if err != nil {
			t.Fatal(err)
		}
		for _, w := range []int{7, 512, 8192, 65536} {
			for _, tm := range []int{0, 2} {
				for _, on := range []bool{true, false} {
					useSIMDDecode, windowDocs, taatMinLists = on, w, tm
					got, err := ix.Search(t.Context(), query, k)
					if err != nil {
						t.Fatal(err)
					}
					if !slices.Equal(got, want) {
						t.Fatalf("query %q k=%d window %d taatMin %d simd %v: differs from brute force:\n got %v\nwant %v", query, k, w, tm, on, got, want)
					}
				}
			}
		}
	}
}

// TestSIMDDecodeCursor walks every block list of simdCorpus's terms with next, and again with advance to
// random targets, the kernels on and off, and compares the postings seen: decode's runs from any point of
// a block (after an advance) to its end.
func TestSIMDDecodeCursor(t *testing.T) {
	r := rand.New(rand.NewSource(29))
	const n = 20011
	ix, _ := build(t, simdCorpus(r, n), Options{Analyzer: AnalyzerStandard})
	defer func(s bool) { useSIMDDecode = s }(useSIMDDecode)
	walk := func(term string, on bool, seed int64) (out [][2]uint32) {
		useSIMDDecode = on
		qts, err := ix.prepare(term)
		if err != nil || len(qts) == 0 {
			t.Fatalf("prepare %q: %v, %d terms", term, err, len(qts))
		}
		c := &qts[0].cur
		if c.dense {
			return nil
		}
		rr := rand.New(rand.NewSource(seed))
		c.next()
		for c.doc != noDoc {
			out = append(out, [2]uint32{c.doc, c.tf})
			switch rr.Intn(4) {
			case 0:
				c.advance(c.doc + 1 + uint32(rr.Intn(200)))
			case 1:
				c.advance(c.doc + 1 + uint32(rr.Intn(5000)))
			default:
				c.next()
			}
		}
		return out
	}
	terms := []string{"e2", "e3", "e7", "e45", "e53", "e130", "e997", "e3001", "scatter", "heavy", "few"}
	for i := range 300 {
		terms = append(terms, fmt.Sprintf("w%d", i))
	}
	blocks := 0
	for _, term := range terms {
		for seed := int64(0); seed < 3; seed++ {
			a, b := walk(term, true, seed), walk(term, false, seed)
			if !slices.Equal(a, b) {
				t.Fatalf("term %q seed %d: the kernels' walk differs from the scalar one (%d vs %d postings)", term, seed, len(a), len(b))
			}
			blocks += len(a)
		}
	}
	if blocks == 0 {
		t.Fatal("no block list walked")
	}
}
