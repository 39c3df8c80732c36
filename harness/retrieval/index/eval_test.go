package index

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/ragbench/ragbench/datasets"
	"github.com/ragbench/ragbench/harness/retrieval"
	"github.com/ragbench/ragbench/metrics"
)

// fixedRetriever answers every question with the same passages, or fails on "fail".
type fixedRetriever []retrieval.Hit

func (f fixedRetriever) Retrieve(_ context.Context, q string, k int) ([]retrieval.Hit, error) {
	if q == "fail" {
		return nil, errors.New("boom")
	}
	return f[:min(k, len(f))], nil
}

func TestEvaluate(t *testing.T) {
	r := fixedRetriever{{Title: "A", Text: "Paris is in France"}, {Title: "B", Text: "Berlin"}}
	examples := make([]datasets.Example, 2000)
	for i := range examples {
		examples[i] = datasets.Example{ID: "x", Question: "q", Answers: []string{"Berlin"},
			SupportingFacts: []datasets.SupportingFact{{Title: "B"}}}
	}
	eval, err := metrics.NewRetrievalEval([]int{1, 2})
	if err != nil {
		t.Fatal(err)
	}
	var calls []int
	if err := Evaluate(context.Background(), r, eval, examples, nil, func(n int) { calls = append(calls, n) }); err != nil {
		t.Fatal(err)
	}
	rows := eval.Rows()
	cases := []struct {
		ok  bool
		why string
	}{
		{eval.Examples() == 2000, "every example added"},
		{rows[0].ARSubstring == 0 && rows[1].ARSubstring == 1, "the answer is in the second passage: AR@1 0, AR@2 1"},
		{rows[0].GoldRecall == 0 && rows[1].GoldRecall == 1 && rows[1].GoldExamples == 2000, "the gold title is the second hit"},
		{len(calls) == 2 && calls[0] == 1000 && calls[1] == 2000, "progress every 1000 examples"},
	}
	for _, c := range cases {
		if !c.ok {
			t.Errorf("%s: rows %+v, progress %v", c.why, rows, calls)
		}
	}
	bad := []datasets.Example{{ID: "e7", Question: "fail"}}
	if err := Evaluate(context.Background(), r, eval, bad, nil, nil); err == nil || !strings.Contains(err.Error(), "example e7") {
		t.Errorf("a failing retrieval: %v, want an error naming the example", err)
	}
}
