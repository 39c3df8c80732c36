// Package index opens a retriever from a config: a BM25 or dense index directory (a unit index with
// its units sidecar included), or an Elasticsearch/OpenSearch endpoint. It is the one place that knows
// every backend of harness/retrieval; package retrieval itself cannot be it, since the backends import
// retrieval for its Hit type.
//
// Config is plain data with YAML and JSON tags, defaults (Defaults) and Validate; Open returns an
// Index, which is a retrieval.Retriever with Close.
//
//	cfg := index.Config{Dir: "indexes/hotpotqa/g4"}             // kind from meta.json
//	cfg := index.Config{Dir: "indexes/wiki-e5", Embedder: index.EmbedderConfig{
//		Model: "intfloat/e5-base-v2", BaseURL: "http://127.0.0.1:8080/v1", Preset: "e5"}}
//	cfg := index.Config{Kind: index.KindElastic, Elastic: elastic.Config{URL: "http://127.0.0.1:9200"}}
//
// A directory whose meta.json says "ragbench-bm25" opens as BM25 (bm25.FormatName), one that says
// "ragbench-dense/1" as dense (dense.FormatVersion). When the directory holds a units sidecar
// (corpus.UnitsFile, written by `ragbench index build --units`), every hit carries its unit's place in
// its document and its parent unit (retrieval.Hit.Unit), and Index.Lookup fetches a unit by id (parent
// promotion looks a hit's parent up in the parent granularity's index). The sidecar must list the
// index's documents in their order; Open checks the count, and a hit or lookup whose id disagrees is an
// error. API keys are never part of the config: the dense embedder's key is read from the environment
// variable EmbedderConfig.APIKeyEnv names, and Elasticsearch credentials from ELASTIC_API_KEY or
// ELASTIC_USERNAME/ELASTIC_PASSWORD.
//
// Build makes the directories Open reads: a BM25 or dense index of a corpus.Source (a corpus file or a
// dataset's pool), whole documents or one index per unit size in DIR/gN with its sidecar (BuildConfig).
package index

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/url"
	"os"
	"path/filepath"

	"github.com/ragbench/ragbench/harness/corpus"
	"github.com/ragbench/ragbench/harness/retrieval"
	"github.com/ragbench/ragbench/harness/retrieval/bm25"
	"github.com/ragbench/ragbench/harness/retrieval/dense"
	"github.com/ragbench/ragbench/harness/retrieval/elastic"
)

// The kinds of index.
const (
	KindBM25    = "bm25"
	KindDense   = "dense"
	KindElastic = "elastic"
)

// Config says which retriever to open.
type Config struct {
	// Kind is bm25, dense or elastic. Empty: read from Dir's meta.json.
	Kind string `yaml:"kind,omitempty" json:"kind,omitempty"`
	// Dir is the index directory (bm25 and dense; for a unit index, one granularity's OUT/gN).
	Dir string `yaml:"dir,omitempty" json:"dir,omitempty"`
	// BM25 tunes a BM25 index's scoring.
	BM25 BM25Config `yaml:"bm25,omitempty" json:"bm25,omitempty"`
	// Embedder embeds a dense index's queries through an OpenAI-compatible server. Zero: the index's
	// own embedder (the LSA model saved in the index, or the endpoint recorded in its meta.json).
	Embedder EmbedderConfig `yaml:"embedder,omitempty" json:"embedder,omitempty"`
	// Elastic is the cluster and index of kind elastic.
	Elastic elastic.Config `yaml:"elastic,omitempty" json:"elastic,omitempty"`
}

// BM25Config overrides the scoring parameters stored with a BM25 index.
type BM25Config struct {
	// K1 and B replace the index's defaults when set (k1 >= 0, 0 <= b <= 1).
	K1 *float64 `yaml:"k1,omitempty" json:"k1,omitempty"`
	B  *float64 `yaml:"b,omitempty" json:"b,omitempty"`
	// ExactLength scores exact document lengths instead of Lucene's one-byte norms.
	ExactLength bool `yaml:"exact_length,omitempty" json:"exact_length,omitempty"`
	// SkipChecksums opens without checking every file's CRC-32C (sizes are always checked).
	SkipChecksums bool `yaml:"skip_checksums,omitempty" json:"skip_checksums,omitempty"`
}

// EmbedderConfig names the OpenAI-compatible /v1/embeddings server that embeds a dense index's
// queries; it must serve the model the index was built with.
type EmbedderConfig struct {
	// Model is the embedding model. Empty: use the index's own embedder.
	Model string `yaml:"model,omitempty" json:"model,omitempty"`
	// BaseURL is the API root ending in /v1 (default $OPENAI_BASE_URL, else OpenAI's).
	BaseURL string `yaml:"base_url,omitempty" json:"base_url,omitempty"`
	// APIKeyEnv names the environment variable holding the key (default OPENAI_API_KEY).
	APIKeyEnv string `yaml:"api_key_env,omitempty" json:"api_key_env,omitempty"`
	// Preset picks the instruction prefixes: e5, bge, qwen3 or none (see dense.Prefixes).
	Preset string `yaml:"preset,omitempty" json:"preset,omitempty"`
	// CacheDir holds an on-disk cache of query embeddings ("" for none).
	CacheDir string `yaml:"cache_dir,omitempty" json:"cache_dir,omitempty"`
}

// Defaults returns the config with every unset field given its default. An empty Kind stays empty:
// Open reads it from the directory.
func (c Config) Defaults() Config {
	if c.Embedder.Model != "" && c.Embedder.APIKeyEnv == "" {
		c.Embedder.APIKeyEnv = "OPENAI_API_KEY"
	}
	return c
}

// Validate reports every invalid field. It reads no file: a directory that is not an index is Open's
// error.
func (c Config) Validate() error {
	var errs []error
	switch c.Kind {
	case KindBM25, KindDense:
		if c.Dir == "" {
			errs = append(errs, fmt.Errorf("index.dir is empty (kind %s reads an index directory)", c.Kind))
		}
	case KindElastic:
		if c.Dir != "" {
			errs = append(errs, errors.New("index.dir: kind elastic has no directory (give index.elastic)"))
		}
		if _, err := elastic.New(c.Elastic); err != nil {
			errs = append(errs, fmt.Errorf("index.elastic: %w", err))
		}
		if c.Elastic.KNN != nil && c.Embedder.Model == "" {
			errs = append(errs, errors.New("index.embedder.model is empty: kind elastic with a knn section embeds queries through index.embedder"))
		}
	case "":
		if c.Dir == "" {
			errs = append(errs, errors.New("index.dir is empty (give an index directory, or kind elastic)"))
		}
	default:
		errs = append(errs, fmt.Errorf("index.kind %q: want %s, %s or %s", c.Kind, KindBM25, KindDense, KindElastic))
	}
	for _, p := range []struct {
		name string
		v    *float64
		max  float64
	}{{"k1", c.BM25.K1, math.Inf(1)}, {"b", c.BM25.B, 1}} {
		if p.v != nil && !(*p.v >= 0 && *p.v <= p.max) {
			errs = append(errs, fmt.Errorf("index.bm25.%s %g: want k1 >= 0 and 0 <= b <= 1", p.name, *p.v))
		}
	}
	e := c.Embedder
	if e.Model == "" && (e.BaseURL != "" || e.Preset != "" || e.CacheDir != "") {
		errs = append(errs, errors.New("index.embedder.model is empty: base_url, preset and cache_dir need a model"))
	}
	if e.BaseURL != "" {
		if u, err := url.Parse(e.BaseURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			errs = append(errs, fmt.Errorf("index.embedder.base_url %q: want an http(s) URL", redact(e.BaseURL)))
		}
	}
	if _, _, err := dense.Prefixes(e.Preset, ""); err != nil {
		errs = append(errs, fmt.Errorf("index.embedder.preset: %w", err))
	}
	if c.Kind == KindBM25 && e.Model != "" {
		errs = append(errs, errors.New("index.embedder: a bm25 index takes no embedder"))
	}
	return errors.Join(errs...)
}

// redact drops user information and query values from a URL for messages.
func redact(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "<unparsable URL>"
	}
	u.User, u.RawQuery = nil, ""
	return u.String()
}

// detectKind reads the format of dir's meta.json.
func detectKind(dir string) (string, error) {
	b, err := os.ReadFile(filepath.Join(dir, "meta.json"))
	if err != nil {
		return "", fmt.Errorf("open index: %w", err)
	}
	var head struct {
		Format string `json:"format"`
	}
	if err := json.Unmarshal(b, &head); err != nil {
		return "", fmt.Errorf("open index %s: meta.json: %w", dir, err)
	}
	switch head.Format {
	case bm25.FormatName:
		return KindBM25, nil
	case dense.FormatVersion:
		return KindDense, nil
	}
	return "", fmt.Errorf("open index %s: meta.json format %q is neither %q nor %q", dir, head.Format, bm25.FormatName, dense.FormatVersion)
}

// Index is an opened retriever. Retrieve answers with the backend's hits; from a unit index each hit
// carries its retrieval.UnitSpan. It is safe for concurrent use when the backend is (all three are).
type Index struct {
	retrieval.Retriever
	// Kind is bm25, dense or elastic.
	Kind string
	// The backend itself, for its own methods (batch search, statistics); the others are nil.
	BM25    *bm25.Index
	Dense   *dense.Index
	Elastic *elastic.Client
	// ElasticDense is kind elastic with a knn section: kNN search in the cluster.
	ElasticDense *elastic.Dense
	// Units maps each unit id of a unit index to its place (nil for an index of whole documents).
	Units map[string]retrieval.UnitSpan

	ordinal map[string]int // unit id -> document number in the index (the sidecar's line order)
	closers []io.Closer
}

// Lookup returns the unit id of a unit index as a hit (Score and Rank zero, Unit set), read from the
// index's stored text. Parent promotion uses it: open the parent granularity's index (OUT/g8 for the
// default parent size) and look up a hit's Unit.Parent there. It is an error on an index without a
// units sidecar, for an id the sidecar does not list, and when the stored document is not that unit
// (a sidecar that does not belong to the index).
func (ix *Index) Lookup(id string) (retrieval.Hit, error) {
	if ix.Units == nil {
		return retrieval.Hit{}, fmt.Errorf("lookup %q: not a unit index (no %s)", id, corpus.UnitsFile)
	}
	sp, ok := ix.Units[id]
	if !ok {
		return retrieval.Hit{}, fmt.Errorf("lookup %q: no such unit in %s", id, corpus.UnitsFile)
	}
	i := ix.ordinal[id]
	var h retrieval.Hit
	switch {
	case ix.BM25 != nil:
		docID, title, text, err := ix.BM25.Doc(i)
		if err != nil {
			return retrieval.Hit{}, fmt.Errorf("lookup %q: %w", id, err)
		}
		h = retrieval.Hit{ID: docID, Title: title, Text: text}
	case ix.Dense != nil:
		d, err := ix.Dense.Doc(i)
		if err != nil {
			return retrieval.Hit{}, fmt.Errorf("lookup %q: %w", id, err)
		}
		h = retrieval.Hit{ID: d.ID, Title: d.Title, Text: d.Text}
	default:
		return retrieval.Hit{}, fmt.Errorf("lookup %q: a %s index cannot look units up", id, ix.Kind)
	}
	if h.ID != id {
		return retrieval.Hit{}, fmt.Errorf("lookup %q: document %d of the index is %q (the %s does not belong to this index)", id, i, h.ID, corpus.UnitsFile)
	}
	h.Unit = &sp
	return h, nil
}

// Close releases the index and the query embedder.
func (ix *Index) Close() error {
	var errs []error
	for i := len(ix.closers) - 1; i >= 0; i-- {
		errs = append(errs, ix.closers[i].Close())
	}
	ix.closers = nil
	return errors.Join(errs...)
}

// Open opens the retriever cfg describes (after Defaults and Validate). ctx bounds the dense
// embedder's first request, which learns the embedding dimension; Open contacts no other server, except
// for kind elastic with a knn section, whose index mapping is checked against the embedder.
func Open(ctx context.Context, cfg Config) (*Index, error) {
	if cfg.Kind == "" && cfg.Dir != "" {
		k, err := detectKind(cfg.Dir)
		if err != nil {
			return nil, err
		}
		cfg.Kind = k
	}
	cfg = cfg.Defaults()
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("index config: %w", err)
	}
	ix := &Index{Kind: cfg.Kind}
	switch cfg.Kind {
	case KindBM25:
		b, err := bm25.OpenWith(cfg.Dir, bm25.OpenOptions{SkipChecksums: cfg.BM25.SkipChecksums})
		if err != nil {
			return nil, err
		}
		ix.closers = append(ix.closers, closerFunc(b.Close))
		p := b.Params()
		if cfg.BM25.K1 != nil {
			p.K1 = *cfg.BM25.K1
		}
		if cfg.BM25.B != nil {
			p.B = *cfg.BM25.B
		}
		p.ExactLength = cfg.BM25.ExactLength
		if err := b.SetParams(p); err != nil {
			ix.Close()
			return nil, err
		}
		ix.BM25, ix.Retriever = b, b
	case KindDense:
		var emb dense.Embedder
		if e := cfg.Embedder; e.Model != "" {
			oe, err := dense.NewOpenAI(ctx, dense.OpenAIConfig{BaseURL: e.BaseURL, Model: e.Model, Preset: e.Preset,
				CacheDir: e.CacheDir, APIKey: os.Getenv(e.APIKeyEnv)})
			if err != nil {
				return nil, err
			}
			ix.closers = append(ix.closers, oe)
			emb = oe
		}
		d, err := dense.Open(cfg.Dir, emb)
		if err != nil {
			ix.Close()
			return nil, err
		}
		ix.closers = append(ix.closers, d)
		ix.Dense, ix.Retriever = d, d
	case KindElastic:
		if cfg.Elastic.KNN != nil {
			e := cfg.Embedder
			oe, err := dense.NewOpenAI(ctx, dense.OpenAIConfig{BaseURL: e.BaseURL, Model: e.Model, Preset: e.Preset,
				CacheDir: e.CacheDir, APIKey: os.Getenv(e.APIKeyEnv)})
			if err != nil {
				return nil, err
			}
			ix.closers = append(ix.closers, oe)
			d, err := elastic.NewDense(ctx, cfg.Elastic, oe)
			if err != nil {
				ix.Close()
				return nil, err
			}
			ix.ElasticDense, ix.Retriever = d, d
			break
		}
		c, err := elastic.New(cfg.Elastic)
		if err != nil {
			return nil, err
		}
		ix.Elastic, ix.Retriever = c, c
	}
	if cfg.Dir != "" {
		p := filepath.Join(cfg.Dir, corpus.UnitsFile)
		if _, err := os.Stat(p); err == nil {
			units, ordinal, err := loadUnits(p)
			if err != nil {
				ix.Close()
				return nil, fmt.Errorf("open unit index %s: %w", cfg.Dir, err)
			}
			if n := indexLen(ix); n >= 0 && n != len(units) {
				ix.Close()
				return nil, fmt.Errorf("open unit index %s: %s lists %d units, the index holds %d documents", cfg.Dir, corpus.UnitsFile, len(units), n)
			}
			ix.Units, ix.ordinal = units, ordinal
			ix.Retriever = unitRetriever{inner: ix.Retriever, units: units, dir: cfg.Dir}
		}
	}
	return ix, nil
}

var _ retrieval.Lookuper = (*Index)(nil)

type closerFunc func() error

func (f closerFunc) Close() error { return f() }

// loadUnits reads a units sidecar into a map from unit id to its place (a unit id listed twice is an
// error), and each unit's line number (from 0), which is its document number in the index built
// beside the sidecar.
func loadUnits(path string) (map[string]retrieval.UnitSpan, map[string]int, error) {
	m := map[string]retrieval.UnitSpan{}
	ord := map[string]int{}
	err := corpus.ReadUnitsFile(path, func(u corpus.Unit) error {
		if _, dup := m[u.ID]; dup {
			return fmt.Errorf("unit %q listed twice", u.ID)
		}
		ord[u.ID] = len(m)
		m[u.ID] = retrieval.UnitSpan{DocID: u.DocID, Size: u.Size, Start: u.Start, End: u.End, Parent: u.Parent}
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	return m, ord, nil
}

// indexLen is the number of documents of a directory index, -1 for elastic.
func indexLen(ix *Index) int {
	switch {
	case ix.BM25 != nil:
		return ix.BM25.Len()
	case ix.Dense != nil:
		return ix.Dense.Len()
	}
	return -1
}

// unitRetriever adds each hit's unit span.
type unitRetriever struct {
	inner retrieval.Retriever
	units map[string]retrieval.UnitSpan
	dir   string
}

func (u unitRetriever) Retrieve(ctx context.Context, query string, k int) ([]retrieval.Hit, error) {
	hits, err := u.inner.Retrieve(ctx, query, k)
	if err != nil {
		return nil, err
	}
	for i := range hits {
		sp, ok := u.units[hits[i].ID]
		if !ok {
			return nil, fmt.Errorf("unit index %s: hit %q is not in its %s (the sidecar does not belong to this index)", u.dir, hits[i].ID, corpus.UnitsFile)
		}
		hits[i].Unit = &sp
	}
	return hits, nil
}
