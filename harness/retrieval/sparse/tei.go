package sparse

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/ragbench/ragbench/harness/retrieval/dense"
	"github.com/ragbench/ragbench/internal/transport"
)

// DefaultVocab is the vocabulary size of SPLADE-v3 (naver/splade-v3, BERT's uncased word pieces).
const DefaultVocab = 30522

// Config configures a TEI client. Zero fields take the defaults.
type Config struct {
	// BaseURL is the TEI server (http://127.0.0.1:8080; /embed_sparse is appended).
	BaseURL string `yaml:"base_url" json:"base_url"`
	// Model names the served model; it is recorded with indexes and keys the cache (TEI serves one
	// model and ignores it). Default naver/splade-v3.
	Model string `yaml:"model" json:"model"`
	// Vocab is the declared vocabulary size (default DefaultVocab); a returned index at or above it is
	// an error.
	Vocab int `yaml:"vocab" json:"vocab"`
	// BatchSize is the number of texts per request (default 32, TEI's default max_client_batch_size).
	BatchSize int `yaml:"batch_size" json:"batch_size"`
	// NoTruncate sends "truncate": false, so that TEI refuses an input longer than the model's maximum
	// instead of encoding its beginning (default: truncate, as SPLADE indexing does).
	NoTruncate bool `yaml:"no_truncate" json:"no_truncate"`
	// MaxRetries is the number of retries (default 5), under the transport's policy: network errors,
	// timeouts, 429 and 5xx answers are retried (after the server's Retry-After when it gives one).
	MaxRetries int `yaml:"max_retries" json:"max_retries"`
	// Backoff is the base retry delay, doubled each time with jitter and capped at 30 s (default 500 ms).
	Backoff time.Duration `yaml:"backoff" json:"backoff"`
	// Timeout bounds one request (default 120 s).
	Timeout time.Duration `yaml:"timeout" json:"timeout"`
	// CacheDir holds the on-disk cache of encodings ("" for none).
	CacheDir string `yaml:"cache_dir" json:"cache_dir"`
	// HTTPClient replaces the default client (tests).
	HTTPClient *http.Client `yaml:"-" json:"-"`
}

// Defaults fills the zero fields.
func (c Config) Defaults() Config {
	if c.Model == "" {
		c.Model = "naver/splade-v3"
	}
	if c.Vocab == 0 {
		c.Vocab = DefaultVocab
	}
	if c.BatchSize == 0 {
		c.BatchSize = 32
	}
	if c.MaxRetries == 0 {
		c.MaxRetries = 5
	}
	if c.Timeout == 0 {
		c.Timeout = 120 * time.Second
	}
	if c.Backoff == 0 {
		c.Backoff = 500 * time.Millisecond
	}
	return c
}

// Validate reports a config that cannot work.
func (c Config) Validate() error {
	switch {
	case c.BaseURL == "":
		return errors.New("sparse: no TEI base_url")
	case !strings.HasPrefix(c.BaseURL, "http://") && !strings.HasPrefix(c.BaseURL, "https://"):
		return fmt.Errorf("sparse: base_url %q: want http:// or https://", c.BaseURL)
	case c.Vocab < 1 || c.BatchSize < 1 || c.MaxRetries < 0:
		return fmt.Errorf("sparse: vocab %d, batch_size %d, max_retries %d: want positive sizes", c.Vocab, c.BatchSize, c.MaxRetries)
	}
	return nil
}

// TEI encodes texts through text-embeddings-inference's /embed_sparse, a call's batches one after the
// other, through the shared transport (internal/transport).
type TEI struct {
	cfg    Config
	client *transport.Client
	cache  *dense.Cache
	// Requests counts HTTP requests (retries included); Cached counts texts served from the cache.
	Requests, Cached atomic.Int64
}

// NewTEI returns a client for cfg (no request is made).
func NewTEI(cfg Config) (*TEI, error) {
	cfg = cfg.Defaults()
	// TEI's base URL is the config's own: no environment variable fills it.
	ep := transport.Resolve(transport.Endpoint{BaseURL: cfg.BaseURL, Model: cfg.Model}, transport.Fallbacks{}, nil)
	cfg.BaseURL = ep.BaseURL
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	t := &TEI{cfg: cfg, client: transport.New(transport.Config{
		Endpoint:         ep,
		Timeout:          cfg.Timeout,
		MaxResponseBytes: maxResponse,
		Retry: transport.Policy{MaxRetries: cfg.MaxRetries, BackoffBase: cfg.Backoff, BackoffMax: 30 * time.Second,
			MaxRetryAfter: transport.DefaultMaxRetryAfter},
		HTTPClient: cfg.HTTPClient,
	})}
	if cfg.CacheDir != "" {
		c, err := dense.OpenCache(cfg.CacheDir, "sparse\x00"+cfg.BaseURL+"\x00"+cfg.Model+"\x00"+strconv.FormatBool(cfg.NoTruncate),
			map[string]string{"kind": "sparse", "base_url": cfg.BaseURL, "model": cfg.Model})
		if err != nil {
			return nil, err
		}
		t.cache = c
	}
	return t, nil
}

// Vocab implements Encoder.
func (t *TEI) Vocab() int { return t.cfg.Vocab }

// Describe names the encoder for index metadata (no secret).
func (t *TEI) Describe() map[string]string {
	return map[string]string{"kind": "tei", "base_url": t.cfg.BaseURL, "model": t.cfg.Model, "vocab": strconv.Itoa(t.cfg.Vocab)}
}

// Close closes the cache.
func (t *TEI) Close() error {
	if t.cache != nil {
		return t.cache.Close()
	}
	return nil
}

// Encode implements Encoder: cached texts from the cache, the others in batches of BatchSize.
func (t *TEI) Encode(ctx context.Context, texts []string) ([]Vector, error) {
	out := make([]Vector, len(texts))
	var todo []int
	for i, s := range texts {
		if t.cache != nil {
			v, ok, err := t.cache.Get("", s)
			if err != nil {
				return nil, err
			}
			if ok {
				out[i] = fromCache(v)
				t.Cached.Add(1)
				continue
			}
		}
		todo = append(todo, i)
	}
	for lo := 0; lo < len(todo); lo += t.cfg.BatchSize {
		idx := todo[lo:min(lo+t.cfg.BatchSize, len(todo))]
		in := make([]string, len(idx))
		for j, i := range idx {
			in[j] = texts[i]
		}
		vs, err := t.request(ctx, in)
		if err != nil {
			return nil, err
		}
		for j, i := range idx {
			out[i] = vs[j]
			if t.cache != nil {
				if err := t.cache.Put("", texts[i], toCache(vs[j])); err != nil {
					return nil, err
				}
			}
		}
	}
	return out, nil
}

// The cache holds a vector as float32s: its length, then index and value of each entry (the index's
// bits stored as a float32's bits, exactly).
func toCache(v Vector) []float32 {
	out := make([]float32, 1+2*len(v))
	out[0] = math.Float32frombits(uint32(len(v)))
	for i, e := range v {
		out[1+2*i] = math.Float32frombits(e.Index)
		out[2+2*i] = e.Value
	}
	return out
}

func fromCache(f []float32) Vector {
	n := int(math.Float32bits(f[0]))
	if 1+2*n != len(f) {
		return nil
	}
	v := make(Vector, n)
	for i := range v {
		v[i] = Entry{Index: math.Float32bits(f[1+2*i]), Value: f[2+2*i]}
	}
	return v
}

// teiError is TEI's error body.
type teiError struct {
	Error     string `json:"error"`
	ErrorType string `json:"error_type"`
}

// maxResponse bounds a response body (a batch of 32 SPLADE vectors is well under a megabyte).
const maxResponse = 256 << 20

// request sends one batch under the transport's retry policy.
func (t *TEI) request(ctx context.Context, in []string) ([]Vector, error) {
	body, _ := json.Marshal(map[string]any{"inputs": in, "truncate": !t.cfg.NoTruncate})
	var vs []Vector
	res := t.client.Retry(ctx, "sparse encoder "+t.cfg.Model, func(ctx context.Context) error {
		t.Requests.Add(1)
		var err error
		vs, err = t.once(ctx, body, len(in))
		return err
	})
	if res.Outcome != transport.Done {
		return nil, res.Err
	}
	return vs, nil
}

// statusError is a TEI error answer, worded with TEI's error type; it unwraps to the transport's
// StatusError, which the retry policy reads.
type statusError struct {
	msg string
	err *transport.StatusError
}

func (e *statusError) Error() string { return e.msg }
func (e *statusError) Unwrap() error { return e.err }

// once makes one request.
func (t *TEI) once(ctx context.Context, body []byte, n int) ([]Vector, error) {
	url := t.client.URL("/embed_sparse")
	shown := transport.RedactURL(url)
	ans, err := t.client.Post(ctx, url, body)
	var se *transport.StatusError
	switch {
	case errors.As(err, &se):
		var te teiError
		msg := strings.TrimSpace(string(se.Body))
		if json.Unmarshal(se.Body, &te) == nil && te.Error != "" {
			msg = te.ErrorType + ": " + te.Error
		}
		if len(msg) > 500 {
			msg = msg[:500] + "…"
		}
		msg = fmt.Sprintf("sparse: POST %s: %d %s: %s", shown, se.Code, http.StatusText(se.Code), msg)
		if se.Code == http.StatusFailedDependency {
			msg += " (424: the server's model cannot produce sparse vectors; serve a SPLADE model such as naver/splade-v3)"
		}
		return nil, &statusError{msg: msg, err: se}
	case err != nil:
		return nil, fmt.Errorf("sparse: POST %s: %w", shown, err)
	}
	var raw [][]Entry
	if err := json.Unmarshal(ans.Body, &raw); err != nil {
		return nil, fmt.Errorf("sparse: POST %s: the answer is not a list of sparse vectors: %w", shown, err)
	}
	if len(raw) != n {
		return nil, fmt.Errorf("sparse: POST %s: %d vectors for %d inputs", shown, len(raw), n)
	}
	out := make([]Vector, n)
	for i, r := range raw {
		v, err := Check(Vector(r), t.cfg.Vocab, fmt.Sprintf("sparse: POST %s: vector %d of %d (model %s)", shown, i+1, n, t.cfg.Model))
		if err != nil {
			return nil, err
		}
		out[i] = v
	}
	return out, nil
}
