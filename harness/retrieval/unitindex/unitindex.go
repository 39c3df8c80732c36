// Package unitindex opens a unit index — the directory `ragbench index build --units 2,4,8,16,32,long`
// writes, one BM25, dense or sparse (SPLADE) index per granularity in OUT/gN (OUT/glong for LongRAG's
// units) with its unit table OUT/gN/units.jsonl — as named retrievers ("bm25@4", "dense@32",
// "splade@long") and a unit table that gives every unit's document, sentence span, token length,
// parent and text by id. Its lean retrievers also search within given documents
// (retrieval.Scoped, the long-document scope), and a query encoder given to Open is called once per
// question for all granularities.
//
// It is what the multi-granularity methods (UMG-RAG, UMGP-RAG) and their baselines read their
// experts and unit spans from; Build writes the same layout from documents in memory (the runner's
// on-demand unit indexes). It does not fuse anything (harness/retrieval/fusion does).
package unitindex

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"

	"github.com/ragbench/ragbench/harness/corpus"
	"github.com/ragbench/ragbench/harness/retrieval"
	"github.com/ragbench/ragbench/harness/retrieval/bm25"
	"github.com/ragbench/ragbench/harness/retrieval/dense"
	"github.com/ragbench/ragbench/harness/retrieval/sparse"
)

// UnitsFile is the unit table of one granularity, beside its index.
const UnitsFile = corpus.UnitsFile

// DocFunc returns the stored unit of ordinal i of one granularity's index (id and text).
type DocFunc func(i int) (id, text string, err error)

// row locates a unit in its granularity's index.
type row struct {
	g, i int
}

// Table is the unit table of a unit index: every unit's bookkeeping (corpus.Unit without text) by id,
// and, when the granularity's index is attached, its text. It is read-only after loading and safe for
// concurrent use.
type Table struct {
	dir    string
	units  map[string]corpus.Unit
	rows   map[string]row
	sizes  map[int]int      // granularity -> units
	ids    map[int][]string // granularity -> unit id by ordinal
	titles map[int][]string // granularity -> unit title by ordinal
	docs   map[int]DocFunc
	// docRows maps granularity -> document -> its units' ordinals (built on first use).
	docOnce sync.Once
	docRows map[int]map[string][]int32
}

// LoadTable reads DIR/gN/units.jsonl for every size. A size without its file is an error naming the
// granularity and the path; a malformed line is an error naming the file and line.
func LoadTable(dir string, sizes []int) (*Table, error) {
	if len(sizes) == 0 {
		return nil, errors.New("unitindex: no granularities given")
	}
	t := &Table{dir: dir, units: map[string]corpus.Unit{}, rows: map[string]row{}, sizes: map[int]int{}, ids: map[int][]string{}, titles: map[int][]string{}, docs: map[int]DocFunc{}}
	for _, g := range sizes {
		if _, dup := t.sizes[g]; dup {
			continue
		}
		path := filepath.Join(dir, "g"+corpus.SizeName(g), UnitsFile)
		f, err := os.Open(path)
		if errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("unit index %s has no granularity %s: %s is missing (build it with ragbench index build --units %s)", dir, corpus.SizeName(g), path, sizeList(sizes))
		}
		if err != nil {
			return nil, fmt.Errorf("unit index: %w", err)
		}
		sc := bufio.NewScanner(f)
		sc.Buffer(make([]byte, 1<<20), 64<<20)
		n := 0
		for sc.Scan() {
			var u corpus.Unit
			if err := json.Unmarshal(sc.Bytes(), &u); err != nil {
				f.Close()
				return nil, fmt.Errorf("unit index %s:%d: %w", path, n+1, err)
			}
			if u.ID == "" || u.Size != g || u.End < u.Start {
				f.Close()
				return nil, fmt.Errorf("unit index %s:%d: unit %q has size %d and span %d-%d, want size %d", path, n+1, u.ID, u.Size, u.Start, u.End, g)
			}
			if _, dup := t.units[u.ID]; dup {
				f.Close()
				return nil, fmt.Errorf("unit index %s:%d: unit %q appears twice", path, n+1, u.ID)
			}
			t.units[u.ID] = u
			t.rows[u.ID] = row{g, n}
			t.ids[g] = append(t.ids[g], u.ID)
			t.titles[g] = append(t.titles[g], u.Title)
			n++
		}
		err = sc.Err()
		f.Close()
		if err != nil {
			return nil, fmt.Errorf("unit index %s: %w", path, err)
		}
		t.sizes[g] = n
	}
	return t, nil
}

func sizeList(sizes []int) string {
	s := append([]int(nil), sizes...)
	sort.Ints(s)
	out := ""
	for i, g := range s {
		if i > 0 {
			out += ","
		}
		out += corpus.SizeName(g)
	}
	return out
}

// Attach gives the table the stored texts of granularity g (the index whose ordinals are the lines
// of its units.jsonl).
func (t *Table) Attach(g int, docs DocFunc) { t.docs[g] = docs }

// Unit returns a unit's bookkeeping (its Text is empty; see Text).
func (t *Table) Unit(id string) (corpus.Unit, bool) {
	u, ok := t.units[id]
	return u, ok
}

// Len returns the number of units of granularity g.
func (t *Table) Len(g int) int { return t.sizes[g] }

// Text returns a unit's stored text, read from its granularity's index. It checks that the stored
// document is the unit (the table and the index were written together).
func (t *Table) Text(ctx context.Context, id string) (string, error) {
	r, ok := t.rows[id]
	if !ok {
		return "", fmt.Errorf("unit index %s: no unit %q", t.dir, id)
	}
	docs := t.docs[r.g]
	if docs == nil {
		return "", fmt.Errorf("unit index %s: granularity %s has no index attached for unit texts", t.dir, corpus.SizeName(r.g))
	}
	got, text, err := docs(r.i)
	if err != nil {
		return "", err
	}
	if got != id {
		return "", fmt.Errorf("unit index %s: g%s/%s line %d is %q but the index stores %q there: rebuild the index", t.dir, corpus.SizeName(r.g), UnitsFile, r.i+1, id, got)
	}
	return text, nil
}

// DefaultSizes are the granularities a unit index holds by default: UMG-RAG's 2, 4, 8, 16 and 32
// sentences and the long units of the LongRAG baseline (corpus.LongSize).
func DefaultSizes() []int { return []int{2, 4, 8, 16, 32, corpus.LongSize} }

// Options configure Open.
type Options struct {
	// Sizes are the granularities to open (default DefaultSizes).
	Sizes []int
	// Embedder embeds queries for dense indexes (nil: the LSA model saved in each index, or the
	// OpenAI-compatible endpoint recorded in it).
	Embedder dense.Embedder
	// Expert names the expert in retriever names ("bm25@4"); default the index kind, "bm25" or
	// "dense".
	Expert string
	// BM25 overrides the BM25 parameters (nil: each index's own).
	BM25 *bm25.Params
	// Sparse encodes queries for sparse indexes (nil: the TEI server recorded in each index).
	Sparse sparse.Encoder
}

// Index is an opened unit index.
type Index struct {
	Dir string
	// Kind is "bm25", "dense" or "sparse".
	Kind string
	// Expert is the name used in Retrievers' keys.
	Expert string
	// Table is the unit table, with every granularity's texts attached.
	Table   *Table
	retr    map[int]retrieval.Retriever
	lean    map[int]retrieval.Retriever
	closers []func() error
}

// Open opens DIR/gN for every size as one index of one kind (all BM25 or all dense) with its unit
// table. A missing granularity, a directory that is not an index, or indexes of mixed kinds are errors
// naming the directory.
func Open(dir string, o Options) (*Index, error) {
	if len(o.Sizes) == 0 {
		o.Sizes = DefaultSizes()
	}
	t, err := LoadTable(dir, o.Sizes)
	if err != nil {
		return nil, err
	}
	ix := &Index{Dir: dir, Table: t, retr: map[int]retrieval.Retriever{}, lean: map[int]retrieval.Retriever{}}
	// A given encoder serves every granularity: one call per question (memo.go).
	if o.Embedder != nil {
		o.Embedder = &queryMemoEmbedder{Embedder: o.Embedder}
	}
	if o.Sparse != nil {
		o.Sparse = &queryMemoEncoder{Encoder: o.Sparse}
	}
	fail := func(err error) (*Index, error) {
		ix.Close()
		return nil, err
	}
	for _, g := range o.Sizes {
		if ix.retr[g] != nil {
			continue
		}
		sub := filepath.Join(dir, "g"+corpus.SizeName(g))
		b, err := os.ReadFile(filepath.Join(sub, "meta.json"))
		if err != nil {
			return fail(fmt.Errorf("unit index %s, granularity %s: not an index: %w", dir, corpus.SizeName(g), err))
		}
		var head struct {
			Format string `json:"format"`
		}
		if err := json.Unmarshal(b, &head); err != nil {
			return fail(fmt.Errorf("unit index %s: meta.json: %w", sub, err))
		}
		kind := "dense"
		switch head.Format {
		case "ragbench-bm25":
			kind = "bm25"
		case sparse.Format:
			kind = "sparse"
		}
		if ix.Kind != "" && ix.Kind != kind {
			return fail(fmt.Errorf("unit index %s: granularity %s is a %s index, the others %s", dir, corpus.SizeName(g), kind, ix.Kind))
		}
		ix.Kind = kind
		var n int
		if kind == "sparse" {
			s, err := sparse.Open(sub, o.Sparse)
			if err != nil {
				return fail(fmt.Errorf("unit index %s, granularity %s: %w", dir, corpus.SizeName(g), err))
			}
			ix.closers = append(ix.closers, s.Close)
			ix.retr[g] = s
			ix.lean[g] = &leanSparse{ix: s, t: t, g: g}
			n = s.Len()
			t.Attach(g, func(i int) (string, string, error) {
				doc, err := s.Doc(i)
				return doc.ID, doc.Text, err
			})
		} else if kind == "bm25" {
			b, err := bm25.Open(sub)
			if err != nil {
				return fail(err)
			}
			ix.closers = append(ix.closers, b.Close)
			if o.BM25 != nil {
				if err := b.SetParams(*o.BM25); err != nil {
					return fail(err)
				}
			}
			ix.retr[g] = b
			ix.lean[g] = &leanBM25{ix: b, t: t, g: g}
			n = b.Len()
			t.Attach(g, func(i int) (string, string, error) {
				id, _, text, err := b.Doc(i)
				return id, text, err
			})
		} else {
			emb := o.Embedder
			if emb == nil {
				// The LSA model saved in the index, loaded here too so that the lean retriever
				// can embed queries itself; an index built through an OpenAI-compatible endpoint
				// reconnects in dense.Open and its lean retriever reads hits in full.
				if l, err := dense.LoadLSA(filepath.Join(sub, "lsa.bin")); err == nil {
					emb = l
				}
			}
			d, err := dense.Open(sub, emb)
			if err != nil {
				return fail(fmt.Errorf("unit index %s, granularity %s: %w", dir, corpus.SizeName(g), err))
			}
			ix.closers = append(ix.closers, d.Close)
			ix.retr[g] = d
			if emb != nil {
				ix.lean[g] = &leanDense{ix: d, emb: emb, t: t, g: g, name: fmt.Sprintf("%s/g%s", dir, corpus.SizeName(g))}
			} else {
				ix.lean[g] = d
			}
			n = d.Len()
			t.Attach(g, func(i int) (string, string, error) {
				doc, err := d.Doc(i)
				return doc.ID, doc.Text, err
			})
		}
		if n != t.Len(g) {
			return fail(fmt.Errorf("unit index %s: g%s holds %d documents but its %s lists %d units: rebuild the index", dir, corpus.SizeName(g), n, UnitsFile, t.Len(g)))
		}
	}
	ix.Expert = o.Expert
	if ix.Expert == "" {
		ix.Expert = ix.Kind
	}
	return ix, nil
}

// Retrievers returns the index's retrievers named "EXPERT@G".
func (ix *Index) Retrievers() map[string]retrieval.Retriever {
	out := make(map[string]retrieval.Retriever, len(ix.retr))
	for g, r := range ix.retr {
		out[ix.Expert+"@"+corpus.SizeName(g)] = r
	}
	return out
}

// Lean returns retrievers named like Retrievers' that return each hit's id, title and score without
// its text (Hit.Text is empty; read it with Table.Text). The multi-granularity methods need the
// texts of the few units they select only, not of the hundred units each expert returns.
func (ix *Index) Lean() map[string]retrieval.Retriever {
	out := make(map[string]retrieval.Retriever, len(ix.lean))
	for g, r := range ix.lean {
		out[ix.Expert+"@"+corpus.SizeName(g)] = r
	}
	return out
}

// leanBM25 searches a BM25 unit index and names hits from the unit table.
type leanBM25 struct {
	ix *bm25.Index
	t  *Table
	g  int
}

func (r *leanBM25) Retrieve(ctx context.Context, query string, k int) ([]retrieval.Hit, error) {
	top, err := r.ix.Search(ctx, query, k)
	if err != nil {
		return nil, err
	}
	return r.t.hits(r.g, len(top), func(i int) (int, float64) { return int(top[i].Doc), top[i].Score })
}

// leanDense embeds the query and searches a dense unit index exactly, naming hits from the unit table.
type leanDense struct {
	ix   *dense.Index
	emb  dense.Embedder
	t    *Table
	g    int
	name string
}

func (r *leanDense) Retrieve(ctx context.Context, query string, k int) ([]retrieval.Hit, error) {
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
	res, err := r.ix.SearchVectors(ctx, vecs, k)
	if err != nil {
		return nil, fmt.Errorf("dense search %s: %w", r.name, err)
	}
	top := res[0]
	return r.t.hits(r.g, len(top), func(i int) (int, float64) { return top[i].Row, float64(top[i].Score) })
}

// hits names n search results of granularity g (ordinal and score of each, best first).
func (t *Table) hits(g, n int, at func(i int) (int, float64)) ([]retrieval.Hit, error) {
	ids := t.ids[g]
	out := make([]retrieval.Hit, n)
	for i := range out {
		o, s := at(i)
		if o < 0 || o >= len(ids) {
			return nil, fmt.Errorf("unit index %s: g%s hit %d is outside its unit table (%d units): rebuild the index", t.dir, corpus.SizeName(g), o, len(ids))
		}
		id := ids[o]
		out[i] = retrieval.Hit{ID: id, Title: t.titles[g][o], Score: s, Rank: i + 1}
	}
	return out, nil
}

// Close closes every granularity's index.
func (ix *Index) Close() error {
	var first error
	for _, c := range ix.closers {
		if err := c(); err != nil && first == nil {
			first = err
		}
	}
	ix.closers = nil
	return first
}

// SameUnits checks that two tables were cut the same way (same units at every granularity of a),
// so that either can serve the other's spans.
func SameUnits(a, b *Table) error {
	for g, n := range a.sizes {
		if m, ok := b.sizes[g]; ok && m != n {
			return fmt.Errorf("unit indexes %s and %s differ at granularity %s (%d and %d units): build both from the same corpus with the same --units, --stride and --parent", a.dir, b.dir, corpus.SizeName(g), n, m)
		}
	}
	for id, u := range a.units {
		if v, ok := b.units[id]; ok && (u.Start != v.Start || u.End != v.End || u.Parent != v.Parent) {
			return fmt.Errorf("unit indexes %s and %s disagree on unit %q", a.dir, b.dir, id)
		}
	}
	return nil
}
