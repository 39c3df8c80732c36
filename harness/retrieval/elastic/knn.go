package elastic

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"net/url"
	"strings"

	"github.com/ragbench/ragbench/harness/retrieval"
	"github.com/ragbench/ragbench/harness/retrieval/dense"
)

// Dense search modes (KNNConfig.Mode).
const (
	ModeHNSW  = "hnsw"  // approximate: the engine's kNN search over its HNSW graph
	ModeExact = "exact" // exact: script_score over every document
)

// Engines (KNNConfig.Engine), as Ping reports their distribution.
const (
	EngineElasticsearch = "elasticsearch"
	EngineOpenSearch    = "opensearch"
)

// KNNConfig makes the index a dense one: passages carry an embedding in Field, and Dense searches it
// with the engine's kNN query. Vectors are L2-normalised before indexing and searching, and the field
// uses cosine similarity (Elasticsearch "cosine", OpenSearch "cosinesimil").
type KNNConfig struct {
	// Field is the vector field (default "vec").
	Field string `yaml:"field,omitempty" json:"field,omitempty"`
	// Mode is "hnsw" (approximate, the default) or "exact" (script_score over all documents). An
	// index created in exact mode has no HNSW graph (Elasticsearch index: false; OpenSearch knn: false)
	// and cannot be searched in hnsw mode.
	Mode string `yaml:"mode,omitempty" json:"mode,omitempty"`
	// NumCandidates is Elasticsearch's num_candidates per shard in hnsw mode (default max(100, 10·k)).
	NumCandidates int `yaml:"num_candidates,omitempty" json:"num_candidates,omitempty"`
	// Hybrid also runs the DRAGIN BM25 query in the same request; the engine adds the two scores,
	// weighted by BM25Weight and KNNWeight (default 1 each).
	Hybrid     bool    `yaml:"hybrid,omitempty" json:"hybrid,omitempty"`
	BM25Weight float64 `yaml:"bm25_weight,omitempty" json:"bm25_weight,omitempty"`
	KNNWeight  float64 `yaml:"knn_weight,omitempty" json:"knn_weight,omitempty"`
	// Engine is "elasticsearch" or "opensearch"; empty: asked from the cluster (Ping).
	Engine string `yaml:"engine,omitempty" json:"engine,omitempty"`
	// HNSW graph parameters at index creation (defaults 16 and 100).
	M              int `yaml:"m,omitempty" json:"m,omitempty"`
	EfConstruction int `yaml:"ef_construction,omitempty" json:"ef_construction,omitempty"`
}

func (k *KNNConfig) defaults() {
	if k.Field == "" {
		k.Field = "vec"
	}
	if k.Mode == "" {
		k.Mode = ModeHNSW
	}
	if k.BM25Weight == 0 {
		k.BM25Weight = 1
	}
	if k.KNNWeight == 0 {
		k.KNNWeight = 1
	}
	if k.M <= 0 {
		k.M = 16
	}
	if k.EfConstruction <= 0 {
		k.EfConstruction = 100
	}
}

// Validate reports a bad mode, engine or weight.
func (k KNNConfig) Validate() error {
	var errs []error
	if k.Mode != "" && k.Mode != ModeHNSW && k.Mode != ModeExact {
		errs = append(errs, fmt.Errorf("knn.mode %q: want hnsw or exact", k.Mode))
	}
	if k.Engine != "" && k.Engine != EngineElasticsearch && k.Engine != EngineOpenSearch {
		errs = append(errs, fmt.Errorf("knn.engine %q: want elasticsearch or opensearch", k.Engine))
	}
	if k.BM25Weight < 0 || k.KNNWeight < 0 || k.NumCandidates < 0 {
		errs = append(errs, errors.New("knn: weights and num_candidates must not be negative"))
	}
	if strings.ContainsAny(k.Field, "'\"\\") {
		errs = append(errs, fmt.Errorf("knn.field %q: quotes and backslashes are not allowed", k.Field))
	}
	return errors.Join(errs...)
}

// Dense is dense retrieval in the cluster: queries are embedded here and searched with the engine's kNN
// query (or script_score, or kNN plus BM25 in one request). It is a retrieval.Retriever, safe for
// concurrent use.
type Dense struct {
	c      *Client
	emb    dense.Embedder
	knn    KNNConfig
	engine string
}

// meta is what the index's mapping records about its vectors (mappings._meta.ragbench).
type knnMeta struct {
	Embedder map[string]string `json:"embedder,omitempty"`
	Dim      int               `json:"dim"`
	Field    string            `json:"field"`
	Mode     string            `json:"mode"`
}

// NewDense opens dense retrieval on cfg's index (cfg.KNN must be set) with emb embedding the queries.
// It asks the cluster for its engine (unless KNN.Engine is set) and reads the index mapping: a vector
// field of another dimension, or an index built with another embedder, is an error naming the index.
func NewDense(ctx context.Context, cfg Config, emb dense.Embedder) (*Dense, error) {
	if cfg.KNN == nil {
		return nil, errors.New("elastic dense: the config has no knn section")
	}
	if emb == nil || emb.Dim() <= 0 {
		return nil, errors.New("elastic dense: no embedder")
	}
	c, err := New(cfg)
	if err != nil {
		return nil, err
	}
	d := &Dense{c: c, emb: emb, knn: *c.cfg.KNN}
	d.engine = d.knn.Engine
	if d.engine == "" {
		info, err := c.Ping(ctx)
		if err != nil {
			return nil, err
		}
		d.engine = info.Distribution
	}
	if d.engine != EngineOpenSearch {
		d.engine = EngineElasticsearch
	}
	if err := d.checkMapping(ctx); err != nil {
		return nil, err
	}
	return d, nil
}

// checkMapping compares the index's vector field and recorded embedder with ours.
func (d *Dense) checkMapping(ctx context.Context) error {
	idx := d.c.cfg.Index
	b, err := d.c.do(ctx, http.MethodGet, "/"+url.PathEscape(idx)+"/_mapping", nil, "")
	if err != nil {
		return fmt.Errorf("elastic dense: index %s: %w", idx, err)
	}
	var r map[string]struct {
		Mappings struct {
			Meta struct {
				Ragbench *knnMeta `json:"ragbench"`
			} `json:"_meta"`
			Properties map[string]struct {
				Type      string `json:"type"`
				Dims      int    `json:"dims"`
				Dimension int    `json:"dimension"`
			} `json:"properties"`
		} `json:"mappings"`
	}
	if err := json.Unmarshal(b, &r); err != nil {
		return fmt.Errorf("elastic dense: index %s: bad mapping response: %w", idx, err)
	}
	if len(r) != 1 {
		return fmt.Errorf("elastic dense: index %s: the mapping response names %d indices (an alias over several?); give one index", idx, len(r))
	}
	for _, m := range r {
		f, ok := m.Mappings.Properties[d.knn.Field]
		if !ok {
			return fmt.Errorf("elastic dense: index %s has no field %q (index it with a knn config first)", idx, d.knn.Field)
		}
		if f.Type != "dense_vector" && f.Type != "knn_vector" {
			return fmt.Errorf("elastic dense: index %s: field %q is %q, not a vector field", idx, d.knn.Field, f.Type)
		}
		dim := max(f.Dims, f.Dimension)
		if dim != 0 && dim != d.emb.Dim() {
			return fmt.Errorf("elastic dense: index %s: field %q has %d dimensions, the query embedder %d (index built with another embedder or dimension)", idx, d.knn.Field, dim, d.emb.Dim())
		}
		if meta := m.Mappings.Meta.Ragbench; meta != nil && meta.Embedder != nil {
			if desc, ok := d.emb.(dense.Describer); ok {
				got := desc.Describe()
				for _, key := range []string{"kind", "model"} {
					if got[key] != meta.Embedder[key] {
						return fmt.Errorf("elastic dense: index %s was built with embedder %s %q, the query embedder is %q", idx, key, meta.Embedder[key], got[key])
					}
				}
			}
		}
	}
	return nil
}

// Engine returns "elasticsearch" or "opensearch".
func (d *Dense) Engine() string { return d.engine }

// unitVector validates v (dimension, NaN/Inf) and returns it L2-normalised; ok is false for a zero vector.
func unitVector(v []float32, dim int) (out []float32, ok bool, err error) {
	if len(v) != dim {
		return nil, false, fmt.Errorf("%w: got %d, want %d", dense.ErrDim, len(v), dim)
	}
	var s float64
	for _, x := range v {
		if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
			return nil, false, errors.New("vector has NaN or Inf entries")
		}
		s += float64(x) * float64(x)
	}
	if s == 0 {
		return nil, false, nil
	}
	inv := 1 / math.Sqrt(s)
	out = make([]float32, len(v))
	for i, x := range v {
		out[i] = float32(float64(x) * inv)
	}
	return out, true, nil
}

// Body returns the search body for query text q (for hybrid) and its unit vector v.
func (d *Dense) Body(q string, v []float32, k int) map[string]any {
	f := d.knn.Field
	var vecQuery map[string]any
	body := map[string]any{"size": k, "_source": map[string]any{"excludes": []string{f}}}
	if d.knn.Mode == ModeExact {
		var script map[string]any
		if d.engine == EngineOpenSearch {
			script = map[string]any{"source": "knn_score", "lang": "knn",
				"params": map[string]any{"field": f, "query_value": v, "space_type": "cosinesimil"}}
		} else {
			script = map[string]any{"source": "cosineSimilarity(params.query_vector, '" + f + "') + 1.0",
				"params": map[string]any{"query_vector": v}}
		}
		vecQuery = map[string]any{"script_score": map[string]any{"query": map[string]any{"match_all": map[string]any{}}, "script": script, "boost": d.knn.KNNWeight}}
	} else if d.engine == EngineOpenSearch {
		vecQuery = map[string]any{"knn": map[string]any{f: map[string]any{"vector": v, "k": k, "boost": d.knn.KNNWeight}}}
	} else {
		nc := d.knn.NumCandidates
		if nc <= 0 {
			nc = max(100, 10*k)
		}
		nc = max(nc, k)
		knn := map[string]any{"field": f, "query_vector": v, "k": k, "num_candidates": nc, "boost": d.knn.KNNWeight}
		if !d.knn.Hybrid {
			body["knn"] = knn
			return body
		}
		// Elasticsearch 8: a top-level knn section next to a query; the scores of both are added.
		mm := d.c.Query(q, k)["query"].(map[string]any)["multi_match"].(map[string]any)
		mm["boost"] = d.knn.BM25Weight
		body["knn"] = knn
		body["query"] = map[string]any{"multi_match": mm}
		return body
	}
	if !d.knn.Hybrid {
		body["query"] = vecQuery
		return body
	}
	mm := d.c.Query(q, k)["query"].(map[string]any)["multi_match"].(map[string]any)
	mm["boost"] = d.knn.BM25Weight
	body["query"] = map[string]any{"bool": map[string]any{"should": []any{map[string]any{"multi_match": mm}, vecQuery}}}
	return body
}

// Retrieve embeds query and returns its top k passages by the configured kNN search, best first. A
// blank query, or one whose embedding is all zero, returns no hits without a request.
func (d *Dense) Retrieve(ctx context.Context, query string, k int) ([]retrieval.Hit, error) {
	res, err := d.SearchBatch(ctx, []string{query}, k)
	if err != nil {
		return nil, err
	}
	return res[0], nil
}

// SearchBatch embeds the queries in one call and sends them in one _msearch request. An error or a
// partial shard failure on any one query fails the batch, naming it.
func (d *Dense) SearchBatch(ctx context.Context, queries []string, k int) ([][]retrieval.Hit, error) {
	out := make([][]retrieval.Hit, len(queries))
	var live []int
	var texts []string
	for i, q := range queries {
		out[i] = []retrieval.Hit{}
		if strings.TrimSpace(q) != "" && k > 0 {
			live = append(live, i)
			texts = append(texts, q)
		}
	}
	if len(live) == 0 {
		return out, nil
	}
	vecs, err := d.emb.Embed(ctx, texts, dense.Query)
	if err != nil {
		return nil, fmt.Errorf("elastic dense: embed queries: %w", err)
	}
	if len(vecs) != len(texts) {
		return nil, fmt.Errorf("elastic dense: embedder returned %d vectors for %d queries", len(vecs), len(texts))
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	var sent []int
	for j, i := range live {
		v, ok, err := unitVector(vecs[j], d.emb.Dim())
		if err != nil {
			return nil, fmt.Errorf("elastic dense: query %d (%q): %w", i, queries[i], err)
		}
		if !ok {
			continue
		}
		enc.Encode(map[string]any{"index": d.c.cfg.Index})
		enc.Encode(d.Body(d.c.Truncate(queries[i]), v, k))
		sent = append(sent, i)
	}
	if len(sent) == 0 {
		return out, nil
	}
	if err := d.c.msearch(ctx, "elastic dense msearch", buf.Bytes(), sent, queries, out); err != nil {
		return nil, err
	}
	return out, nil
}

// Close releases nothing; it makes Dense an index.Index like the others.
func (d *Dense) Close() error { return nil }

var _ retrieval.Retriever = (*Dense)(nil)

// createKNNIndex creates the index with DRAGIN's text fields and the vector field.
func (c *Client) createKNNIndex(ctx context.Context, engine string, dim int, emb map[string]string, ifMissing bool) error {
	k := c.cfg.KNN
	var vec map[string]any
	settings := map[string]any{}
	if engine == EngineOpenSearch {
		vec = map[string]any{"type": "knn_vector", "dimension": dim}
		if k.Mode == ModeHNSW {
			settings["index"] = map[string]any{"knn": true}
			vec["method"] = map[string]any{"name": "hnsw", "space_type": "cosinesimil", "engine": "lucene",
				"parameters": map[string]any{"m": k.M, "ef_construction": k.EfConstruction}}
		}
	} else {
		vec = map[string]any{"type": "dense_vector", "dims": dim, "similarity": "cosine", "index": k.Mode == ModeHNSW}
		if k.Mode == ModeHNSW {
			vec["index_options"] = map[string]any{"type": "hnsw", "m": k.M, "ef_construction": k.EfConstruction}
		}
	}
	body := map[string]any{"mappings": map[string]any{
		"_meta": map[string]any{"ragbench": knnMeta{Embedder: emb, Dim: dim, Field: k.Field, Mode: k.Mode}},
		"properties": map[string]any{
			c.cfg.TitleField: map[string]any{"type": "text", "analyzer": "english"},
			c.cfg.TextField:  map[string]any{"type": "text", "analyzer": "english"},
			k.Field:          vec,
		}}}
	if len(settings) > 0 {
		body["settings"] = settings
	}
	b, _ := json.Marshal(body)
	_, err := c.do(ctx, http.MethodPut, "/"+url.PathEscape(c.cfg.Index), b, "application/json")
	var ee *Error
	if ifMissing && errors.As(err, &ee) && ee.Type == "resource_already_exists_exception" {
		return nil
	}
	if err != nil {
		return fmt.Errorf("elastic create index %s: %w", c.cfg.Index, err)
	}
	return nil
}
