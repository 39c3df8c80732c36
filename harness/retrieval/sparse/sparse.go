package sparse

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sort"
)

// Entry is one weight of a sparse vector: a vocabulary index and its value.
type Entry struct {
	Index uint32  `json:"index"`
	Value float32 `json:"value"`
}

// Vector is a sparse vector, entries sorted by index, each index once.
type Vector []Entry

// Dot is the dot product of two vectors.
func (v Vector) Dot(w Vector) float64 {
	var s float64
	i, j := 0, 0
	for i < len(v) && j < len(w) {
		switch {
		case v[i].Index < w[j].Index:
			i++
		case v[i].Index > w[j].Index:
			j++
		default:
			s += float64(v[i].Value) * float64(w[j].Value)
			i++
			j++
		}
	}
	return s
}

// Encoder maps texts to sparse vectors over a vocabulary of Vocab() entries.
type Encoder interface {
	Encode(ctx context.Context, texts []string) ([]Vector, error)
	Vocab() int
}

// ErrVocab is returned for a vector with an index outside the declared vocabulary.
var ErrVocab = errors.New("sparse: vocabulary index out of range")

// Check sorts v by index and checks it: every index below vocab, every value finite and non-negative
// (SPLADE's weights are log(1 + ReLU(·))), no index twice.
// what names the vector in errors.
func Check(v Vector, vocab int, what string) (Vector, error) {
	sort.Slice(v, func(i, j int) bool { return v[i].Index < v[j].Index })
	for i, e := range v {
		if int64(e.Index) >= int64(vocab) {
			return nil, fmt.Errorf("%s: %w: index %d, the vocabulary has %d entries", what, ErrVocab, e.Index, vocab)
		}
		if !(e.Value >= 0) || math.IsInf(float64(e.Value), 0) {
			return nil, fmt.Errorf("%s: index %d has weight %v; learned sparse weights are finite and non-negative", what, e.Index, e.Value)
		}
		if i > 0 && v[i-1].Index == e.Index {
			return nil, fmt.Errorf("%s: index %d appears twice", what, e.Index)
		}
	}
	return v, nil
}
