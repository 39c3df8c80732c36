package bm25

import (
	"fmt"
	"math/rand"
	"strings"
	"testing"

	"github.com/ragbench/ragbench/harness/corpus"
)

// TestDocumentTermCounts checks every posting's tf against a count of the raw text, for documents of
// lengths around ddMaxTokens (the largest counted in the worker's per-document table; longer ones are
// counted by vocabulary id), mixed in one batch, with terms repeated many times and new terms appearing
// in long documents first.
func TestDocumentTermCounts(t *testing.T) {
	r := rand.New(rand.NewSource(5))
	lengths := []int{1, 2, ddMaxTokens - 1, ddMaxTokens, ddMaxTokens + 1, 3, 5000, ddMaxTokens, 40, 2 * ddMaxTokens, 7}
	var docs []corpus.Document
	want := map[string]map[int]uint32{} // term -> doc -> tf
	for i := 0; i < 300; i++ {
		n := lengths[i%len(lengths)]
		vocab := 20 + r.Intn(2000) // small vocabularies repeat terms, large ones bring new ones
		words := make([]string, n)
		for j := range words {
			words[j] = fmt.Sprintf("w%d", r.Intn(vocab))
			if want[words[j]] == nil {
				want[words[j]] = map[int]uint32{}
			}
			want[words[j]][i]++
		}
		docs = append(docs, corpus.Document{ID: fmt.Sprint(i), Text: strings.Join(words, " ")})
	}
	ix, _ := build(t, docs, Options{Analyzer: AnalyzerStandard, Fields: FieldsText, Workers: 2})
	for term, byDoc := range want {
		qts, err := ix.prepare(term)
		if err != nil {
			t.Fatal(err)
		}
		got := map[int]uint32{}
		for _, q := range qts {
			for q.cur.next(); q.cur.doc != noDoc; q.cur.next() {
				got[int(q.cur.doc)] = q.cur.tf
			}
		}
		release(qts)
		if len(got) != len(byDoc) {
			t.Fatalf("%s: %d documents, want %d", term, len(got), len(byDoc))
		}
		for d, tf := range byDoc {
			if got[d] != tf {
				t.Fatalf("%s in document %d (%d tokens): tf %d, want %d", term, d, lengths[d%len(lengths)], got[d], tf)
			}
		}
	}
}
