package extract

import (
	"context"
	"fmt"
	"io"
	"strings"
)

// Result is what an extractor finds in one text: for a question its entities and (head, relation)
// pairs, for a sentence its (head, relation, tail) triplets. Backend names the extractor.
type Result struct {
	Entities []string  `json:"entities,omitempty"`
	Pairs    []Triplet `json:"pairs,omitempty"`
	Triplets []Triplet `json:"triplets,omitempty"`
	Backend  string    `json:"backend"`
}

// ExtractQuestion returns the entities and pairs ex finds in a question.
func ExtractQuestion(ctx context.Context, ex Extractor, question string) (Result, error) {
	ents, err := ex.Entities(ctx, question)
	if err != nil {
		return Result{}, err
	}
	pairs, err := ex.Triplets(ctx, question)
	if err != nil {
		return Result{}, err
	}
	return Result{Entities: ents, Pairs: pairs}, nil
}

// ExtractSentence returns the triplets ex finds in a sentence.
func ExtractSentence(ctx context.Context, ex Extractor, sentence string) (Result, error) {
	ts, err := ex.Triplets(ctx, sentence)
	return Result{Triplets: ts}, err
}

// WriteText writes one tab-separated record per line: "entity E", then "pair H R" or "triple H R T"
// for each pair and triplet. Tabs and newlines inside a field become spaces.
func (r Result) WriteText(w io.Writer) {
	clean := strings.NewReplacer("\t", " ", "\n", " ").Replace
	for _, e := range r.Entities {
		fmt.Fprintf(w, "entity\t%s\n", clean(e))
	}
	for _, t := range append(r.Pairs, r.Triplets...) {
		if t.IsPair() {
			fmt.Fprintf(w, "pair\t%s\t%s\n", clean(t.Head), clean(t.Relation))
		} else {
			fmt.Fprintf(w, "triple\t%s\t%s\t%s\n", clean(t.Head), clean(t.Relation), clean(t.Tail))
		}
	}
}
