package extract

import (
	"context"
	"strings"
)

// Extractor finds the entities of a question and the knowledge triples of a sentence.
type Extractor interface {
	// Entities returns the key entities of a question, in order of appearance, without duplicates.
	Entities(ctx context.Context, question string) ([]string, error)
	// Triplets returns the knowledge triples a sentence states. A question states no tail, so for a
	// question the result holds (head, relation) pairs: triplets with an empty Tail (see Triplet.IsPair).
	Triplets(ctx context.Context, sentence string) ([]Triplet, error)
}

// Triplet is a (head, relation, tail) knowledge triple, such as ("Kumbasaram", "released in", "2017").
// A (head, relation) pair, which is what a question gives since its tail is the unknown answer, is a
// Triplet with an empty Tail.
type Triplet struct {
	Head     string `json:"head"`
	Relation string `json:"relation"`
	Tail     string `json:"tail,omitempty"`
}

// IsPair reports whether t is a (head, relation) pair without a tail.
func (t Triplet) IsPair() bool { return t.Tail == "" }

// String formats t as ("head", "relation", "tail") or ("head", "relation").
func (t Triplet) String() string {
	var b strings.Builder
	b.WriteString("(")
	b.WriteString(quote(t.Head))
	b.WriteString(", ")
	b.WriteString(quote(t.Relation))
	if !t.IsPair() {
		b.WriteString(", ")
		b.WriteString(quote(t.Tail))
	}
	b.WriteString(")")
	return b.String()
}

func quote(s string) string { return `"` + strings.ReplaceAll(s, `"`, `\"`) + `"` }

// dedupe removes empty and repeated strings (compared case-insensitively after trimming), keeping the
// first spelling and the order.
func dedupe(in []string) []string {
	seen := make(map[string]bool, len(in))
	out := in[:0:0]
	for _, s := range in {
		s = strings.TrimSpace(s)
		k := strings.ToLower(s)
		if s == "" || seen[k] {
			continue
		}
		seen[k] = true
		out = append(out, s)
	}
	return out
}
