package unitindex

import (
	"errors"
	"fmt"

	"github.com/ragbench/ragbench/harness/retrieval"
	"github.com/ragbench/ragbench/harness/retrieval/dense"
)

// Pair is a BM25 and a dense unit index of the same units, as UMG and UMG-P retrieve from.
type Pair struct {
	BM25, Dense *Index
}

// OpenPair opens the BM25 unit index in bm25Dir and the dense one in denseDir (embedding queries with
// emb; nil for an LSA index) at the given sizes, and checks that they index the same units.
func OpenPair(bm25Dir, denseDir string, sizes []int, emb dense.Embedder) (*Pair, error) {
	b, err := Open(bm25Dir, Options{Sizes: sizes, Expert: "bm25"})
	if err != nil {
		return nil, err
	}
	if b.Kind != "bm25" {
		b.Close()
		return nil, fmt.Errorf("unit index %s is a %s unit index, not a BM25 one (build it with index build --kind bm25 --units ...)", bm25Dir, b.Kind)
	}
	d, err := Open(denseDir, Options{Sizes: sizes, Embedder: emb, Expert: "dense"})
	if err != nil {
		b.Close()
		return nil, err
	}
	if d.Kind != "dense" {
		b.Close()
		d.Close()
		return nil, fmt.Errorf("unit index %s is a BM25 unit index, not a dense one (build it with index build --kind dense --units ...)", denseDir)
	}
	if err := SameUnits(b.Table, d.Table); err != nil {
		b.Close()
		d.Close()
		return nil, err
	}
	return &Pair{BM25: b, Dense: d}, nil
}

// Lean returns the lean retrievers of both indexes (Index.Lean), keyed by expert and size.
func (p *Pair) Lean() map[string]retrieval.Retriever {
	out := p.BM25.Lean()
	for k, r := range p.Dense.Lean() {
		out[k] = r
	}
	return out
}

// Close closes both indexes.
func (p *Pair) Close() error {
	return errors.Join(p.Dense.Close(), p.BM25.Close())
}
