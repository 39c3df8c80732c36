package bm25

import (
	"math/rand"
	"testing"
)

// TestTermTable: the binary search (the first hashAfter lookups) and then the hash table find every term of the dictionary at its sorted position, and reports
// absent strings (neighbours of real terms, prefixes, extensions, the empty string) as absent, as the
// binary search does.
func TestTermTable(t *testing.T) {
	ix, _ := build(t, randomCorpus(rand.New(rand.NewSource(4)), 2000, 3000), Options{Analyzer: AnalyzerStandard})
	if ix.nTerms < 1000 {
		t.Fatalf("only %d terms", ix.nTerms)
	}
	if ix.nTerms < 3*hashAfter {
		t.Fatalf("only %d terms: the binary search and the table both need testing", ix.nTerms)
	}
	for i := 0; i < ix.nTerms; i++ {
		if n := ix.termTab.lookups.Load(); n <= hashAfter && ix.termTab.slots != nil {
			t.Fatalf("the table was built after %d lookups, want %d", n, hashAfter)
		}
		term := string(ix.term(i))
		if got, ok := ix.lookup(term); !ok || got != i {
			t.Fatalf("term %d %q: lookup gives %d, %v", i, term, got, ok)
		}
		for _, absent := range []string{term + "x", term[:len(term)-1], "~" + term, term + "\x00"} {
			want, wantOK := ix.lookupSorted(absent)
			if got, ok := ix.lookup(absent); ok != wantOK || ok && got != want {
				t.Fatalf("%q: lookup gives %d, %v; binary search %d, %v", absent, got, ok, want, wantOK)
			}
		}
	}
	if _, ok := ix.lookup(""); ok {
		t.Fatal("the empty string was found")
	}
	if ix.termTab.slots == nil || len(ix.termTab.slots) < ix.nTerms {
		t.Fatalf("table of %d slots for %d terms", len(ix.termTab.slots), ix.nTerms)
	}
}
