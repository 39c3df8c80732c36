package unitindex

import (
	"context"
	"encoding/json"
	"hash/fnv"
	"math"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ragbench/ragbench/harness/corpus"
	"github.com/ragbench/ragbench/harness/retrieval"
	"github.com/ragbench/ragbench/harness/retrieval/sparse"
)

// TestRetrieveIn checks document-scoped search against its brute-force peer: the whole index's ranking
// with every unit of other documents removed. BM25 must agree exactly (ids, order and scores); dense
// on ids and order with scores within float32 rounding of the index's own. Long units are searched
// like any granularity.
func TestRetrieveIn(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	sizes := []int{2, 8, corpus.LongSize}
	uo := corpus.UnitOptions{Sizes: sizes, LongTokens: 40}
	tei := teiUnits(t)
	for _, kind := range []string{"bm25", "dense", "sparse"} {
		if err := Build(ctx, testDocs(), filepath.Join(dir, kind), BuildOptions{Kind: kind, Units: uo, Sparse: tei}); err != nil {
			t.Fatal(err)
		}
	}
	queries := []string{"castle harbour", "volcano matters", "comet sentence xxx", "violin"}
	scopes := [][]string{{"docA"}, {"docC"}, {"docB", "docH"}}
	for _, kind := range []string{"bm25", "dense", "sparse"} {
		ix, err := Open(filepath.Join(dir, kind), Options{Sizes: sizes, Sparse: tei})
		if err != nil {
			t.Fatal(err)
		}
		defer ix.Close()
		if ix.Kind != kind || ix.Lean()[kind+"@long"] == nil {
			t.Fatalf("%s: no long retriever in %v", kind, ix.Lean())
		}
		for name, r := range ix.Lean() {
			sc, ok := r.(retrieval.Scoped)
			if !ok {
				t.Fatalf("%s does not implement retrieval.Scoped", name)
			}
			for _, q := range queries {
				all, err := r.Retrieve(ctx, q, 100000)
				if err != nil {
					t.Fatal(err)
				}
				for _, docs := range scopes {
					in := map[string]bool{}
					for _, d := range docs {
						in[d] = true
					}
					var want []retrieval.Hit
					for _, h := range all {
						if u, _ := ix.Table.Unit(h.ID); in[u.DocID] && len(want) < 7 {
							want = append(want, h)
						}
					}
					got, err := sc.RetrieveIn(ctx, q, 7, docs)
					if err != nil {
						t.Fatal(err)
					}
					if len(got) != len(want) {
						t.Fatalf("%s %q in %v: %d hits, want %d", name, q, docs, len(got), len(want))
					}
					for i := range got {
						tol := 0.0
						if kind == "dense" {
							tol = 1e-5
						}
						if got[i].ID != want[i].ID && math.Abs(got[i].Score-want[i].Score) > tol {
							t.Fatalf("%s %q in %v: hit %d is %s (%v), want %s (%v)", name, q, docs, i, got[i].ID, got[i].Score, want[i].ID, want[i].Score)
						}
						if math.Abs(got[i].Score-want[i].Score) > tol {
							t.Fatalf("%s %q in %v: hit %d score %v, want %v", name, q, docs, i, got[i].Score, want[i].Score)
						}
						if u, _ := ix.Table.Unit(got[i].ID); !in[u.DocID] {
							t.Fatalf("%s: hit %s outside %v", name, got[i].ID, docs)
						}
					}
				}
			}
			if _, err := sc.RetrieveIn(ctx, "castle", 5, []string{"no such page"}); err == nil || !strings.Contains(err.Error(), `"no such page"`) {
				t.Fatalf("%s: unknown document: %v", name, err)
			}
		}
	}
}

// teiUnits is a SPLADE stand-in served in process with text-embeddings-inference's /embed_sparse
// JSON: each lower-cased word hashed into a vocabulary of 5000 with weight 1 + log(tf).
func teiUnits(t *testing.T) *sparse.TEI {
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Inputs []string `json:"inputs"`
		}
		if r.URL.Path != "/embed_sparse" || json.NewDecoder(r.Body).Decode(&req) != nil {
			w.WriteHeader(http.StatusUnprocessableEntity)
			w.Write([]byte(`{"error":"bad request","error_type":"Validation"}`))
			return
		}
		out := make([][]sparse.Entry, len(req.Inputs))
		for i, in := range req.Inputs {
			tf := map[uint32]int{}
			for _, word := range strings.Fields(strings.ToLower(in)) {
				h := fnv.New32a()
				h.Write([]byte(strings.Trim(word, ".,?")))
				tf[h.Sum32()%5000]++
			}
			out[i] = []sparse.Entry{}
			for idx, n := range tf {
				out[i] = append(out[i], sparse.Entry{Index: idx, Value: float32(1 + math.Log(float64(n)))})
			}
		}
		json.NewEncoder(w).Encode(out)
	}))
	t.Cleanup(ts.Close)
	c, err := sparse.NewTEI(sparse.Config{BaseURL: ts.URL, Vocab: 5000})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// countingEncoder counts Encode calls.
type countingEncoder struct {
	sparse.Encoder
	calls int
}

func (c *countingEncoder) Encode(ctx context.Context, texts []string) ([]sparse.Vector, error) {
	c.calls++
	return c.Encoder.Encode(ctx, texts)
}

// TestQueryEncodedOnce: the experts of one unit index encode a question once for all granularities,
// so that a remote encoder is called once per question, not once per granularity.
func TestQueryEncodedOnce(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	tei := teiUnits(t)
	sizes := []int{2, 8, 32}
	if err := Build(ctx, testDocs(), dir, BuildOptions{Kind: "sparse", Units: corpus.UnitOptions{Sizes: sizes}, Sparse: tei}); err != nil {
		t.Fatal(err)
	}
	enc := &countingEncoder{Encoder: tei}
	ix, err := Open(dir, Options{Sizes: sizes, Sparse: enc})
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	for _, q := range []string{"castle harbour", "violin", "castle harbour"} {
		for _, r := range ix.Lean() {
			if _, err := r.Retrieve(ctx, q, 5); err != nil {
				t.Fatal(err)
			}
			if _, err := r.(retrieval.Scoped).RetrieveIn(ctx, q, 5, []string{"docA"}); err != nil {
				t.Fatal(err)
			}
		}
	}
	if enc.calls != 2 {
		t.Fatalf("%d encoder calls for 2 distinct questions over 3 granularities", enc.calls)
	}
}
