package dense

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ragbench/ragbench/internal/retry"
	"github.com/ragbench/ragbench/internal/transport"
)

// Instruction presets for embedding models that want different text for queries and passages.
const (
	// PresetE5 is the e5 family (intfloat/e5-*, multilingual-e5-*): "query: " and "passage: ".
	PresetE5 = "e5"
	// PresetBGE is BAAI bge-*-en-v1.5: an instruction before queries, nothing before passages.
	PresetBGE = "bge"
	// PresetQwen3 is Qwen3-Embedding: "Instruct: <task>\nQuery:" before queries (no space after
	// "Query:", as in the model card's get_detailed_instruct), nothing before passages.
	PresetQwen3 = "qwen3"
)

// DefaultQwen3Task is the task description of the Qwen3-Embedding retrieval instruction.
const DefaultQwen3Task = "Given a web search query, retrieve relevant passages that answer the query"

// Prefixes returns the query and passage prefixes of a preset ("" for none). task replaces the Qwen3
// task description when not empty.
func Prefixes(preset, task string) (query, passage string, err error) {
	switch strings.ToLower(preset) {
	case "", "none":
		return "", "", nil
	case PresetE5:
		return "query: ", "passage: ", nil
	case PresetBGE:
		return "Represent this sentence for searching relevant passages: ", "", nil
	case PresetQwen3:
		if task == "" {
			task = DefaultQwen3Task
		}
		return "Instruct: " + task + "\nQuery:", "", nil
	}
	return "", "", fmt.Errorf("unknown instruction preset %q (want e5, bge, qwen3 or none)", preset)
}

// OpenAIConfig configures an OpenAI-compatible embeddings client. Zero fields take the defaults.
type OpenAIConfig struct {
	// BaseURL of the API, ending in /v1 (default $OPENAI_BASE_URL, else https://api.openai.com/v1).
	// TEI, vLLM, Ollama and llama.cpp servers all serve /v1/embeddings.
	BaseURL string `yaml:"base_url" json:"base_url"`
	// APIKey defaults to $OPENAI_API_KEY. It is sent as a bearer token and never logged, cached or
	// written anywhere; local servers usually accept any value.
	APIKey string `yaml:"-" json:"-"`
	// Model is the model name the server expects (required).
	Model string `yaml:"model" json:"model"`
	// Dim is the embedding dimension. Zero means: ask the server once, on construction.
	Dim int `yaml:"dim" json:"dim"`
	// Dimensions, when set, is sent as the request's "dimensions" (OpenAI text-embedding-3, Matryoshka
	// models); Dim then defaults to it.
	Dimensions int `yaml:"dimensions" json:"dimensions"`
	// Preset picks the instruction prefixes (e5, bge, qwen3); QueryPrefix and PassagePrefix override it.
	Preset        string `yaml:"preset" json:"preset"`
	Task          string `yaml:"task" json:"task"`
	QueryPrefix   string `yaml:"query_prefix" json:"query_prefix"`
	PassagePrefix string `yaml:"passage_prefix" json:"passage_prefix"`
	// BatchSize is the number of texts per request (default 64).
	BatchSize int `yaml:"batch_size" json:"batch_size"`
	// Concurrency is the number of batches of one call in flight at once (default 1). TEI and vLLM batch
	// concurrent requests on the server; raise it for large builds.
	Concurrency int `yaml:"concurrency" json:"concurrency"`
	// MaxRetries is the number of retries after a failed request (default 5), under the transport's
	// policy: network errors, timeouts, 429 and 5xx are retried (after the server's Retry-After when it
	// gives one); other HTTP errors and malformed answers fail at once.
	MaxRetries int `yaml:"max_retries" json:"max_retries"`
	// Backoff is the base retry delay, doubled each time with jitter and capped at 30 s (default 500 ms).
	Backoff time.Duration `yaml:"backoff" json:"backoff"`
	// Timeout bounds one request (default 120 s).
	Timeout time.Duration `yaml:"timeout" json:"timeout"`
	// CacheDir holds the on-disk embedding cache ("" for none).
	CacheDir string `yaml:"cache_dir" json:"cache_dir"`
	// OnRetry, when set, is told about every retry before its wait (see retry.Printer). A DNS failure
	// or a connection refused by a loopback address is never retried.
	OnRetry retry.Notifier `yaml:"-" json:"-"`
	// HTTPClient replaces the default client (for tests).
	HTTPClient *http.Client `yaml:"-" json:"-"`
}

// OpenAI embeds texts through an OpenAI-compatible /v1/embeddings endpoint, through the shared
// transport (internal/transport: its retry policy, concurrency limit and redaction).
type OpenAI struct {
	cfg    OpenAIConfig
	client *transport.Client
	qp, pp string
	cache  *Cache
	// Requests counts HTTP requests made (retries included); Cached counts texts served from the cache.
	Requests, Cached atomic.Int64
}

// maxEmbeddingsResponse bounds an embeddings answer's body.
const maxEmbeddingsResponse = 256 << 20

// NewOpenAI returns an embedder for cfg. When cfg.Dim and cfg.Dimensions are zero it embeds one probe
// text to learn the dimension.
func NewOpenAI(ctx context.Context, cfg OpenAIConfig) (*OpenAI, error) {
	ep := transport.Resolve(transport.Endpoint{BaseURL: cfg.BaseURL, Model: cfg.Model, Key: cfg.APIKey}, transport.OpenAI, os.Getenv)
	cfg.BaseURL, cfg.APIKey = ep.BaseURL, ep.Key
	if cfg.Model == "" {
		return nil, errors.New("openai embedder: no model given")
	}
	if cfg.BatchSize <= 0 {
		cfg.BatchSize = 64
	}
	if cfg.Concurrency <= 0 {
		cfg.Concurrency = 1
	}
	if cfg.MaxRetries < 0 {
		cfg.MaxRetries = 0
	} else if cfg.MaxRetries == 0 {
		cfg.MaxRetries = 5
	}
	if cfg.Backoff <= 0 {
		cfg.Backoff = 500 * time.Millisecond
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = 120 * time.Second
	}
	if cfg.Dim == 0 {
		cfg.Dim = cfg.Dimensions
	}
	qp, pp, err := Prefixes(cfg.Preset, cfg.Task)
	if err != nil {
		return nil, fmt.Errorf("openai embedder: %w", err)
	}
	if cfg.QueryPrefix != "" {
		qp = cfg.QueryPrefix
	}
	if cfg.PassagePrefix != "" {
		pp = cfg.PassagePrefix
	}
	client := transport.New(transport.Config{
		Endpoint:         ep,
		Timeout:          cfg.Timeout,
		MaxResponseBytes: maxEmbeddingsResponse,
		Retry: transport.Policy{MaxRetries: cfg.MaxRetries, BackoffBase: cfg.Backoff, BackoffMax: 30 * time.Second,
			MaxRetryAfter: transport.DefaultMaxRetryAfter, OnRetry: cfg.OnRetry},
		HTTPClient: cfg.HTTPClient,
	})
	e := &OpenAI{cfg: cfg, client: client, qp: qp, pp: pp}
	if cfg.CacheDir != "" {
		ns, info := cacheNamespace(cfg)
		c, err := OpenCache(cfg.CacheDir, ns, info)
		if err != nil {
			return nil, fmt.Errorf("openai embedder: %w", err)
		}
		e.cache = c
	}
	if e.cfg.Dim == 0 {
		v, err := e.Embed(ctx, []string{"dimension probe"}, Passage)
		if err != nil {
			e.Close()
			return nil, fmt.Errorf("openai embedder: probe the dimension: %w", err)
		}
		e.cfg.Dim = len(v[0])
	}
	return e, nil
}

// cacheNamespace is the embedding cache's namespace (its file name is a hash of it) and the
// description written beside it: the base URL as sanitizeURL records it, the model and the requested
// dimensions. Changing it orphans every cache on disk (TestOpenAICacheFilesPinned pins it).
func cacheNamespace(cfg OpenAIConfig) (string, map[string]string) {
	u := sanitizeURL(cfg.BaseURL)
	return fmt.Sprintf("openai\x00%s\x00%s\x00%d", u, cfg.Model, cfg.Dimensions),
		map[string]string{"base_url": u, "model": cfg.Model, "dimensions": strconv.Itoa(cfg.Dimensions)}
}

// sanitizeURL is the base URL as an index's meta.json and the embedding cache record it: without user
// information, query and fragment, and without trailing slashes. It is part of the cache's key, so it
// stays as it is; errors and logs print URLs with transport.RedactURL.
func sanitizeURL(s string) string {
	u, err := url.Parse(s)
	if err != nil {
		return "unparseable-url"
	}
	u.User, u.RawQuery, u.Fragment = nil, "", ""
	return strings.TrimRight(u.String(), "/")
}

// Close closes the cache.
func (e *OpenAI) Close() error {
	if e.cache != nil {
		return e.cache.Close()
	}
	return nil
}

// Dim returns the embedding dimension.
func (e *OpenAI) Dim() int { return e.cfg.Dim }

// Describe identifies the model for meta.json (never the key).
func (e *OpenAI) Describe() map[string]string {
	return map[string]string{"kind": "openai", "model": e.cfg.Model, "base_url": sanitizeURL(e.cfg.BaseURL),
		"query_prefix": e.qp, "passage_prefix": e.pp, "dim": strconv.Itoa(e.cfg.Dim), "dimensions": strconv.Itoa(e.cfg.Dimensions)}
}

// Prefix returns the instruction prefix used for kind.
func (e *OpenAI) Prefix(kind Kind) string {
	if kind == Query {
		return e.qp
	}
	return e.pp
}

// Embed embeds texts with the kind's prefix, in batches, through the cache.
func (e *OpenAI) Embed(ctx context.Context, texts []string, kind Kind) ([][]float32, error) {
	prefix := e.Prefix(kind)
	out := make([][]float32, len(texts))
	var todo []int
	for i, t := range texts {
		if e.cache != nil {
			if v, ok, err := e.cache.Get(prefix, t); err != nil {
				return nil, err
			} else if ok {
				out[i] = v
				e.Cached.Add(1)
				continue
			}
		}
		todo = append(todo, i)
	}
	var batches [][]int
	for start := 0; start < len(todo); start += e.cfg.BatchSize {
		batches = append(batches, todo[start:min(start+e.cfg.BatchSize, len(todo))])
	}
	if len(batches) == 0 {
		return out, nil
	}
	// Batches go out Concurrency at a time, in order (one at a time: the cache is written in the
	// texts' order); the first error cancels the rest.
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		wg       sync.WaitGroup
		mu       sync.Mutex
		firstErr error
	)
	embed := func(idx []int) {
		in := make([]string, len(idx))
		for j, i := range idx {
			in[j] = prefix + texts[i]
		}
		vecs, err := e.request(ctx, in)
		mu.Lock()
		defer mu.Unlock()
		if err != nil {
			if firstErr == nil {
				firstErr = fmt.Errorf("embed %d texts (model %s at %s): %w", len(in), e.cfg.Model, transport.RedactURL(e.cfg.BaseURL), err)
				cancel()
			}
			return
		}
		for j, i := range idx {
			out[i] = vecs[j]
			if e.cache != nil && firstErr == nil {
				if err := e.cache.Put(prefix, texts[i], vecs[j]); err != nil {
					firstErr = err
					cancel()
					return
				}
			}
		}
	}
	limit := transport.NewLimit(e.cfg.Concurrency)
	for _, idx := range batches {
		if limit.Acquire(ctx) != nil || ctx.Err() != nil {
			break
		}
		wg.Add(1)
		go func(idx []int) {
			defer wg.Done()
			defer limit.Release()
			embed(idx)
		}(idx)
	}
	wg.Wait()
	if firstErr != nil {
		return nil, firstErr
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return out, nil
}

// embeddingsRequest is the JSON of an embeddings request, its members in name order as OpenAI's
// clients send them.
type embeddingsRequest struct {
	Dimensions     int      `json:"dimensions,omitempty"`
	EncodingFormat string   `json:"encoding_format"`
	Input          []string `json:"input"`
	Model          string   `json:"model"`
}

// request sends one batch under the transport's retry policy.
func (e *OpenAI) request(ctx context.Context, in []string) ([][]float32, error) {
	body, err := json.Marshal(embeddingsRequest{Dimensions: e.cfg.Dimensions, EncodingFormat: "float", Input: in, Model: e.cfg.Model})
	if err != nil {
		return nil, err
	}
	var vecs [][]float32
	res := e.client.Retry(ctx, "embeddings "+e.cfg.Model, func(ctx context.Context) error {
		e.Requests.Add(1)
		var err error
		vecs, err = e.once(ctx, body, len(in))
		return err
	})
	switch res.Outcome {
	case transport.Done:
		return vecs, nil
	case transport.Exhausted:
		return nil, fmt.Errorf("giving up after %d attempts: %w", res.Attempts, res.Err)
	case transport.Canceled:
		return nil, fmt.Errorf("%w (last error: %v)", res.CtxErr, res.Err)
	}
	return nil, res.Err
}

// errBadResponse marks a response that parsed but is unusable; it is not retried.
var errBadResponse = errors.New("bad embeddings response")

// once sends one request and checks the answer.
func (e *OpenAI) once(ctx context.Context, body []byte, n int) ([][]float32, error) {
	ans, err := e.client.Post(ctx, e.client.URL("/embeddings"), body)
	if err != nil {
		return nil, err
	}
	var resp struct {
		Data []struct {
			Index     int       `json:"index"`
			Embedding []float32 `json:"embedding"`
		} `json:"data"`
	}
	if err := json.Unmarshal(ans.Body, &resp); err != nil {
		return nil, &transport.MalformedError{Reason: "embeddings answer: " + err.Error(), Excerpt: e.client.Redactor().String(transport.Excerpt(ans.Body))}
	}
	if len(resp.Data) != n {
		return nil, fmt.Errorf("%w: %d embeddings for %d inputs", errBadResponse, len(resp.Data), n)
	}
	out := make([][]float32, n)
	for _, d := range resp.Data {
		if d.Index < 0 || d.Index >= n || out[d.Index] != nil {
			return nil, fmt.Errorf("%w: bad or repeated index %d", errBadResponse, d.Index)
		}
		if len(d.Embedding) == 0 || (e.cfg.Dim > 0 && len(d.Embedding) != e.cfg.Dim) {
			return nil, fmt.Errorf("%w: embedding %d has %d dimensions, want %d", errBadResponse, d.Index, len(d.Embedding), e.cfg.Dim)
		}
		out[d.Index] = d.Embedding
	}
	return out, nil
}
