package reports

import "testing"

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

func TestSameModel(t *testing.T) {
	cases := []struct {
		gen, model string
		want       bool
		why        string
	}{
		{"allenai/OLMo-2-1124-7B-Instruct at http://127.0.0.1:8000/v1", "OLMo-2-7B", true, "every word of the model is in the label"},
		{"allenai/OLMo-2-1124-13B-Instruct", "OLMo-2-7B", false, "13b is not 7b"},
		{"meta-llama/Meta-Llama-3-8B-Instruct", "Llama-3-8B", true, "Llama 3 8B"},
		{"meta-llama/Llama-3.2-3B-Instruct", "Llama-3-8B", false, "a different Llama"},
		{"Qwen/Qwen2.5-32B-Instruct", "Qwen2.5-32B", true, "Qwen 2.5 32B"},
		{OfflineReader, "OLMo-2-7B", false, "the offline reader is never a paper's model"},
	}
	for _, c := range cases {
		if got := SameModel(c.gen, c.model); got != c.want {
			t.Errorf("SameModel(%q, %q) = %v, want %v (%s)", c.gen, c.model, got, c.want, c.why)
		}
	}
}
