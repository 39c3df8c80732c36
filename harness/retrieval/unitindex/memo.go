package unitindex

import (
	"context"
	"fmt"
	"sync"

	"github.com/ragbench/ragbench/harness/retrieval/dense"
	"github.com/ragbench/ragbench/harness/retrieval/sparse"
)

// The experts of one unit index search every granularity for the same question: the query is encoded
// once and the vector shared, so that a remote encoder is called once per question and expert, not
// once per granularity. The memo holds the last few queries (questions in flight).

const memoSize = 64

type memo[V any] struct {
	mu    sync.Mutex
	keys  []string
	vals  map[string]V
	calls int64 // encoder calls made (tests)
}

func (m *memo[V]) get(ctx context.Context, q string, f func() (V, error)) (V, error) {
	m.mu.Lock()
	if v, ok := m.vals[q]; ok {
		m.mu.Unlock()
		return v, nil
	}
	m.mu.Unlock()
	v, err := f()
	if err != nil {
		return v, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.calls++
	if m.vals == nil {
		m.vals = map[string]V{}
	}
	if _, ok := m.vals[q]; !ok {
		if len(m.keys) == memoSize {
			delete(m.vals, m.keys[0])
			m.keys = m.keys[1:]
		}
		m.keys = append(m.keys, q)
		m.vals[q] = v
	}
	return v, nil
}

// queryMemoEmbedder shares query embeddings across granularities; documents pass through.
type queryMemoEmbedder struct {
	dense.Embedder
	m memo[[]float32]
}

func (e *queryMemoEmbedder) Embed(ctx context.Context, texts []string, kind dense.Kind) ([][]float32, error) {
	if kind != dense.Query || len(texts) != 1 {
		return e.Embedder.Embed(ctx, texts, kind)
	}
	v, err := e.m.get(ctx, texts[0], func() ([]float32, error) {
		vs, err := e.Embedder.Embed(ctx, texts, kind)
		if err != nil || len(vs) != 1 {
			return nil, errOr(err, len(vs))
		}
		return vs[0], nil
	})
	if err != nil {
		return nil, err
	}
	return [][]float32{v}, nil
}

// queryMemoEncoder shares sparse query encodings across granularities.
type queryMemoEncoder struct {
	sparse.Encoder
	m memo[sparse.Vector]
}

func (e *queryMemoEncoder) Encode(ctx context.Context, texts []string) ([]sparse.Vector, error) {
	if len(texts) != 1 {
		return e.Encoder.Encode(ctx, texts)
	}
	v, err := e.m.get(ctx, texts[0], func() (sparse.Vector, error) {
		vs, err := e.Encoder.Encode(ctx, texts)
		if err != nil || len(vs) != 1 {
			return nil, errOr(err, len(vs))
		}
		return vs[0], nil
	})
	if err != nil {
		return nil, err
	}
	return []sparse.Vector{v}, nil
}

func errOr(err error, n int) error {
	if err != nil {
		return err
	}
	return fmt.Errorf("the encoder returned %d vectors for 1 query", n)
}
