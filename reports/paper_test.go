package reports

import "testing"

// TestSameMethod covers the name matching of --baseline (published numbers are placed by the cells'
// config refs instead, never by names).
func TestSameMethod(t *testing.T) {
	cases := []struct {
		cell, paper string
		want        bool
		why         string
	}{
		{"quco", "QuCo-RAG", true, "case, punctuation and the RAG suffix do not matter"},
		{"sr-rag", "SR-RAG", true, "same name"},
		{"wo-rag", "Wo-RAG", true, "same name"},
		{"flare-token", "FLARE", true, "QuCo-RAG's FLARE is DRAGIN's token method"},
		{"flare", "FLARE", false, "the registered flare is the official FLARE, not the papers' row"},
		{"quco[window=50]", "QuCo-RAG window=50", true, "a setting matches the words after the method"},
		{"quco[window=50]", "QuCo-RAG window=500", false, "a different setting value"},
		{"quco[window=50]", "QuCo-RAG", false, "a variant is not the default row"},
		{"quco", "QuCo-RAG window=50", false, "the default cell is not a variant row"},
		{"quco[agg=min]", "QuCo-RAG agg=min", true, "aggregation sensitivity row"},
		{"dragin", "DRAGIN", true, "same name"},
		{"fs-rag", "SR-RAG", false, "different methods"},
	}
	for _, c := range cases {
		if got := SameMethod(c.cell, c.paper); got != c.want {
			t.Errorf("SameMethod(%q, %q) = %v, want %v (%s)", c.cell, c.paper, got, c.want, c.why)
		}
	}
}
