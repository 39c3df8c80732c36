package elastic

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/ragbench/ragbench/harness/retrieval/dense"
)

// knnCluster is an in-process Elasticsearch 8 or OpenSearch 2 holding one index: it keeps the mapping
// and documents it is sent, answers _mapping, _bulk and _msearch with each engine's JSON (scores as
// each engine computes them for cosine), and scores kNN exactly (its "HNSW" is exhaustive). Requests
// can be made to fail: a bulk request by number, a search with a partial shard failure.
type knnCluster struct {
	t         *testing.T
	engine    string
	mu        sync.Mutex
	mapping   map[string]any
	docs      map[string]map[string]any
	order     []string
	indexed   map[string]int // times each id was indexed
	bulks     int
	failBulk  int  // answer this bulk request (1-based) with a 400, once
	shardFail bool // answer searches with one failed shard of two
	searches  []map[string]any
}

func newKNNCluster(t *testing.T, engine string) (*knnCluster, Config) {
	k := &knnCluster{t: t, engine: engine, docs: map[string]map[string]any{}, indexed: map[string]int{}}
	srv := httptest.NewServer(k)
	t.Cleanup(srv.Close)
	t.Setenv("ELASTIC_URL", "")
	t.Setenv("ELASTIC_API_KEY", "")
	t.Setenv("ELASTIC_USERNAME", "")
	return k, Config{URL: srv.URL, Index: "wiki", Backoff: 1, MaxRetries: 1, KNN: &KNNConfig{}}
}

func (k *knnCluster) errorJSON(w http.ResponseWriter, status int, typ, reason string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	fmt.Fprintf(w, `{"error":{"root_cause":[{"type":%q,"reason":%q}],"type":%q,"reason":%q},"status":%d}`, typ, reason, typ, reason, status)
}

func (k *knnCluster) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	k.mu.Lock()
	defer k.mu.Unlock()
	body, _ := io.ReadAll(r.Body)
	switch {
	case r.Method == http.MethodGet && r.URL.Path == "/":
		f := "testdata/ping_es8.json"
		if k.engine == EngineOpenSearch {
			f = "testdata/ping_opensearch.json"
		}
		b, _ := os.ReadFile(f)
		w.Write(b)
	case r.Method == http.MethodPut && r.URL.Path == "/wiki":
		if k.mapping != nil {
			k.errorJSON(w, 400, "resource_already_exists_exception", "index [wiki/abc] already exists")
			return
		}
		var m map[string]any
		json.Unmarshal(body, &m)
		k.mapping = m["mappings"].(map[string]any)
		fmt.Fprint(w, `{"acknowledged":true,"shards_acknowledged":true,"index":"wiki"}`)
	case r.Method == http.MethodGet && r.URL.Path == "/wiki/_mapping":
		if k.mapping == nil {
			k.errorJSON(w, 404, "index_not_found_exception", "no such index [wiki]")
			return
		}
		json.NewEncoder(w).Encode(map[string]any{"wiki": map[string]any{"mappings": k.mapping}})
	case r.URL.Path == "/_bulk":
		k.bulk(w, body)
	case r.URL.Path == "/_msearch":
		k.msearch(w, body)
	default:
		k.errorJSON(w, 400, "illegal_argument_exception", "unexpected "+r.Method+" "+r.URL.Path)
	}
}

func (k *knnCluster) dims() int {
	f := k.mapping["properties"].(map[string]any)["vec"].(map[string]any)
	if d, ok := f["dims"]; ok {
		return int(d.(float64))
	}
	return int(f["dimension"].(float64))
}

func (k *knnCluster) bulk(w http.ResponseWriter, body []byte) {
	k.bulks++
	if k.bulks == k.failBulk {
		k.errorJSON(w, 400, "illegal_argument_exception", "the bulk request is refused once by the test")
		return
	}
	lines := bytes.Split(bytes.TrimSpace(body), []byte("\n"))
	var items []string
	errs := false
	for i := 0; i+1 < len(lines); i += 2 {
		var action struct {
			Index struct {
				ID string `json:"_id"`
			} `json:"index"`
		}
		var src map[string]any
		json.Unmarshal(lines[i], &action)
		json.Unmarshal(lines[i+1], &src)
		id := action.Index.ID
		vec, _ := src["vec"].([]any)
		if len(vec) != k.dims() {
			errs = true
			if k.engine == EngineOpenSearch {
				items = append(items, fmt.Sprintf(`{"index":{"_index":"wiki","_id":%q,"status":400,"error":{"type":"mapper_parsing_exception","reason":"failed to parse field [vec] of type [knn_vector] in document with id '%s'. Preview of field's value: 'null'","caused_by":{"type":"illegal_argument_exception","reason":"Vector dimension mismatch. Expected: %d, Given: %d"}}}}`, id, id, k.dims(), len(vec)))
			} else {
				items = append(items, fmt.Sprintf(`{"index":{"_index":"wiki","_id":%q,"status":400,"error":{"type":"document_parsing_exception","reason":"[1:20] failed to parse: The [dense_vector] field [vec] in doc [document with id '%s'] has a different number of dimensions [%d] than defined in the mapping [%d]","caused_by":{"type":"illegal_argument_exception","reason":"The [dense_vector] field [vec] in doc [document with id '%s'] has a different number of dimensions [%d] than defined in the mapping [%d]"}}}}`, id, id, len(vec), k.dims(), id, len(vec), k.dims()))
			}
			continue
		}
		if _, ok := k.docs[id]; !ok {
			k.order = append(k.order, id)
		}
		k.docs[id] = src
		k.indexed[id]++
		result, status := "created", 201
		if k.indexed[id] > 1 {
			result, status = "updated", 200
		}
		items = append(items, fmt.Sprintf(`{"index":{"_index":"wiki","_id":%q,"_version":%d,"result":%q,"_shards":{"total":2,"successful":1,"failed":0},"_seq_no":%d,"_primary_term":1,"status":%d}}`, id, k.indexed[id], result, len(k.order), status))
	}
	fmt.Fprintf(w, `{"took":12,"errors":%v,"items":[%s]}`, errs, strings.Join(items, ","))
}

func cosine(a []float64, b []any) float64 {
	var s, na, nb float64
	for i := range a {
		x := b[i].(float64)
		s += a[i] * x
		na += a[i] * a[i]
		nb += x * x
	}
	return s / math.Sqrt(na*nb)
}

func floats(v any) []float64 {
	var out []float64
	for _, x := range v.([]any) {
		out = append(out, x.(float64))
	}
	return out
}

// words counts the query's words in the passage: the fake's stand-in for BM25.
func words(q, title, txt string) float64 {
	doc := strings.Fields(strings.ToLower(title + " " + txt))
	var s float64
	for _, w := range strings.Fields(strings.ToLower(q)) {
		for _, d := range doc {
			if d == w {
				s++
			}
		}
	}
	return s
}

// score scores one document for one search body, as the engine would.
func (k *knnCluster) score(body map[string]any, id string) (float64, bool) {
	d := k.docs[id]
	vec, _ := d["vec"].([]any)
	title, _ := d["title"].(string)
	txt, _ := d["txt"].(string)
	var s float64
	matched := false
	var clause func(q map[string]any)
	clause = func(q map[string]any) {
		switch {
		case q["bool"] != nil:
			for _, c := range q["bool"].(map[string]any)["should"].([]any) {
				clause(c.(map[string]any))
			}
		case q["multi_match"] != nil:
			mm := q["multi_match"].(map[string]any)
			if w := words(mm["query"].(string), title, txt); w > 0 {
				s += w * mm["boost"].(float64)
				matched = true
			}
		case q["script_score"] != nil:
			ss := q["script_score"].(map[string]any)
			p := ss["script"].(map[string]any)["params"].(map[string]any)
			qv := p["query_vector"]
			if qv == nil {
				qv = p["query_value"]
			}
			s += (1 + cosine(floats(qv), vec)) * ss["boost"].(float64)
			matched = true
		case q["knn"] != nil: // OpenSearch
			kq := q["knn"].(map[string]any)["vec"].(map[string]any)
			s += (1 + cosine(floats(kq["vector"]), vec)) / 2 * kq["boost"].(float64)
			matched = true
		}
	}
	if q, ok := body["query"].(map[string]any); ok {
		clause(q)
	}
	if kn, ok := body["knn"].(map[string]any); ok { // Elasticsearch 8
		s += (1 + cosine(floats(kn["query_vector"]), vec)) / 2 * kn["boost"].(float64)
		matched = true
	}
	return s, matched
}

func (k *knnCluster) msearch(w http.ResponseWriter, body []byte) {
	lines := bytes.Split(bytes.TrimSpace(body), []byte("\n"))
	var resps []string
	for i := 0; i+1 < len(lines); i += 2 {
		var b map[string]any
		json.Unmarshal(lines[i+1], &b)
		k.searches = append(k.searches, b)
		var qv []float64
		if kn, ok := b["knn"].(map[string]any); ok {
			qv = floats(kn["query_vector"])
		}
		_ = qv
		if k.shardFail {
			resps = append(resps, `{"took":3,"timed_out":false,"_shards":{"total":2,"successful":1,"skipped":0,"failed":1,"failures":[{"shard":1,"index":"wiki","node":"n1","reason":{"type":"circuit_breaking_exception","reason":"[parent] Data too large, data for [<reused_arrays>] would be [1073741824/1gb]","bytes_wanted":1073741824,"bytes_limit":1020054732,"durability":"TRANSIENT"}}]},"hits":{"total":{"value":1,"relation":"eq"},"max_score":1.0,"hits":[{"_index":"wiki","_id":"p1","_score":1.0,"_source":{"title":"T","txt":"x"}}]},"status":200}`)
			continue
		}
		type scored struct {
			id string
			s  float64
		}
		var all []scored
		for _, id := range k.order {
			if s, ok := k.score(b, id); ok {
				all = append(all, scored{id, s})
			}
		}
		sort.SliceStable(all, func(i, j int) bool { return all[i].s > all[j].s })
		size := int(b["size"].(float64))
		if len(all) > size {
			all = all[:size]
		}
		var hits []string
		for _, h := range all {
			d := k.docs[h.id]
			src, _ := json.Marshal(map[string]any{"title": d["title"], "txt": d["txt"]})
			hits = append(hits, fmt.Sprintf(`{"_index":"wiki","_id":%q,"_score":%v,"_source":%s}`, h.id, h.s, src))
		}
		resps = append(resps, fmt.Sprintf(`{"took":4,"timed_out":false,"_shards":{"total":2,"successful":2,"skipped":0,"failed":0},"hits":{"total":{"value":%d,"relation":"eq"},"max_score":null,"hits":[%s]},"status":200}`, len(all), strings.Join(hits, ",")))
	}
	fmt.Fprintf(w, `{"took":5,"responses":[%s]}`, strings.Join(resps, ","))
}

// vecEmbedder embeds "p<i> ..." passages and "q<i>" queries with fixed pseudo-random vectors; texts
// listed in special get theirs.
type vecEmbedder struct {
	dim     int
	model   string
	special map[string][]float32
}

func (e *vecEmbedder) Dim() int { return e.dim }
func (e *vecEmbedder) Describe() map[string]string {
	return map[string]string{"kind": "test", "model": e.model}
}
func (e *vecEmbedder) Embed(_ context.Context, texts []string, _ dense.Kind) ([][]float32, error) {
	out := make([][]float32, len(texts))
	for i, t := range texts {
		if v, ok := e.special[t]; ok {
			out[i] = v
			continue
		}
		h := uint64(14695981039346656037)
		for _, c := range []byte(t) {
			h = (h ^ uint64(c)) * 1099511628211
		}
		v := make([]float32, e.dim)
		for j := range v {
			h = h*6364136223846793005 + 1442695040888963407
			v[j] = float32(int64(h>>33)%2000-1000) / 1000
		}
		out[i] = v
	}
	return out, nil
}

func writeKNNTSV(t *testing.T, n int) string {
	var b strings.Builder
	b.WriteString("id\ttext\ttitle\n")
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, "p%d\tpassage number %d about topic%d\tTitle %d\n", i, i, i%7, i)
	}
	p := filepath.Join(t.TempDir(), "psgs.tsv")
	if err := os.WriteFile(p, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// bruteForce ranks the cluster's documents by cosine with the query's embedding.
func bruteForce(k *knnCluster, emb *vecEmbedder, q string, n int) []string {
	v, _ := emb.Embed(context.Background(), []string{q}, dense.Query)
	qv := make([]float64, len(v[0]))
	for i, x := range v[0] {
		qv[i] = float64(x)
	}
	ids := append([]string(nil), k.order...)
	sort.SliceStable(ids, func(i, j int) bool {
		return cosine(qv, k.docs[ids[i]]["vec"].([]any)) > cosine(qv, k.docs[ids[j]]["vec"].([]any))
	})
	return ids[:n]
}

func TestKNNIndexAndSearch(t *testing.T) {
	for _, engine := range []string{EngineElasticsearch, EngineOpenSearch} {
		for _, mode := range []string{ModeHNSW, ModeExact} {
			t.Run(engine+"/"+mode, func(t *testing.T) {
				k, cfg := newKNNCluster(t, engine)
				cfg.KNN.Mode = mode
				cfg.BulkDocs = 7
				emb := &vecEmbedder{dim: 8, model: "m1"}
				tsv := writeKNNTSV(t, 40)
				cp := filepath.Join(t.TempDir(), "cp.json")
				if err := IndexTSVWith(context.Background(), cfg, tsv, nil, IndexOptions{Create: true, Checkpoint: cp, Embedder: emb}); err != nil {
					t.Fatal(err)
				}
				if len(k.docs) != 40 {
					t.Fatalf("%d documents indexed, want 40", len(k.docs))
				}
				// The mapping: the engine's vector type, dimension, similarity and the embedder in _meta.
				vec := k.mapping["properties"].(map[string]any)["vec"].(map[string]any)
				meta := k.mapping["_meta"].(map[string]any)["ragbench"].(map[string]any)
				if meta["embedder"].(map[string]any)["model"] != "m1" || meta["dim"].(float64) != 8 {
					t.Fatalf("_meta %v", meta)
				}
				if engine == EngineOpenSearch {
					if vec["type"] != "knn_vector" || vec["dimension"].(float64) != 8 || (mode == ModeHNSW) != (vec["method"] != nil) {
						t.Fatalf("OpenSearch mapping %v", vec)
					}
				} else if vec["type"] != "dense_vector" || vec["dims"].(float64) != 8 || vec["similarity"] != "cosine" || vec["index"] != (mode == ModeHNSW) {
					t.Fatalf("Elasticsearch mapping %v", vec)
				}
				d, err := NewDense(context.Background(), cfg, emb)
				if err != nil {
					t.Fatal(err)
				}
				if d.Engine() != engine {
					t.Fatalf("engine %q, want %q", d.Engine(), engine)
				}
				qs := []string{"q1", "q2", "", "q3"}
				res, err := d.SearchBatch(context.Background(), qs, 5)
				if err != nil {
					t.Fatal(err)
				}
				if len(res[2]) != 0 {
					t.Fatalf("blank query got hits %v", res[2])
				}
				for i, q := range qs {
					if q == "" {
						continue
					}
					want := bruteForce(k, emb, q, 5)
					for r, h := range res[i] {
						if h.ID != want[r] || h.Rank != r+1 || !strings.HasPrefix(h.Text, "passage number") {
							t.Fatalf("%s: rank %d is %+v, want %s (all: %v)", q, r+1, h, want[r], want)
						}
					}
				}
				// The request bodies are the engine's kNN query.
				b := k.searches[0]
				switch {
				case mode == ModeExact:
					ss := b["query"].(map[string]any)["script_score"].(map[string]any)
					src := ss["script"].(map[string]any)["source"]
					if (engine == EngineOpenSearch && src != "knn_score") || (engine == EngineElasticsearch && src != "cosineSimilarity(params.query_vector, 'vec') + 1.0") {
						t.Fatalf("exact body %v", b)
					}
				case engine == EngineOpenSearch:
					if b["query"].(map[string]any)["knn"].(map[string]any)["vec"].(map[string]any)["k"].(float64) != 5 {
						t.Fatalf("OpenSearch knn body %v", b)
					}
				default:
					if kn := b["knn"].(map[string]any); kn["k"].(float64) != 5 || kn["num_candidates"].(float64) != 100 || kn["field"] != "vec" {
						t.Fatalf("Elasticsearch knn body %v", b)
					}
				}
				if ex := b["_source"].(map[string]any)["excludes"].([]any); ex[0] != "vec" {
					t.Fatalf("the vectors must not come back in _source: %v", b["_source"])
				}
			})
		}
	}
}

// TestKNNHybrid: BM25 and kNN in one request; a passage that matches the words but not the vector
// rises above the pure kNN ranking.
func TestKNNHybrid(t *testing.T) {
	for _, engine := range []string{EngineElasticsearch, EngineOpenSearch} {
		t.Run(engine, func(t *testing.T) {
			k, cfg := newKNNCluster(t, engine)
			emb := &vecEmbedder{dim: 8, model: "m1"}
			if err := IndexTSVWith(context.Background(), cfg, writeKNNTSV(t, 30), nil, IndexOptions{Create: true, Checkpoint: filepath.Join(t.TempDir(), "cp"), Embedder: emb}); err != nil {
				t.Fatal(err)
			}
			cfg.KNN.Hybrid = true
			cfg.KNN.BM25Weight = 10
			d, err := NewDense(context.Background(), cfg, emb)
			if err != nil {
				t.Fatal(err)
			}
			hits, err := d.Retrieve(context.Background(), "number 17", 3)
			if err != nil {
				t.Fatal(err)
			}
			if len(hits) != 3 || hits[0].ID != "p17" {
				t.Fatalf("hybrid hits %+v", hits)
			}
			b := k.searches[0]
			if engine == EngineOpenSearch {
				if len(b["query"].(map[string]any)["bool"].(map[string]any)["should"].([]any)) != 2 {
					t.Fatalf("OpenSearch hybrid body %v", b)
				}
			} else if b["knn"] == nil || b["query"].(map[string]any)["multi_match"] == nil {
				t.Fatalf("Elasticsearch hybrid body %v", b)
			}
		})
	}
}

// TestKNNResumeNoDuplicates: a bulk request that fails stops the run; the rerun resumes from the
// checkpoint, re-sends only the failed batch, and every passage is in the index once.
func TestKNNResumeNoDuplicates(t *testing.T) {
	k, cfg := newKNNCluster(t, EngineElasticsearch)
	cfg.BulkDocs = 10
	k.failBulk = 3
	emb := &vecEmbedder{dim: 4, model: "m1"}
	tsv := writeKNNTSV(t, 45)
	opt := IndexOptions{Create: true, Checkpoint: filepath.Join(t.TempDir(), "cp.json"), Embedder: emb}
	err := IndexTSVWith(context.Background(), cfg, tsv, nil, opt)
	if err == nil || !strings.Contains(err.Error(), "refused once") {
		t.Fatalf("first run: %v", err)
	}
	if len(k.docs) != 20 {
		t.Fatalf("after the failure %d documents, want 20", len(k.docs))
	}
	var log bytes.Buffer
	if err := IndexTSVWith(context.Background(), cfg, tsv, &log, opt); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(log.String(), "resuming after line 21") {
		t.Fatalf("no resume: %s", log.String())
	}
	if len(k.docs) != 45 || len(k.order) != 45 {
		t.Fatalf("%d documents (%d distinct), want 45", len(k.docs), len(k.order))
	}
	for id, n := range k.indexed {
		if n != 1 {
			t.Fatalf("%s indexed %d times", id, n)
		}
	}
}

func TestKNNPartialShardFailure(t *testing.T) {
	k, cfg := newKNNCluster(t, EngineOpenSearch)
	emb := &vecEmbedder{dim: 4, model: "m1"}
	if err := IndexTSVWith(context.Background(), cfg, writeKNNTSV(t, 5), nil, IndexOptions{Create: true, Checkpoint: filepath.Join(t.TempDir(), "cp"), Embedder: emb}); err != nil {
		t.Fatal(err)
	}
	d, err := NewDense(context.Background(), cfg, emb)
	if err != nil {
		t.Fatal(err)
	}
	k.shardFail = true
	hits, err := d.Retrieve(context.Background(), "q1", 3)
	if err == nil || !strings.Contains(err.Error(), "partial results: 1 of 2 shards failed") || !strings.Contains(err.Error(), "circuit_breaking_exception") || !strings.Contains(err.Error(), `query 0 ("q1")`) {
		t.Fatalf("a partial shard failure passed as %d hits: %v", len(hits), err)
	}
	// The BM25 client reads the same responses the same way.
	c, _ := New(cfg)
	if _, err := c.SearchBatch(context.Background(), []string{"passage"}, 3); err == nil || !strings.Contains(err.Error(), "1 of 2 shards failed") {
		t.Fatalf("BM25 msearch with a failed shard: %v", err)
	}
}

func TestKNNBadInput(t *testing.T) {
	nan := float32(math.NaN())
	for _, tc := range []struct {
		name    string
		special map[string][]float32
		want    string
	}{
		{"a NaN component names the file, line and passage", map[string][]float32{"Title 3 passage number 3 about topic3": {1, nan, 0, 0}}, `psgs.tsv:4: passage "p3": vector has NaN or Inf entries`},
		{"an infinite component", map[string][]float32{"Title 2 passage number 2 about topic2": {float32(math.Inf(1)), 0, 0, 0}}, `psgs.tsv:3: passage "p2": vector has NaN or Inf entries`},
		{"a zero vector under cosine", map[string][]float32{"Title 5 passage number 5 about topic5": {0, 0, 0, 0}}, `psgs.tsv:6: passage "p5": the embedding is all zero`},
		{"a vector of the wrong dimension", map[string][]float32{"Title 1 passage number 1 about topic1": {1, 2, 3}}, `psgs.tsv:2: passage "p1": dense: vector dimension mismatch: got 3, want 4`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			k, cfg := newKNNCluster(t, EngineElasticsearch)
			emb := &vecEmbedder{dim: 4, model: "m1", special: tc.special}
			err := IndexTSVWith(context.Background(), cfg, writeKNNTSV(t, 6), nil, IndexOptions{Create: true, Checkpoint: filepath.Join(t.TempDir(), "cp"), Embedder: emb})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want %q", err, tc.want)
			}
			if len(k.docs) != 0 {
				t.Fatalf("%d documents sent before the bad one was refused", len(k.docs))
			}
		})
	}

	// An index built with another dimension or embedder is refused, naming the index.
	_, cfg := newKNNCluster(t, EngineOpenSearch)
	if err := IndexTSVWith(context.Background(), cfg, writeKNNTSV(t, 3), nil, IndexOptions{Create: true, Checkpoint: filepath.Join(t.TempDir(), "cp"), Embedder: &vecEmbedder{dim: 4, model: "m1"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := NewDense(context.Background(), cfg, &vecEmbedder{dim: 6, model: "m1"}); err == nil || !strings.Contains(err.Error(), `index wiki: field "vec" has 4 dimensions, the query embedder 6`) {
		t.Fatalf("other dimension: %v", err)
	}
	if _, err := NewDense(context.Background(), cfg, &vecEmbedder{dim: 4, model: "m2"}); err == nil || !strings.Contains(err.Error(), `index wiki was built with embedder model "m1", the query embedder is "m2"`) {
		t.Fatalf("other embedder: %v", err)
	}
	err := IndexTSVWith(context.Background(), cfg, writeKNNTSV(t, 3), nil, IndexOptions{Checkpoint: filepath.Join(t.TempDir(), "cp2"), Embedder: &vecEmbedder{dim: 6, model: "m1"}})
	if err == nil || !strings.Contains(err.Error(), "has 4 dimensions") {
		t.Fatalf("indexing with another dimension: %v", err)
	}
	// A query embedding with NaN is an error naming the query; a zero one gets no hits.
	d, err := NewDense(context.Background(), cfg, &vecEmbedder{dim: 4, model: "m1", special: map[string][]float32{"bad": {nan, 0, 0, 0}, "zero": {0, 0, 0, 0}}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := d.Retrieve(context.Background(), "bad", 3); err == nil || !strings.Contains(err.Error(), `query 0 ("bad"): vector has NaN or Inf`) {
		t.Fatalf("NaN query: %v", err)
	}
	if hits, err := d.Retrieve(context.Background(), "zero", 3); err != nil || len(hits) != 0 {
		t.Fatalf("zero query: %v, %v", hits, err)
	}
	// Missing index and missing knn section.
	_, cfg2 := newKNNCluster(t, EngineElasticsearch)
	if _, err := NewDense(context.Background(), cfg2, &vecEmbedder{dim: 4}); err == nil || !strings.Contains(err.Error(), "index_not_found_exception") {
		t.Fatalf("missing index: %v", err)
	}
	cfg2.KNN = nil
	if _, err := NewDense(context.Background(), cfg2, &vecEmbedder{dim: 4}); err == nil {
		t.Fatal("no knn section: no error")
	}
	cfg2.KNN = &KNNConfig{Mode: "ivf"}
	if _, err := New(cfg2); err == nil || !strings.Contains(err.Error(), `knn.mode "ivf"`) {
		t.Fatalf("bad mode: %v", err)
	}
}

// TestKNNBulkDimensionRejected: the cluster's own item error for a wrong-dimension vector (as each
// engine words it) stops the run with the passage id and the engine's reason.
func TestKNNBulkDimensionRejected(t *testing.T) {
	for _, engine := range []string{EngineElasticsearch, EngineOpenSearch} {
		t.Run(engine, func(t *testing.T) {
			k, cfg := newKNNCluster(t, engine)
			emb := &vecEmbedder{dim: 4, model: "m1"}
			if err := IndexTSVWith(context.Background(), cfg, writeKNNTSV(t, 2), nil, IndexOptions{Create: true, Checkpoint: filepath.Join(t.TempDir(), "cp"), Embedder: emb}); err != nil {
				t.Fatal(err)
			}
			// The mapping changes under us (someone recreated the index with 3 dimensions): skip our
			// own check by sending straight to bulk.
			k.mapping["properties"].(map[string]any)["vec"].(map[string]any)["dims"] = float64(3)
			k.mapping["properties"].(map[string]any)["vec"].(map[string]any)["dimension"] = float64(3)
			c, _ := New(cfg)
			body := `{"index":{"_index":"wiki","_id":"x1"}}` + "\n" + `{"title":"t","txt":"x","vec":[1,0,0,0]}` + "\n"
			err := c.bulk(context.Background(), []byte(body), []string{"x1"})
			want := "different number of dimensions [4]"
			if engine == EngineOpenSearch {
				want = "mapper_parsing_exception"
			}
			if err == nil || !strings.Contains(err.Error(), `document "x1"`) || !strings.Contains(err.Error(), want) {
				t.Fatalf("got %v", err)
			}
		})
	}
}
