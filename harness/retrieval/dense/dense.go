package dense

import (
	"context"
	"errors"
	"fmt"
	"math"

	"github.com/ragbench/ragbench/harness/retrieval"
)

// Kind says whether texts are queries or passages; embedders that use instruction prefixes (e5, bge,
// Qwen3-Embedding) embed the two differently.
type Kind int

// The kinds of text an Embedder embeds.
const (
	Query Kind = iota
	Passage
)

// String returns "query" or "passage".
func (k Kind) String() string {
	switch k {
	case Query:
		return "query"
	case Passage:
		return "passage"
	}
	return fmt.Sprintf("Kind(%d)", int(k))
}

// Embedder turns texts into vectors of Dim() floats, one per text, in order. Vectors need not be
// normalised; the index normalises them.
type Embedder interface {
	Embed(ctx context.Context, texts []string, kind Kind) ([][]float32, error)
	Dim() int
}

// Result is one scored vector: its row in the index and its inner product with the query.
type Result struct {
	Row   int
	Score float32
}

// ErrDim is returned when a vector's length differs from the index dimension.
var ErrDim = errors.New("dense: vector dimension mismatch")

// normalize scales v to unit L2 norm in place. It returns false for an all-zero vector (left as is) and
// an error for NaN or Inf entries.
func normalize(v []float32) (bool, error) {
	var s float64
	for _, x := range v {
		f := float64(x)
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return false, errors.New("vector has NaN or Inf entries")
		}
		s += f * f
	}
	if s == 0 {
		return false, nil
	}
	inv := float32(1 / math.Sqrt(s))
	for i := range v {
		v[i] *= inv
	}
	return true, nil
}

var _ retrieval.Retriever = (*Index)(nil)
