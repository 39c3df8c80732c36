package sparse

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/ragbench/ragbench/harness/retrieval/dense"
	"github.com/ragbench/ragbench/internal/retry"
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
	// MaxRetries is the number of retries of a 429 or 503 answer or a network error (default 5).
	MaxRetries int `yaml:"max_retries" json:"max_retries"`
	// Backoff is the first retry delay, doubled each time and capped at 30 s (default 500 ms).
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

// TEI encodes texts through text-embeddings-inference's /embed_sparse.
type TEI struct {
	cfg   Config
	http  *http.Client
	cache *dense.Cache
	// Requests counts HTTP requests (retries included); Cached counts texts served from the cache.
	Requests, Cached atomic.Int64
}

// NewTEI returns a client for cfg (no request is made).
func NewTEI(cfg Config) (*TEI, error) {
	cfg = cfg.Defaults()
	cfg.BaseURL = strings.TrimRight(cfg.BaseURL, "/")
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	t := &TEI{cfg: cfg, http: cfg.HTTPClient}
	if t.http == nil {
		t.http = &http.Client{Timeout: cfg.Timeout}
	}
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

func (t *TEI) request(ctx context.Context, in []string) ([]Vector, error) {
	body, _ := json.Marshal(map[string]any{"inputs": in, "truncate": !t.cfg.NoTruncate})
	url := t.cfg.BaseURL + "/embed_sparse"
	back := retry.NewBackoff(t.cfg.Backoff, 30*time.Second)
	for attempt := 0; ; attempt++ {
		vs, wait, err := t.once(ctx, url, body, len(in))
		if err == nil {
			return vs, nil
		}
		if wait < 0 || attempt >= t.cfg.MaxRetries || ctx.Err() != nil {
			return nil, err
		}
		d := back.Next()
		if wait > d {
			d = wait
		}
		if serr := retry.Sleep(ctx, d); serr != nil {
			return nil, err
		}
	}
}

// once makes one request; wait is ≥ 0 when the failure may be retried (at least that long), -1 when not.
func (t *TEI) once(ctx context.Context, url string, body []byte, n int) (vs []Vector, wait time.Duration, err error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return nil, -1, fmt.Errorf("sparse: %w", err)
	}
	req.Header.Set("Content-Type", "application/json")
	t.Requests.Add(1)
	resp, err := t.http.Do(req)
	if err != nil {
		if retry.Permanent(err) {
			return nil, -1, fmt.Errorf("sparse: POST %s: %w", url, err)
		}
		return nil, 0, fmt.Errorf("sparse: POST %s: %w", url, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxResponse+1))
	if err != nil {
		return nil, 0, fmt.Errorf("sparse: POST %s: reading the answer: %w", url, err)
	}
	if len(b) > maxResponse {
		return nil, -1, fmt.Errorf("sparse: POST %s: answer larger than %d bytes", url, maxResponse)
	}
	if resp.StatusCode != http.StatusOK {
		var te teiError
		msg := strings.TrimSpace(string(b))
		if json.Unmarshal(b, &te) == nil && te.Error != "" {
			msg = te.ErrorType + ": " + te.Error
		}
		if len(msg) > 500 {
			msg = msg[:500] + "…"
		}
		err := fmt.Errorf("sparse: POST %s: %s: %s", url, resp.Status, msg)
		switch resp.StatusCode {
		case http.StatusTooManyRequests, http.StatusServiceUnavailable, http.StatusBadGateway, http.StatusGatewayTimeout:
			return nil, retry.ParseAfter(resp.Header, time.Now()), err
		case http.StatusFailedDependency:
			return nil, -1, fmt.Errorf("%w (424: the server's model cannot produce sparse vectors; serve a SPLADE model such as naver/splade-v3)", err)
		}
		return nil, -1, err
	}
	var raw [][]Entry
	if err := json.Unmarshal(b, &raw); err != nil {
		return nil, -1, fmt.Errorf("sparse: POST %s: the answer is not a list of sparse vectors: %w", url, err)
	}
	if len(raw) != n {
		return nil, -1, fmt.Errorf("sparse: POST %s: %d vectors for %d inputs", url, len(raw), n)
	}
	out := make([]Vector, n)
	for i, r := range raw {
		v, err := Check(Vector(r), t.cfg.Vocab, fmt.Sprintf("sparse: POST %s: vector %d of %d (model %s)", url, i+1, n, t.cfg.Model))
		if err != nil {
			return nil, -1, err
		}
		out[i] = v
	}
	return out, 0, nil
}
