package bm25

import (
	"fmt"
	"strings"
	"testing"

	"github.com/ragbench/ragbench/harness/corpus"
)

// TestDenseThresholds checks the encoder's two thresholds at their edges: a term in exactly 1/denseDiv of
// the documents is stored dense and one in a document fewer is not; a dense term's tf >= 2 postings are a
// bitmap when they are in exactly 1/denseHiDiv of the documents, and blocks in one document fewer.
func TestDenseThresholds(t *testing.T) {
	const n = denseDiv * denseHiDiv // both thresholds fall on whole documents
	lo, hi := n/denseDiv, n/denseHiDiv
	var docs []corpus.Document
	for i := range n {
		var w []string
		add := func(word string, times, upto int) {
			if i < upto {
				for range times {
					w = append(w, word)
				}
			}
		}
		add("loat", 1, lo)      // exactly 1/denseDiv: dense, tf = 1 only
		add("lounder", 1, lo-1) // one short: blocks
		add("hiat", 2, hi)      // tf >= 2 in exactly 1/denseHiDiv: dense, tf >= 2 as a bitmap
		add("hiunder", 2, hi-1) // tf >= 2 one short (but dense): dense, tf >= 2 as blocks
		w = append(w, fmt.Sprintf("filler%d", i))
		docs = append(docs, corpus.Document{ID: fmt.Sprint(i), Text: strings.Join(w, " ")})
	}
	ix, _ := build(t, docs, Options{Analyzer: AnalyzerStandard})
	cases := []struct {
		term   string
		kind   byte // kindBlocks or kindDense
		first  int  // the first list's kind
		lists  int
		reason string
	}{
		{"loat", kindDense, listOnes, 1, "df = n/denseDiv must be dense"},
		{"lounder", kindBlocks, listBlocks, 1, "df = n/denseDiv - 1 must be blocks"},
		{"hiat", kindDense, listDense, 1, "tf >= 2 postings = n/denseHiDiv must be a bitmap"},
		{"hiunder", kindDense, listBlocks, 1, "tf >= 2 postings = n/denseHiDiv - 1 must be blocks inside a dense term"},
	}
	for _, c := range cases {
		i, ok := ix.lookup(c.term)
		if !ok {
			t.Fatalf("%s: not in the index", c.term)
		}
		inf := ix.info(i)
		ls, nl, err := ix.lists(inf)
		if err != nil {
			t.Fatalf("%s: %v", c.term, err)
		}
		if got := ix.postings[inf.off]; got != c.kind || nl != c.lists || ls[0].kind != c.first {
			t.Errorf("%s (df %d): kind %d, %d lists, first %d; want %d, %d, %d: %s", c.term, inf.df, got, nl, ls[0].kind,
				c.kind, c.lists, c.first, c.reason)
		}
	}
}
