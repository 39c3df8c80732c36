package metrics

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/ragbench/ragbench/internal/testenv"
)

// TestExtractExemplars renders the papers' own few-shot chain-of-thought exemplars with their output
// template ("{cot} So the answer is {answer}.") and checks that every extraction rule for the dataset
// recovers an answer that normalises to the exemplar's answer: the model output these rules were
// written for must score EM 1.
func TestExtractExemplars(t *testing.T) {
	path := testenv.Reference(t, "quco-rag/exemplars.json")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var ref struct {
		OutputTemplate string `json:"output_template"`
		Exemplars      map[string][]struct {
			Question, Cot, Answer string
		} `json:"exemplars"`
	}
	if err := json.Unmarshal(data, &ref); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	rules := map[string][]AnswerRule{
		"hotpotqa":        {ExtractDRAGINHotpotQA, ExtractQuCoHotpotQA},
		"2wikimultihopqa": {ExtractDRAGIN2Wiki, ExtractQuCo2Wiki},
	}
	for ds, exs := range ref.Exemplars {
		if len(exs) == 0 {
			t.Fatalf("%s: no exemplars", ds)
		}
		for _, ex := range exs {
			out := strings.NewReplacer("{cot}", ex.Cot, "{answer}", ex.Answer).Replace(ref.OutputTemplate)
			for _, rule := range rules[ds] {
				got := rule.Extract(out)
				if Normalize(got) != Normalize(ex.Answer) {
					t.Errorf("%s %s: extracted %q from %q, want %q", ds, rule, got, out, ex.Answer)
				}
			}
		}
	}
}
