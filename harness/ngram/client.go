package ngram

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand"
	"net/http"
	"strings"
	"time"

	"github.com/ragbench/ragbench/internal/retry"
)

// DefaultAPIURL is the public Infini-gram API endpoint.
const DefaultAPIURL = "https://api.infini-gram.io/"

// DefaultAPIIndex is the index the QuCo-RAG paper queries (OLMo-2's pretraining corpus).
const DefaultAPIIndex = "v4_olmo-2-0325-32b-instruct_llama"

// Request is an Infini-gram API request.
type Request struct {
	Index         string `json:"index"`
	QueryType     string `json:"query_type"`
	Query         string `json:"query"`
	MaxDiffTokens int    `json:"max_diff_tokens,omitempty"`
	MaxClauseFreq uint64 `json:"max_clause_freq,omitempty"`
}

// Response is the part of an Infini-gram API response this package reads; Raw keeps all of it.
type Response struct {
	Count    *uint64         `json:"count"`
	Approx   bool            `json:"approx"`
	Latency  float64         `json:"latency"`
	TokenIDs json.RawMessage `json:"token_ids"`
	Tokens   json.RawMessage `json:"tokens"`
	Error    string          `json:"error"`
	Raw      json.RawMessage `json:"-"`
}

// Client queries an Infini-gram API server (the public one or `ragbench ngram serve`). It satisfies
// Counter; wrap it in a Cache so that sweeps never ask twice.
type Client struct {
	URL        string        // default DefaultAPIURL
	Index      string        // default DefaultAPIIndex
	HTTP       *http.Client  // default: 30 s timeout
	MaxRetries int           // retries after the first attempt (0: the default 5; negative: none)
	Backoff    time.Duration // first retry delay, doubled each time with jitter (default 500 ms)
	// MaxClauseFreq is sent with every query that carries CNF parameters (0: AuthorsMaxClauseFreq).
	MaxClauseFreq uint64
	// MaxWait caps the total time spent waiting between retries of one request (0: no cap beyond
	// MaxRetries).
	MaxWait time.Duration
	// OnRetry, when set, is told about every retry (see retry.Printer).
	OnRetry retry.Notifier
}

// APIError is an error the server reported, in the error field or by status.
type APIError struct {
	Status  int
	Message string
}

func (e *APIError) Error() string {
	return fmt.Sprintf("infini-gram API: HTTP %d: %s", e.Status, e.Message)
}

func (c *Client) url() string {
	if c.URL == "" {
		return DefaultAPIURL
	}
	return c.URL
}

func (c *Client) index() string {
	if c.Index == "" {
		return DefaultAPIIndex
	}
	return c.Index
}

// Do sends req with retries on network errors, 429 and 5xx, honouring Retry-After. An error field in
// a 200 response is an error (not retried).
func (c *Client) Do(ctx context.Context, req Request) (Response, error) {
	if req.Index == "" {
		req.Index = c.index()
	}
	body, err := json.Marshal(req)
	if err != nil {
		return Response{}, err
	}
	hc := c.HTTP
	if hc == nil {
		hc = &http.Client{Timeout: 30 * time.Second}
	}
	retries := c.MaxRetries
	if retries == 0 {
		retries = 5
	} else if retries < 0 {
		retries = 0
	}
	backoff := c.Backoff
	if backoff == 0 {
		backoff = 500 * time.Millisecond
	}
	var lastErr error
	var wait, waited time.Duration
	for attempt := 0; attempt <= retries; attempt++ {
		if attempt > 0 {
			d := backoff << (attempt - 1)
			d += time.Duration(rand.Int63n(int64(d)/2 + 1))
			d = max(d, wait)
			if c.MaxWait > 0 && waited+d > c.MaxWait {
				return Response{}, fmt.Errorf("infini-gram API: giving up after %d attempts and %s of waiting (the cap): %w", attempt, waited.Round(time.Millisecond), lastErr)
			}
			if c.OnRetry != nil {
				c.OnRetry("infini-gram API "+c.url(), attempt, lastErr, d)
			}
			waited += d
			if err := retry.Sleep(ctx, d); err != nil {
				return Response{}, fmt.Errorf("infini-gram API: %w (last error: %v)", err, lastErr)
			}
		}
		resp, again, w, err := c.once(ctx, hc, body)
		wait = w
		if err == nil {
			return resp, nil
		}
		lastErr = err
		if !again || ctx.Err() != nil {
			return Response{}, err
		}
		if retry.Permanent(err) {
			return Response{}, fmt.Errorf("%w (not retried: it cannot succeed on a retry)", err)
		}
	}
	return Response{}, fmt.Errorf("infini-gram API: giving up after %d attempts: %w", retries+1, lastErr)
}

// once sends one request; it reports whether a failure may be retried and the server's Retry-After.
func (c *Client) once(ctx context.Context, hc *http.Client, body []byte) (Response, bool, time.Duration, error) {
	hr, err := http.NewRequestWithContext(ctx, http.MethodPost, c.url(), bytes.NewReader(body))
	if err != nil {
		return Response{}, false, 0, err
	}
	hr.Header.Set("Content-Type", "application/json")
	res, err := hc.Do(hr)
	if err != nil {
		return Response{}, true, 0, fmt.Errorf("infini-gram API: %w", err)
	}
	defer res.Body.Close()
	data, err := io.ReadAll(io.LimitReader(res.Body, 16<<20))
	if err != nil {
		return Response{}, true, 0, fmt.Errorf("infini-gram API: read response: %w", err)
	}
	var out Response
	jerr := json.Unmarshal(data, &out)
	out.Raw = data
	if res.StatusCode != http.StatusOK {
		msg := out.Error
		if jerr != nil || msg == "" {
			msg = string(bytes.TrimSpace(data[:min(len(data), 200)]))
		}
		again := res.StatusCode == http.StatusTooManyRequests || res.StatusCode >= 500
		// The server's Retry-After (seconds or an HTTP date); a wait over ten minutes is ignored.
		wait := retry.ParseAfter(res.Header, time.Now())
		if wait > 10*time.Minute {
			wait = 0
		}
		return Response{}, again, wait, &APIError{Status: res.StatusCode, Message: msg}
	}
	if jerr != nil {
		return Response{}, true, 0, fmt.Errorf("infini-gram API: malformed response: %w", jerr)
	}
	if out.Error != "" {
		return Response{}, false, 0, &APIError{Status: res.StatusCode, Message: out.Error}
	}
	return out, false, 0, nil
}

// The CNF parameters the QuCo-RAG authors' get_infini_gram_count sends.
const (
	// AuthorsMaxDiffTokens is their max_diff_tokens (QuCoDefaultWindow).
	AuthorsMaxDiffTokens = QuCoDefaultWindow
	// AuthorsMaxClauseFreq is their max_clause_freq.
	AuthorsMaxClauseFreq = 500000
)

// HasCNFParams reports whether the authors' client sends the CNF parameters with query: whenever its
// text contains "AND" or "OR" anywhere, as a plain substring ("ORLANDO Guy" and "Tom AND Jerry" both
// do). A query that is no CNF query ignores them at the server.
func HasCNFParams(query string) bool {
	return strings.Contains(query, "AND") || strings.Contains(query, "OR")
}

func (c *Client) maxClauseFreq() uint64 {
	if c.MaxClauseFreq == 0 {
		return AuthorsMaxClauseFreq
	}
	return c.MaxClauseFreq
}

// Count implements Counter as the QuCo-RAG authors' client asks: max_diff_tokens 1000 and
// max_clause_freq (default 500000) go with every query whose text contains "AND" or "OR"
// (HasCNFParams).
func (c *Client) Count(ctx context.Context, query string) (Result, error) {
	req := Request{QueryType: "count", Query: query}
	if HasCNFParams(query) {
		req.MaxDiffTokens, req.MaxClauseFreq = AuthorsMaxDiffTokens, c.maxClauseFreq()
	}
	return c.count(ctx, req)
}

// CoOccur implements Counter as the API's count of "a AND b" with max_diff_tokens = window
// (Infini-gram's approximate semantics; see the package documentation).
func (c *Client) CoOccur(ctx context.Context, a, b string, window int) (Result, error) {
	if window < 1 {
		return Result{}, fmt.Errorf("infini-gram API: window %d: the API needs at least 1", window)
	}
	return c.count(ctx, Request{QueryType: "count", Query: a + " AND " + b, MaxDiffTokens: window, MaxClauseFreq: c.maxClauseFreq()})
}

func (c *Client) count(ctx context.Context, req Request) (Result, error) {
	resp, err := c.Do(ctx, req)
	if err != nil {
		return Result{}, err
	}
	if resp.Count == nil {
		return Result{}, fmt.Errorf("infini-gram API: response has no count: %.200s", resp.Raw)
	}
	return Result{Count: *resp.Count, Approx: resp.Approx}, nil
}
