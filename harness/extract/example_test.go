package extract_test

import (
	"context"
	"fmt"

	"github.com/ragbench/ragbench/harness/extract"
)

// The rule-based Extractor, built from a zero Config: a question's entities and (head, relation)
// pairs, and a sentence's triples.
func ExampleExtractor() {
	ctx := context.Background()
	ex, err := extract.New(extract.Config{Backend: extract.BackendRule}, nil)
	if err != nil {
		panic(err)
	}
	q := "Where did Diane Meyer Simon's husband graduate from?"
	ents, _ := ex.Entities(ctx, q)
	pairs, _ := ex.Triplets(ctx, q)
	triples, _ := ex.Triplets(ctx, "Kumbasaram was released in 2017.")
	fmt.Println(ents)
	fmt.Println(pairs)
	fmt.Println(triples)
	// Output:
	// [Diane Meyer Simon]
	// [("Diane Meyer Simon", "husband")]
	// [("Kumbasaram", "released in", "2017")]
}
