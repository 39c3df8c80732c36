package index

import (
	"context"
	"fmt"

	"github.com/ragbench/ragbench/datasets"
	"github.com/ragbench/ragbench/harness/retrieval"
	"github.com/ragbench/ragbench/metrics"
)

// Evaluate retrieves eval.MaxK() passages for each example's question from r, in order, and adds
// them to eval with the example's answers and gold documents (metrics.GoldDocsOf with oracle, which
// may be nil). progress, when set, is called after every 1000 examples with the count done. A
// retrieval error stops the evaluation, naming the example.
func Evaluate(ctx context.Context, r retrieval.Retriever, eval *metrics.RetrievalEval, examples []datasets.Example,
	oracle map[string][]datasets.Passage, progress func(done int)) error {
	for i, ex := range examples {
		hits, err := r.Retrieve(ctx, ex.Question, eval.MaxK())
		if err != nil {
			return fmt.Errorf("example %s: %w", ex.ID, err)
		}
		got := make([]metrics.Retrieved, len(hits))
		for j, h := range hits {
			got[j] = metrics.Retrieved{Title: h.Title, Text: h.Text}
		}
		eval.Add(ex.Answers, metrics.GoldDocsOf(ex, oracle), got)
		if progress != nil && (i+1)%1000 == 0 {
			progress(i + 1)
		}
	}
	return nil
}
