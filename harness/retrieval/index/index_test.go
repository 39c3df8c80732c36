package index

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/ragbench/ragbench/harness/corpus"
	"github.com/ragbench/ragbench/harness/retrieval"
	"github.com/ragbench/ragbench/harness/retrieval/bm25"
	"github.com/ragbench/ragbench/harness/retrieval/dense"
	"github.com/ragbench/ragbench/harness/retrieval/elastic"
	"github.com/ragbench/ragbench/internal/testenv"
)

func f64(v float64) *float64 { return &v }

func TestConfigValidate(t *testing.T) {
	cases := []struct {
		name string
		cfg  Config
		want string // substring of the error; "" for valid
	}{
		{"a directory alone: the kind comes from meta.json on Open", Config{Dir: "ix"}, ""},
		{"bm25 with its parameters overridden", Config{Kind: KindBM25, Dir: "ix", BM25: BM25Config{K1: f64(1.2), B: f64(0.75)}}, ""},
		{"k1 = 0 is a valid BM25 (tf ignored)", Config{Dir: "ix", BM25: BM25Config{K1: f64(0)}}, ""},
		{"dense with an OpenAI-compatible embedder", Config{Kind: KindDense, Dir: "ix", Embedder: EmbedderConfig{Model: "e5", BaseURL: "http://127.0.0.1:8080/v1", Preset: "e5"}}, ""},
		{"elastic at a URL", Config{Kind: KindElastic, Elastic: elastic.Config{URL: "http://127.0.0.1:9200"}}, ""},
		{"elastic kNN with its query embedder", Config{Kind: KindElastic, Elastic: elastic.Config{URL: "http://127.0.0.1:9200", KNN: &elastic.KNNConfig{Mode: "exact"}}, Embedder: EmbedderConfig{Model: "e5"}}, ""},
		{"elastic kNN needs an embedder for the queries", Config{Kind: KindElastic, Elastic: elastic.Config{KNN: &elastic.KNNConfig{}}}, "kind elastic with a knn section"},
		{"elastic kNN with an unknown mode", Config{Kind: KindElastic, Elastic: elastic.Config{KNN: &elastic.KNNConfig{Mode: "ivf"}}, Embedder: EmbedderConfig{Model: "e5"}}, `knn.mode "ivf"`},
		{"nothing to open", Config{}, "index.dir is empty"},
		{"an unknown kind is named", Config{Kind: "faiss", Dir: "ix"}, `index.kind "faiss"`},
		{"bm25 without a directory", Config{Kind: KindBM25}, "index.dir is empty"},
		{"b above 1", Config{Dir: "ix", BM25: BM25Config{B: f64(1.5)}}, "index.bm25.b 1.5"},
		{"negative k1", Config{Dir: "ix", BM25: BM25Config{K1: f64(-1)}}, "index.bm25.k1 -1"},
		{"NaN b", Config{Dir: "ix", BM25: BM25Config{B: f64(math.NaN())}}, "index.bm25.b NaN"},
		{"an embedder URL without a model would be ignored", Config{Dir: "ix", Embedder: EmbedderConfig{BaseURL: "http://127.0.0.1:8080/v1"}}, "index.embedder.model is empty"},
		{"an embedder URL without a scheme", Config{Dir: "ix", Embedder: EmbedderConfig{Model: "m", BaseURL: "127.0.0.1:8080"}}, "index.embedder.base_url"},
		{"an unknown preset", Config{Dir: "ix", Embedder: EmbedderConfig{Model: "m", Preset: "gte"}}, "index.embedder.preset"},
		{"a bm25 index takes no embedder", Config{Kind: KindBM25, Dir: "ix", Embedder: EmbedderConfig{Model: "m"}}, "takes no embedder"},
		{"elastic has no directory", Config{Kind: KindElastic, Dir: "ix"}, "kind elastic has no directory"},
		{"elastic credentials do not go in the URL", Config{Kind: KindElastic, Elastic: elastic.Config{URL: "http://u:p@127.0.0.1:9200"}}, "index.elastic"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.cfg.Defaults().Validate()
			if tc.want == "" {
				if err != nil {
					t.Fatalf("valid config rejected: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want an error containing %q", err, tc.want)
			}
		})
	}
}

// passages returns the first n real NQ Wikipedia passages.
func passages(t *testing.T, n int) []corpus.Document {
	t.Helper()
	r, err := corpus.Open(testenv.Data(t, "corpus/nq-wiki-passages.tsv"), "")
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var docs []corpus.Document
	for len(docs) < n {
		d, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		docs = append(docs, d)
	}
	return docs
}

var queries = []string{"who wrote the declaration of independence", "world war", "capital of france", "xyzzy"}

// sameHits checks that the opened index answers as the backend opened by hand.
func sameHits(t *testing.T, got, want retrieval.Retriever) {
	t.Helper()
	ctx := context.Background()
	nonEmpty := false
	for _, q := range queries {
		g, err := got.Retrieve(ctx, q, 5)
		if err != nil {
			t.Fatal(err)
		}
		w, err := want.Retrieve(ctx, q, 5)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(g, w) {
			t.Fatalf("query %q: got %v\nwant %v", q, g, w)
		}
		nonEmpty = nonEmpty || len(g) > 0
	}
	if !nonEmpty {
		t.Fatal("no query found anything: the comparison proves nothing")
	}
}

func TestOpenBM25(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "bm25")
	if _, err := bm25.Build(context.Background(), corpus.NewSliceReader(passages(t, 2000)), dir, bm25.Options{}); err != nil {
		t.Fatal(err)
	}
	ref, err := bm25.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer ref.Close()
	ix, err := Open(context.Background(), Config{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	if ix.Kind != KindBM25 || ix.BM25 == nil || ix.Units != nil {
		t.Fatalf("kind %q, bm25 %v, units %v", ix.Kind, ix.BM25, ix.Units)
	}
	sameHits(t, ix, ref)
	if _, err := ix.Lookup("1"); err == nil || !strings.Contains(err.Error(), "not a unit index") {
		t.Fatalf("lookup on a document index: %v", err)
	}

	// Overridden parameters score as SetParams does.
	p := ref.Params()
	p.K1, p.B, p.ExactLength = 1.5, 0.9, true
	if err := ref.SetParams(p); err != nil {
		t.Fatal(err)
	}
	tuned, err := Open(context.Background(), Config{Dir: dir, BM25: BM25Config{K1: f64(1.5), B: f64(0.9), ExactLength: true}})
	if err != nil {
		t.Fatal(err)
	}
	defer tuned.Close()
	sameHits(t, tuned, ref)
}

func TestOpenDenseLSA(t *testing.T) {
	docs := passages(t, 1500)
	dir := filepath.Join(t.TempDir(), "dense")
	open := func() (corpus.Reader, error) { return corpus.NewSliceReader(docs), nil }
	if err := dense.BuildCorpus(context.Background(), open, dense.EmbedderSpec{LSA: dense.LSAConfig{Dim: 32}}, dir, nil); err != nil {
		t.Fatal(err)
	}
	ref, err := dense.Open(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ref.Close()
	ix, err := Open(context.Background(), Config{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	if ix.Kind != KindDense || ix.Dense == nil {
		t.Fatalf("kind %q", ix.Kind)
	}
	sameHits(t, ix, ref)
	if _, err := Open(context.Background(), Config{Dir: dir, Kind: KindBM25}); err == nil {
		t.Fatal("a dense directory opened as bm25")
	}
}

// embedServer is an OpenAI-compatible /v1/embeddings server with a deterministic hashed
// bag-of-words embedding; it records the Authorization headers it sees.
type embedServer struct {
	mu    sync.Mutex
	auth  []string
	model []string
}

func hashVec(s string) []float32 {
	v := make([]float32, 16)
	for _, w := range strings.Fields(strings.ToLower(s)) {
		h := fnv.New32a()
		h.Write([]byte(w))
		v[h.Sum32()%16]++
	}
	return v
}

func (e *embedServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Input []string `json:"input"`
		Model string   `json:"model"`
	}
	if r.URL.Path != "/v1/embeddings" || json.NewDecoder(r.Body).Decode(&req) != nil {
		http.Error(w, `{"error":{"message":"bad request"}}`, http.StatusBadRequest)
		return
	}
	e.mu.Lock()
	e.auth, e.model = append(e.auth, r.Header.Get("Authorization")), append(e.model, req.Model)
	e.mu.Unlock()
	type item struct {
		Object    string    `json:"object"`
		Index     int       `json:"index"`
		Embedding []float32 `json:"embedding"`
	}
	out := struct {
		Object string `json:"object"`
		Data   []item `json:"data"`
		Model  string `json:"model"`
	}{Object: "list", Model: req.Model}
	for i, s := range req.Input {
		out.Data = append(out.Data, item{Object: "embedding", Index: i, Embedding: hashVec(s)})
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(out)
}

func TestOpenDenseOpenAIEmbedder(t *testing.T) {
	es := &embedServer{}
	srv := httptest.NewServer(es)
	defer srv.Close()
	t.Setenv("OPENAI_BASE_URL", "")
	t.Setenv("RAGBENCH_TEST_EMBED_KEY", "sk-test-from-env")
	ctx := context.Background()
	docs := passages(t, 300)
	dir := filepath.Join(t.TempDir(), "dense")
	build := dense.OpenAIConfig{BaseURL: srv.URL + "/v1", Model: "hash-16", APIKey: "sk-build"}
	open := func() (corpus.Reader, error) { return corpus.NewSliceReader(docs), nil }
	if err := dense.BuildCorpus(ctx, open, dense.EmbedderSpec{Kind: dense.KindOpenAI, OpenAI: build}, dir, nil); err != nil {
		t.Fatal(err)
	}
	emb, err := dense.NewOpenAI(ctx, build)
	if err != nil {
		t.Fatal(err)
	}
	ref, err := dense.Open(dir, emb)
	if err != nil {
		t.Fatal(err)
	}
	defer ref.Close()
	es.auth = nil
	ix, err := Open(ctx, Config{Dir: dir, Embedder: EmbedderConfig{Model: "hash-16", BaseURL: srv.URL + "/v1", APIKeyEnv: "RAGBENCH_TEST_EMBED_KEY"}})
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	sameHits(t, ix, ref)
	es.mu.Lock()
	defer es.mu.Unlock()
	if len(es.auth) == 0 || es.auth[0] != "Bearer sk-test-from-env" || es.model[0] != "hash-16" {
		t.Fatalf("the opened embedder sent authorization %q and model %q; want the key from the environment and hash-16", es.auth, es.model)
	}
}

// buildUnits builds a BM25 unit index of size g (parents of size 4) in dir with its sidecar, as
// `ragbench index build --units` does, and returns the units written.
func buildUnits(t *testing.T, docs []corpus.Document, g int, dir string) map[string]corpus.Unit {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	side, err := os.Create(filepath.Join(dir, corpus.UnitsFile))
	if err != nil {
		t.Fatal(err)
	}
	defer side.Close()
	bw := bufio.NewWriter(side)
	enc := json.NewEncoder(bw)
	out := map[string]corpus.Unit{}
	var unitDocs []corpus.Document
	for _, d := range docs {
		units, err := corpus.Units(corpus.PoolDoc{Document: d}, corpus.UnitOptions{Sizes: []int{g}, ParentSize: 4})
		if err != nil {
			t.Fatal(err)
		}
		for _, u := range units {
			if err := corpus.WriteUnit(enc, u); err != nil {
				t.Fatal(err)
			}
			unitDocs = append(unitDocs, u.Document())
			out[u.ID] = u
		}
	}
	if err := bw.Flush(); err != nil {
		t.Fatal(err)
	}
	if _, err := bm25.Build(context.Background(), corpus.NewSliceReader(unitDocs), dir, bm25.Options{}); err != nil {
		t.Fatal(err)
	}
	return out
}

func TestOpenUnitIndex(t *testing.T) {
	docs := passages(t, 300)
	root := t.TempDir()
	dir := filepath.Join(root, "g2")
	units := buildUnits(t, docs, 2, dir)
	parentUnits := buildUnits(t, docs, 4, filepath.Join(root, "g4"))
	want := map[string]retrieval.UnitSpan{}
	parents := 0
	for id, u := range units {
		want[id] = retrieval.UnitSpan{DocID: u.DocID, Size: 2, Start: u.Start, End: u.End, Parent: u.Parent}
		if u.Parent != "" {
			parents++
		}
	}
	if parents == 0 {
		t.Fatal("no unit has a parent: the test proves nothing")
	}
	parentIx, err := Open(context.Background(), Config{Dir: filepath.Join(root, "g4")})
	if err != nil {
		t.Fatal(err)
	}
	defer parentIx.Close()
	ix, err := Open(context.Background(), Config{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	if len(ix.Units) != len(want) {
		t.Fatalf("%d units loaded, %d written", len(ix.Units), len(want))
	}
	seen, promoted := 0, 0
	for _, q := range queries {
		hits, err := ix.Retrieve(context.Background(), q, 10)
		if err != nil {
			t.Fatal(err)
		}
		for _, h := range hits {
			if h.Unit == nil || *h.Unit != want[h.ID] {
				t.Fatalf("hit %s carries %+v, want %+v", h.ID, h.Unit, want[h.ID])
			}
			if !strings.HasPrefix(h.ID, h.Unit.DocID+"#g2:") {
				t.Fatalf("hit %s has doc id %q", h.ID, h.Unit.DocID)
			}
			seen++
			if h.Unit.Parent == "" {
				continue
			}
			// Parent promotion: the parent, looked up in the parent granularity's index, is the
			// 4-sentence window of the same document that contains the hit.
			p, err := parentIx.Lookup(h.Unit.Parent)
			if err != nil {
				t.Fatal(err)
			}
			pu := parentUnits[h.Unit.Parent]
			if p.ID != pu.ID || p.Text != pu.Text || p.Unit.DocID != h.Unit.DocID || p.Unit.Start > h.Unit.Start || p.Unit.End < h.Unit.End || !strings.Contains(p.Text, h.Text) {
				t.Fatalf("parent of %s (%q): got %s %+v %q", h.ID, h.Text, p.ID, p.Unit, p.Text)
			}
			promoted++
		}
	}
	if seen == 0 || promoted == 0 {
		t.Fatalf("%d hits, %d with a parent", seen, promoted)
	}
	if _, err := parentIx.Lookup("nosuch#g4:0-4"); err == nil || !strings.Contains(err.Error(), "no such unit") {
		t.Fatalf("unknown unit: %v", err)
	}
	side := filepath.Join(dir, corpus.UnitsFile)
	orig, err := os.ReadFile(side)
	if err != nil {
		t.Fatal(err)
	}
	// A sidecar with another number of units than the index is an error on Open.
	if err := os.WriteFile(side, []byte(`{"id":"other#g2:0-2","doc_id":"other","size":2,"start":0,"end":2}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(context.Background(), Config{Dir: dir}); err == nil || !strings.Contains(err.Error(), "lists 1 units") {
		t.Fatalf("short sidecar: %v", err)
	}
	// One with the right count but other ids is an error at query and lookup time, naming the unit.
	renamed := strings.ReplaceAll(string(orig), `{"id":"`, `{"id":"x`)
	if err := os.WriteFile(side, []byte(renamed), 0o644); err != nil {
		t.Fatal(err)
	}
	bad, err := Open(context.Background(), Config{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer bad.Close()
	if _, err := bad.Retrieve(context.Background(), queries[1], 3); err == nil || !strings.Contains(err.Error(), "is not in its units.jsonl") {
		t.Fatalf("mismatched sidecar: %v", err)
	}
	for id := range bad.Units {
		if _, err := bad.Lookup(id); err == nil || !strings.Contains(err.Error(), "does not belong") {
			t.Fatalf("lookup through a mismatched sidecar: %v", err)
		}
		break
	}
	if _, err := parentIx.Lookup(""); err == nil {
		t.Fatal("empty id looked up")
	}
	// A broken sidecar fails Open with the file and line.
	os.WriteFile(filepath.Join(dir, corpus.UnitsFile), []byte(`{"id":"a#g2:0-2","doc_id":"a","size":2,"start":0,"end":2}`+"\n"+`{"id":"b","doc_id":"b","size":2,"start":3,"end":1}`+"\n"), 0o644)
	if _, err := Open(context.Background(), Config{Dir: dir}); err == nil || !strings.Contains(err.Error(), "units.jsonl: line 2") {
		t.Fatalf("broken sidecar: %v", err)
	}
}

func TestOpenElastic(t *testing.T) {
	var mu sync.Mutex
	var paths []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		paths = append(paths, r.Method+" "+r.URL.Path)
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"took":2,"hits":{"total":{"value":2,"relation":"eq"},"max_score":7.5,"hits":[`+
			`{"_index":"wiki","_id":"42","_score":7.5,"_source":{"title":"T","txt":"the text"}},`+
			`{"_index":"wiki","_id":"7","_score":3.25,"_source":{"title":"U","txt":"more text"}}]}}`)
	}))
	defer srv.Close()
	t.Setenv("ELASTIC_URL", "")
	ix, err := Open(context.Background(), Config{Kind: KindElastic, Elastic: elastic.Config{URL: srv.URL, Index: "wiki"}})
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	if ix.Elastic == nil || ix.Kind != KindElastic {
		t.Fatalf("kind %q", ix.Kind)
	}
	hits, err := ix.Retrieve(context.Background(), "who wrote it", 2)
	if err != nil {
		t.Fatal(err)
	}
	want := []retrieval.Hit{{ID: "42", Title: "T", Text: "the text", Score: 7.5, Rank: 1}, {ID: "7", Title: "U", Text: "more text", Score: 3.25, Rank: 2}}
	if !reflect.DeepEqual(hits, want) {
		t.Fatalf("got %+v, want %+v", hits, want)
	}
	if fmt.Sprint(paths) != "[POST /wiki/_search]" {
		t.Fatalf("requests %v", paths)
	}
}

// TestHitJSONUnchanged pins the JSON of a hit without a unit, which every non-unit index returns.
func TestHitJSONUnchanged(t *testing.T) {
	b, _ := json.Marshal(retrieval.Hit{ID: "1", Title: "T", Text: "x", Score: 1.5, Rank: 1})
	if string(b) != `{"id":"1","title":"T","text":"x","score":1.5,"rank":1}` {
		t.Fatalf("hit JSON changed: %s", b)
	}
	b, _ = json.Marshal(retrieval.Hit{ID: "d#g2:0-2", Text: "x", Rank: 1, Unit: &retrieval.UnitSpan{DocID: "d", Size: 2, End: 2, Parent: "d#g8:0-8"}})
	if string(b) != `{"id":"d#g2:0-2","text":"x","score":0,"rank":1,"unit":{"doc_id":"d","size":2,"start":0,"end":2,"parent":"d#g8:0-8"}}` {
		t.Fatalf("unit hit JSON: %s", b)
	}
}

// TestConfigJSON checks that a config survives a run record: JSON out and back, nothing lost.
func TestConfigJSON(t *testing.T) {
	in := Config{Dir: "ix", BM25: BM25Config{K1: f64(1.2), ExactLength: true},
		Embedder: EmbedderConfig{Model: "e5", BaseURL: "http://127.0.0.1:8080/v1", APIKeyEnv: "MY_KEY", Preset: "e5"},
		Elastic:  elastic.Config{URL: "http://127.0.0.1:9200", Index: "wiki"}}
	b, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	var out Config
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(in, out) {
		t.Fatalf("round trip: %+v\n%s", out, b)
	}
	if strings.Contains(string(b), "api_key\"") {
		t.Fatalf("a key field in %s", b)
	}
}

// TestConfigYAML reads the config as docs/retrieval.md shows it.
func TestConfigYAML(t *testing.T) {
	src := "dir: indexes/hotpotqa/g4\nbm25: {k1: 0.9, b: 0.4, exact_length: false}\n" +
		"embedder:\n  model: intfloat/e5-base-v2\n  base_url: http://127.0.0.1:8080/v1\n  preset: e5\n  api_key_env: OPENAI_API_KEY\n"
	var c Config
	if err := yaml.Unmarshal([]byte(src), &c); err != nil {
		t.Fatal(err)
	}
	if c.Dir != "indexes/hotpotqa/g4" || c.BM25.K1 == nil || *c.BM25.K1 != 0.9 || *c.BM25.B != 0.4 || c.Embedder.Preset != "e5" || c.Embedder.APIKeyEnv != "OPENAI_API_KEY" {
		t.Fatalf("parsed %+v", c)
	}
	if err := c.Defaults().Validate(); err != nil {
		t.Fatal(err)
	}
	var e Config
	if err := yaml.Unmarshal([]byte("kind: elastic\nelastic: {url: \"http://127.0.0.1:9200\", index: wiki}\n"), &e); err != nil || e.Elastic.Index != "wiki" || e.Defaults().Validate() != nil {
		t.Fatalf("elastic: %+v %v", e, err)
	}
}
