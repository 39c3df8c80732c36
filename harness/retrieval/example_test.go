package retrieval_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/ragbench/ragbench/harness/corpus"
	"github.com/ragbench/ragbench/harness/retrieval"
	"github.com/ragbench/ragbench/harness/retrieval/bm25"
	"github.com/ragbench/ragbench/harness/retrieval/index"
)

// A Retriever opened from a config (harness/retrieval/index): the kind, here BM25, is read from the
// directory's meta.json.
func ExampleRetriever() {
	ctx := context.Background()
	tmp, err := os.MkdirTemp("", "index-example-")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(tmp)
	dir := filepath.Join(tmp, "bm25")
	docs := corpus.NewSliceReader([]corpus.Document{
		{ID: "d1", Title: "Eiffel Tower", Text: "The Eiffel Tower is in Paris. It was built in 1889."},
		{ID: "d2", Title: "Berlin", Text: "Berlin is the capital of Germany."},
		{ID: "d3", Title: "Paris", Text: "Paris is the capital of France."},
	})
	if _, err := bm25.Build(ctx, docs, dir, bm25.Options{}); err != nil {
		panic(err)
	}
	ix, err := index.Open(ctx, index.Config{Dir: dir})
	if err != nil {
		panic(err)
	}
	defer ix.Close()
	var r retrieval.Retriever = ix
	hits, err := r.Retrieve(ctx, "capital of France", 2)
	if err != nil {
		panic(err)
	}
	fmt.Println(ix.Kind)
	for _, h := range hits {
		fmt.Println(h.Rank, h.ID, h.Title)
	}
	// Output:
	// bm25
	// 1 d3 Paris
	// 2 d2 Berlin
}
