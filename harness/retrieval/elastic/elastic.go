package elastic

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/ragbench/ragbench/internal/retry"

	"github.com/ragbench/ragbench/harness/retrieval"
	"github.com/ragbench/ragbench/harness/text"
)

// Defaults of the QuCo/DRAGIN setting.
const (
	DefaultURL            = "http://localhost:9200"
	DefaultIndex          = "wiki"
	DefaultTitleField     = "title"
	DefaultTextField      = "txt"
	DefaultMaxQueryTokens = 64
	DefaultTieBreaker     = 0.5
)

// Config says where the cluster is and how to query it. Zero fields take the defaults.
type Config struct {
	// URL of the cluster (default $ELASTIC_URL, else http://localhost:9200).
	URL string `yaml:"url" json:"url"`
	// Index name (default "wiki", DRAGIN's).
	Index string `yaml:"index" json:"index"`
	// TitleField and TextField name the two text fields (default "title" and "txt").
	TitleField string `yaml:"title_field" json:"title_field"`
	TextField  string `yaml:"text_field" json:"text_field"`
	// MaxQueryTokens left-truncates queries (default 64; negative for none).
	MaxQueryTokens int `yaml:"max_query_tokens" json:"max_query_tokens"`
	// Truncate replaces the default word-token truncation (for example with an LLM tokenizer).
	Truncate func(query string, maxTokens int) string `yaml:"-" json:"-"`
	// Timeout bounds one HTTP request (default 30 s).
	Timeout time.Duration `yaml:"timeout" json:"timeout"`
	// MaxRetries after a failed request (default 3): network errors, timeouts, 429, 502, 503 and 504
	// are retried with exponential backoff from Backoff (default 500 ms, capped at 30 s).
	MaxRetries int           `yaml:"max_retries" json:"max_retries"`
	Backoff    time.Duration `yaml:"backoff" json:"backoff"`
	// MaxWait caps the total wait between retries of one request (0: no cap beyond MaxRetries).
	MaxWait time.Duration `yaml:"max_wait,omitempty" json:"max_wait,omitempty"`
	// OnRetry, when set, is told about every retry (see retry.Printer).
	OnRetry retry.Notifier `yaml:"-" json:"-"`
	// BulkDocs is the number of documents per bulk request (default 2000).
	BulkDocs int `yaml:"bulk_docs" json:"bulk_docs"`
	// Credentials come only from the environment: ELASTIC_API_KEY (sent as "ApiKey ...") or
	// ELASTIC_USERNAME and ELASTIC_PASSWORD (basic auth). They are never logged or written.
	apiKey, user, password string
	// KNN, when set, makes the index a dense one (see KNNConfig, NewDense and IndexOptions.Embedder).
	KNN *KNNConfig `yaml:"knn,omitempty" json:"knn,omitempty"`
	// HTTPClient replaces the default client (for tests).
	HTTPClient *http.Client `yaml:"-" json:"-"`
}

func (c *Config) defaults() {
	if c.URL == "" {
		c.URL = os.Getenv("ELASTIC_URL")
	}
	if c.URL == "" {
		c.URL = DefaultURL
	}
	c.URL = strings.TrimRight(c.URL, "/")
	if c.Index == "" {
		c.Index = DefaultIndex
	}
	if c.TitleField == "" {
		c.TitleField = DefaultTitleField
	}
	if c.TextField == "" {
		c.TextField = DefaultTextField
	}
	if c.MaxQueryTokens == 0 {
		c.MaxQueryTokens = DefaultMaxQueryTokens
	}
	if c.Truncate == nil {
		c.Truncate = LeftTruncate
	}
	if c.Timeout <= 0 {
		c.Timeout = 30 * time.Second
	}
	if c.MaxRetries < 0 {
		c.MaxRetries = 0
	} else if c.MaxRetries == 0 {
		c.MaxRetries = 3
	}
	if c.Backoff <= 0 {
		c.Backoff = 500 * time.Millisecond
	}
	if c.BulkDocs <= 0 {
		c.BulkDocs = 2000
	}
	c.apiKey = os.Getenv("ELASTIC_API_KEY")
	c.user, c.password = os.Getenv("ELASTIC_USERNAME"), os.Getenv("ELASTIC_PASSWORD")
	if c.HTTPClient == nil {
		c.HTTPClient = &http.Client{}
	}
	if c.KNN != nil {
		k := *c.KNN
		k.defaults()
		c.KNN = &k
	}
}

// LeftTruncate keeps the last maxTokens word tokens of s (harness/text tokenization), cutting the
// original string at the first kept token, so spacing and case are preserved. maxTokens < 0 keeps all.
func LeftTruncate(s string, maxTokens int) string {
	if maxTokens < 0 {
		return s
	}
	spans := text.AppendSpans(nil, s)
	if len(spans) <= maxTokens {
		return s
	}
	if maxTokens == 0 {
		return ""
	}
	return s[spans[len(spans)-maxTokens].Start:]
}

// Client talks to one index. It is safe for concurrent use.
type Client struct {
	cfg Config
}

// New returns a client for cfg. It does not contact the cluster; call Ping for that.
func New(cfg Config) (*Client, error) {
	cfg.defaults()
	u, err := url.Parse(cfg.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("elastic: bad cluster URL %q (want http[s]://host:port)", redact(cfg.URL))
	}
	if u.User != nil {
		return nil, errors.New("elastic: put credentials in ELASTIC_USERNAME/ELASTIC_PASSWORD or ELASTIC_API_KEY, not in the URL")
	}
	if strings.ContainsAny(cfg.Index, "/?#* ,") || cfg.Index != strings.ToLower(cfg.Index) {
		return nil, fmt.Errorf("elastic: bad index name %q", cfg.Index)
	}
	if cfg.KNN != nil {
		if err := cfg.KNN.Validate(); err != nil {
			return nil, fmt.Errorf("elastic: %w", err)
		}
	}
	return &Client{cfg: cfg}, nil
}

// Config returns the resolved configuration (without credentials).
func (c *Client) Config() Config {
	cfg := c.cfg
	cfg.apiKey, cfg.user, cfg.password = "", "", ""
	return cfg
}

// redact drops user info from a URL for messages.
func redact(s string) string {
	u, err := url.Parse(s)
	if err != nil {
		return "<unparseable URL>"
	}
	u.User = nil
	return u.String()
}

// Error is an error answer from the cluster.
type Error struct {
	Status int
	Type   string // error.type, e.g. index_not_found_exception
	Reason string // error.reason
	Body   string // the raw body, truncated, when it was not the usual JSON
}

// Error formats the status, type and reason.
func (e *Error) Error() string {
	if e.Type != "" {
		return fmt.Sprintf("elasticsearch: HTTP %d: %s: %s", e.Status, e.Type, e.Reason)
	}
	return fmt.Sprintf("elasticsearch: HTTP %d: %s", e.Status, e.Body)
}

// Temporary reports whether the request may succeed when repeated.
func (e *Error) Temporary() bool {
	switch e.Status {
	case 429, 502, 503, 504:
		return true
	}
	return e.Type == "es_rejected_execution_exception" || e.Type == "circuit_breaking_exception"
}

type esError struct {
	Error  json.RawMessage `json:"error"`
	Status int             `json:"status"`
}

func parseError(status int, body []byte) *Error {
	e := &Error{Status: status}
	var r esError
	if json.Unmarshal(body, &r) == nil && len(r.Error) > 0 {
		var obj struct {
			Type      string `json:"type"`
			Reason    string `json:"reason"`
			RootCause []struct {
				Type   string `json:"type"`
				Reason string `json:"reason"`
			} `json:"root_cause"`
		}
		if json.Unmarshal(r.Error, &obj) == nil && obj.Type != "" {
			e.Type, e.Reason = obj.Type, obj.Reason
			if len(obj.RootCause) > 0 && obj.RootCause[0].Reason != "" && obj.RootCause[0].Reason != obj.Reason {
				e.Reason += " (root cause: " + obj.RootCause[0].Type + ": " + obj.RootCause[0].Reason + ")"
			}
			return e
		}
		var s string
		if json.Unmarshal(r.Error, &s) == nil {
			e.Type, e.Reason = "error", s
			return e
		}
	}
	b := string(body)
	if len(b) > 300 {
		b = b[:300] + "..."
	}
	e.Body = b
	return e
}

// do sends one request with retries and returns the body of a 2xx answer.
func (c *Client) do(ctx context.Context, method, path string, body []byte, contentType string) ([]byte, error) {
	backoff := retry.NewBackoff(c.cfg.Backoff, 30*time.Second)
	var last error
	var waited time.Duration
	for attempt := 0; attempt <= c.cfg.MaxRetries; attempt++ {
		if attempt > 0 {
			d := backoff.Next()
			if c.cfg.MaxWait > 0 && waited+d > c.cfg.MaxWait {
				return nil, fmt.Errorf("%s %s at %s: giving up after %d attempts and %s of waiting (the cap): %w", method, path, redact(c.cfg.URL), attempt, waited.Round(time.Millisecond), last)
			}
			if c.cfg.OnRetry != nil {
				c.cfg.OnRetry(method+" "+redact(c.cfg.URL)+path, attempt, last, d)
			}
			waited += d
			if err := retry.Sleep(ctx, d); err != nil {
				return nil, fmt.Errorf("%s %s: %w (last error: %v)", method, path, err, last)
			}
		}
		b, err := c.once(ctx, method, path, body, contentType)
		if err == nil {
			return b, nil
		}
		if ctx.Err() != nil {
			return nil, fmt.Errorf("%s %s: %w", method, path, err)
		}
		last = err
		var ee *Error
		if errors.As(err, &ee) && !ee.Temporary() {
			return nil, fmt.Errorf("%s %s: %w", method, path, err)
		}
		if retry.Permanent(err) {
			return nil, fmt.Errorf("%s %s at %s: %w (not retried: it cannot succeed on a retry)", method, path, redact(c.cfg.URL), err)
		}
	}
	return nil, fmt.Errorf("%s %s at %s: giving up after %d attempts: %w", method, path, redact(c.cfg.URL), c.cfg.MaxRetries+1, last)
}

// maxResponse bounds a response body.
const maxResponse = 256 << 20

func (c *Client) once(ctx context.Context, method, path string, body []byte, contentType string) ([]byte, error) {
	rctx, cancel := context.WithTimeout(ctx, c.cfg.Timeout)
	defer cancel()
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(rctx, method, c.cfg.URL+path, rd)
	if err != nil {
		return nil, err
	}
	if body != nil {
		req.Header.Set("Content-Type", contentType)
	}
	req.Header.Set("Accept", "application/json")
	switch {
	case c.cfg.apiKey != "":
		req.Header.Set("Authorization", "ApiKey "+c.cfg.apiKey)
	case c.cfg.user != "":
		req.SetBasicAuth(c.cfg.user, c.cfg.password)
	}
	resp, err := c.cfg.HTTPClient.Do(req)
	if err != nil {
		// url.Error carries the URL (no credentials: they are headers), and the cause.
		return nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxResponse))
	if err != nil {
		return nil, fmt.Errorf("read response: %w", err)
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return nil, parseError(resp.StatusCode, b)
	}
	return b, nil
}

// Info is what the cluster says about itself.
type Info struct {
	Name         string `json:"name"`
	ClusterName  string `json:"cluster_name"`
	Version      string `json:"version"`
	Distribution string `json:"distribution"` // "elasticsearch" or "opensearch"
}

// Ping asks the cluster for its name and version.
func (c *Client) Ping(ctx context.Context) (Info, error) {
	b, err := c.do(ctx, http.MethodGet, "/", nil, "")
	if err != nil {
		return Info{}, fmt.Errorf("elastic ping: %w", err)
	}
	var r struct {
		Name        string `json:"name"`
		ClusterName string `json:"cluster_name"`
		Version     struct {
			Number       string `json:"number"`
			Distribution string `json:"distribution"`
		} `json:"version"`
	}
	if err := json.Unmarshal(b, &r); err != nil {
		return Info{}, fmt.Errorf("elastic ping: bad response: %w", err)
	}
	info := Info{Name: r.Name, ClusterName: r.ClusterName, Version: r.Version.Number, Distribution: r.Version.Distribution}
	if info.Distribution == "" {
		info.Distribution = "elasticsearch"
	}
	return info, nil
}

// Query returns the search body for query q and k hits: the DRAGIN multi_match (after truncation).
func (c *Client) Query(q string, k int) map[string]any {
	return map[string]any{
		"_source": true,
		"query": map[string]any{
			"multi_match": map[string]any{
				"query":       q,
				"type":        "best_fields",
				"fields":      []string{c.cfg.TitleField, c.cfg.TextField},
				"tie_breaker": DefaultTieBreaker,
			},
		},
		"size": k,
	}
}

// Truncate applies the configured left truncation to a query.
func (c *Client) Truncate(q string) string { return c.cfg.Truncate(q, c.cfg.MaxQueryTokens) }

type searchResponse struct {
	TimedOut bool `json:"timed_out"`
	Shards   *struct {
		Total    int `json:"total"`
		Failed   int `json:"failed"`
		Failures []struct {
			Shard  int             `json:"shard"`
			Index  string          `json:"index"`
			Reason json.RawMessage `json:"reason"`
		} `json:"failures"`
	} `json:"_shards"`
	Hits *struct {
		Hits []struct {
			ID     string          `json:"_id"`
			Score  *float64        `json:"_score"`
			Source json.RawMessage `json:"_source"`
		} `json:"hits"`
	} `json:"hits"`
	Error  json.RawMessage `json:"error"`
	Status int             `json:"status"`
}

func (c *Client) hits(r searchResponse) ([]retrieval.Hit, error) {
	if len(r.Error) > 0 {
		b, _ := json.Marshal(esError{Error: r.Error, Status: r.Status})
		return nil, parseError(r.Status, b)
	}
	if r.Hits == nil {
		return nil, errors.New("response has no hits object")
	}
	// A shard that failed or a search that timed out answers with the hits of the other shards: fewer
	// or other hits than the index holds, which must not pass for a ranking.
	if sh := r.Shards; sh != nil && sh.Failed > 0 {
		msg := fmt.Sprintf("%d of %d shards failed", sh.Failed, sh.Total)
		if len(sh.Failures) > 0 && len(sh.Failures[0].Reason) > 0 {
			f := sh.Failures[0]
			ee := parseError(0, append(append([]byte(`{"error":`), f.Reason...), '}'))
			msg += fmt.Sprintf(" (shard %d of %s: %s: %s)", f.Shard, f.Index, ee.Type, ee.Reason)
		}
		return nil, fmt.Errorf("partial results: %s", msg)
	}
	if r.TimedOut {
		return nil, errors.New("partial results: the search timed out on some shards")
	}
	out := make([]retrieval.Hit, 0, len(r.Hits.Hits))
	for i, h := range r.Hits.Hits {
		var src map[string]any
		if err := json.Unmarshal(h.Source, &src); err != nil {
			return nil, fmt.Errorf("hit %d (%s): bad _source: %w", i, h.ID, err)
		}
		txt, ok := src[c.cfg.TextField].(string)
		if !ok {
			return nil, fmt.Errorf("hit %d (%s): _source has no string field %q", i, h.ID, c.cfg.TextField)
		}
		title, _ := src[c.cfg.TitleField].(string)
		hit := retrieval.Hit{ID: h.ID, Title: title, Text: txt, Rank: i + 1}
		if h.Score != nil {
			hit.Score = *h.Score
		}
		out = append(out, hit)
	}
	return out, nil
}

// Retrieve runs the DRAGIN query for one query: the top k passages, best first, Text without the
// title (Title is filled separately). A query that is empty after truncation returns no hits without
// asking the cluster.
func (c *Client) Retrieve(ctx context.Context, query string, k int) ([]retrieval.Hit, error) {
	q := c.Truncate(query)
	if strings.TrimSpace(q) == "" || k <= 0 {
		return []retrieval.Hit{}, nil
	}
	body, err := json.Marshal(c.Query(q, k))
	if err != nil {
		return nil, err
	}
	b, err := c.do(ctx, http.MethodPost, "/"+url.PathEscape(c.cfg.Index)+"/_search?search_type=dfs_query_then_fetch", body, "application/json")
	if err != nil {
		return nil, fmt.Errorf("elastic search: %w", err)
	}
	var r searchResponse
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("elastic search: bad response: %w", err)
	}
	hits, err := c.hits(r)
	if err != nil {
		return nil, fmt.Errorf("elastic search: %w", err)
	}
	return hits, nil
}

// SearchBatch runs many queries in one _msearch request, as DRAGIN does (each with
// search_type=dfs_query_then_fetch in its header). An error for any one query fails the batch, naming it.
func (c *Client) SearchBatch(ctx context.Context, queries []string, k int) ([][]retrieval.Hit, error) {
	out := make([][]retrieval.Hit, len(queries))
	var buf bytes.Buffer
	var sent []int
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	for i, query := range queries {
		q := c.Truncate(query)
		if strings.TrimSpace(q) == "" || k <= 0 {
			out[i] = []retrieval.Hit{}
			continue
		}
		enc.Encode(map[string]any{"index": c.cfg.Index, "search_type": "dfs_query_then_fetch"})
		enc.Encode(c.Query(q, k))
		sent = append(sent, i)
	}
	if len(sent) == 0 {
		return out, nil
	}
	if err := c.msearch(ctx, "elastic msearch", buf.Bytes(), sent, queries, out); err != nil {
		return nil, err
	}
	return out, nil
}

// msearch sends an _msearch body holding one search per entry of sent (indexes into queries) and puts
// each one's hits in out. An error or partial result for any one query fails the batch, naming it.
func (c *Client) msearch(ctx context.Context, what string, body []byte, sent []int, queries []string, out [][]retrieval.Hit) error {
	b, err := c.do(ctx, http.MethodPost, "/_msearch", body, "application/x-ndjson")
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	var r struct {
		Responses []searchResponse `json:"responses"`
	}
	if err := json.Unmarshal(b, &r); err != nil {
		return fmt.Errorf("%s: bad response: %w", what, err)
	}
	if len(r.Responses) != len(sent) {
		return fmt.Errorf("%s: %d responses for %d queries", what, len(r.Responses), len(sent))
	}
	for j, i := range sent {
		hits, err := c.hits(r.Responses[j])
		if err != nil {
			return fmt.Errorf("%s: query %d (%q): %w", what, i, queries[i], err)
		}
		out[i] = hits
	}
	return nil
}

// CreateIndex creates the index with DRAGIN's mapping: title and text fields analysed with the
// built-in "english" analyzer. An existing index is an error unless ifMissing is set.
func (c *Client) CreateIndex(ctx context.Context, ifMissing bool) error {
	body, _ := json.Marshal(map[string]any{
		"mappings": map[string]any{"properties": map[string]any{
			c.cfg.TitleField: map[string]any{"type": "text", "analyzer": "english"},
			c.cfg.TextField:  map[string]any{"type": "text", "analyzer": "english"},
		}},
	})
	_, err := c.do(ctx, http.MethodPut, "/"+url.PathEscape(c.cfg.Index), body, "application/json")
	var ee *Error
	if ifMissing && errors.As(err, &ee) && ee.Type == "resource_already_exists_exception" {
		return nil
	}
	if err != nil {
		return fmt.Errorf("elastic create index %s: %w", c.cfg.Index, err)
	}
	return nil
}

var _ retrieval.Retriever = (*Client)(nil)
