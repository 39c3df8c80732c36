package ngram_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/ragbench/ragbench/harness/corpus"
	"github.com/ragbench/ragbench/harness/ngram"
)

// A Counter opened from a Config over a small local index: the phrase count and the co-occurrence of
// two entities within 4 and within 2 tokens, in exact mode (in the second document they are 5 apart).
func ExampleCounter() {
	ctx := context.Background()
	tmp, err := os.MkdirTemp("", "ngram-example-")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(tmp)
	dir := filepath.Join(tmp, "ix")
	docs := corpus.NewSliceReader([]corpus.Document{
		{ID: "1", Text: "Barack Obama was born in Honolulu ."},
		{ID: "2", Text: "Honolulu is in Hawaii . Obama visited Hawaii ."},
	})
	if _, err := ngram.BuildFrom(ctx, docs, dir, ngram.BuildOptions{}); err != nil {
		panic(err)
	}
	var c ngram.Counter
	src, err := ngram.Open(ctx, ngram.Config{Index: dir, Mode: "exact"})
	if err != nil {
		panic(err)
	}
	defer src.Close()
	c = src
	n, _ := c.Count(ctx, "Honolulu")
	co, _ := c.CoOccur(ctx, "Obama", "Honolulu", 4)
	far, _ := c.CoOccur(ctx, "Obama", "Honolulu", 2)
	fmt.Println(n.Count, co.Count, far.Count, co.Approx)
	// Output: 2 1 0 false
}
