package unitindex

import (
	"context"
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/ragbench/ragbench/harness/corpus"
	"github.com/ragbench/ragbench/harness/retrieval"
	"github.com/ragbench/ragbench/harness/retrieval/dense"
	"github.com/ragbench/ragbench/harness/retrieval/sparse"
)

// Document scope: the lean retrievers also implement retrieval.Scoped, searching only the units of
// given documents, exactly: BM25 scores the whole index's matches and keeps those documents' units
// (the scores are the pool's, so the IDF is the pool's too); dense scores those documents' unit
// vectors one by one against the normalised query. Either way the cost grows with the matches or
// units of the documents searched, not with k.

// DocUnits returns the ordinals, in index order, of document doc's units of granularity g; ok is false
// when the table holds no unit of doc at g.
func (t *Table) DocUnits(g int, doc string) (rows []int32, ok bool) {
	t.docOnce.Do(t.indexDocs)
	rows, ok = t.docRows[g][doc]
	return rows, ok
}

// HasDoc reports whether the table holds units of doc.
func (t *Table) HasDoc(doc string) bool {
	t.docOnce.Do(t.indexDocs)
	for _, m := range t.docRows {
		if _, ok := m[doc]; ok {
			return true
		}
	}
	return false
}

func (t *Table) indexDocs() {
	t.docRows = map[int]map[string][]int32{}
	for g, ids := range t.ids {
		m := map[string][]int32{}
		for o, id := range ids {
			d := t.units[id].DocID
			m[d] = append(m[d], int32(o))
		}
		t.docRows[g] = m
	}
}

// scopeRows returns the sorted ordinals of the units of docs at g; a document without units at g is
// an error naming it.
func (t *Table) scopeRows(g int, docs []string) ([]int32, error) {
	var rows []int32
	for _, d := range docs {
		r, ok := t.DocUnits(g, d)
		if !ok {
			return nil, fmt.Errorf("unit index %s: no unit of document %q at granularity %s (is the question's document in the corpus?)", t.dir, d, corpus.SizeName(g))
		}
		rows = append(rows, r...)
	}
	if len(docs) > 1 {
		sort.Slice(rows, func(i, j int) bool { return rows[i] < rows[j] })
	}
	return rows, nil
}

// RetrieveIn implements retrieval.Scoped.
func (r *leanBM25) RetrieveIn(ctx context.Context, query string, k int, docs []string) ([]retrieval.Hit, error) {
	rows, err := r.t.scopeRows(r.g, docs)
	if err != nil || k <= 0 {
		return nil, err
	}
	keep := make(map[uint32]bool, len(rows))
	for _, o := range rows {
		keep[uint32(o)] = true
	}
	// Every unit the query matches, best first; those of docs keep their order.
	top, err := r.ix.Search(ctx, query, r.ix.Len())
	if err != nil {
		return nil, err
	}
	in := top[:0]
	for _, s := range top {
		if keep[s.Doc] {
			in = append(in, s)
			if len(in) == k {
				break
			}
		}
	}
	return r.t.hits(r.g, len(in), func(i int) (int, float64) { return int(in[i].Doc), in[i].Score })
}

// RetrieveIn implements retrieval.Scoped.
func (r *leanDense) RetrieveIn(ctx context.Context, query string, k int, docs []string) ([]retrieval.Hit, error) {
	rows, err := r.t.scopeRows(r.g, docs)
	if err != nil || k <= 0 {
		return nil, err
	}
	if strings.TrimSpace(query) == "" {
		return []retrieval.Hit{}, nil
	}
	vecs, err := r.emb.Embed(ctx, []string{query}, dense.Query)
	if err != nil {
		return nil, fmt.Errorf("dense search %s: embed the query: %w", r.name, err)
	}
	if len(vecs) != 1 {
		return nil, fmt.Errorf("dense search %s: the embedder returned %d vectors for 1 query", r.name, len(vecs))
	}
	q := vecs[0]
	if len(q) != r.ix.Dim() {
		return nil, fmt.Errorf("dense search %s: %w: the embedder returned %d dimensions, the index holds %d", r.name, dense.ErrDim, len(q), r.ix.Dim())
	}
	var norm float64
	for _, x := range q {
		norm += float64(x) * float64(x)
	}
	if norm == 0 {
		return []retrieval.Hit{}, nil
	}
	inv := 1 / math.Sqrt(norm)
	type scored struct {
		row   int32
		score float64
	}
	all := make([]scored, len(rows))
	for i, o := range rows {
		v := r.ix.Vector(int(o))
		var s float64
		for j, x := range q {
			s += float64(x) * float64(v[j])
		}
		all[i] = scored{o, s * inv}
	}
	sort.SliceStable(all, func(i, j int) bool { return all[i].score > all[j].score })
	if len(all) > k {
		all = all[:k]
	}
	return r.t.hits(r.g, len(all), func(i int) (int, float64) { return int(all[i].row), all[i].score })
}

// leanSparse searches a sparse unit index exactly, naming hits from the unit table.
type leanSparse struct {
	ix *sparse.Index
	t  *Table
	g  int
}

func (r *leanSparse) encode(ctx context.Context, query string) (sparse.Vector, error) {
	q, err := r.ix.Encode(ctx, query)
	if err != nil {
		return nil, fmt.Errorf("sparse search %s/g%s: %w", r.t.dir, corpus.SizeName(r.g), err)
	}
	return q, nil
}

func (r *leanSparse) Retrieve(ctx context.Context, query string, k int) ([]retrieval.Hit, error) {
	if strings.TrimSpace(query) == "" {
		return []retrieval.Hit{}, nil
	}
	q, err := r.encode(ctx, query)
	if err != nil {
		return nil, err
	}
	res := r.ix.Search(q, k)
	return r.t.hits(r.g, len(res), func(i int) (int, float64) { return res[i].Row, res[i].Score })
}

// RetrieveIn implements retrieval.Scoped.
func (r *leanSparse) RetrieveIn(ctx context.Context, query string, k int, docs []string) ([]retrieval.Hit, error) {
	rows, err := r.t.scopeRows(r.g, docs)
	if err != nil || k <= 0 {
		return nil, err
	}
	if strings.TrimSpace(query) == "" {
		return []retrieval.Hit{}, nil
	}
	q, err := r.encode(ctx, query)
	if err != nil {
		return nil, err
	}
	res := r.ix.SearchRows(q, k, rows)
	return r.t.hits(r.g, len(res), func(i int) (int, float64) { return res[i].Row, res[i].Score })
}
