package transport

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"net/http"
	"time"

	"github.com/ragbench/ragbench/internal/retry"
)

// Config configures a Client. The endpoint is resolved (Resolve) before it comes here.
type Config struct {
	Endpoint Endpoint
	// Timeout bounds one attempt, the reading of the answer included (0: none).
	Timeout time.Duration
	// Concurrency bounds the attempts in flight across all calls (0: unbounded).
	Concurrency int
	// MaxResponseBytes bounds an answer's body (0: 16 MiB).
	MaxResponseBytes int64
	// Retry is the retry policy of Client.Retry.
	Retry Policy
	// HTTPClient replaces the pooled client (tests).
	HTTPClient *http.Client
}

// Policy is the one retry policy: 429 and 5xx answers, timeouts and connection errors are retried,
// except a DNS failure or a connection refused by a loopback address (retry.Permanent); other answers
// and malformed bodies are not. The wait before retry n is the server's Retry-After (capped by
// MaxRetryAfter) when it gave one, else BackoffBase·2^(n-1) capped by BackoffMax, drawn from its upper
// half (equal jitter), so that many workers do not retry in lockstep.
type Policy struct {
	// MaxRetries is the number of retries after the first attempt (negative: none).
	MaxRetries int
	// BackoffBase and BackoffMax shape the exponential backoff.
	BackoffBase, BackoffMax time.Duration
	// MaxRetryAfter caps how long a server's Retry-After may make us wait (0: no cap).
	MaxRetryAfter time.Duration
	// MaxWait bounds a whole call, its attempts and the waits between them included (0: none).
	MaxWait time.Duration
	// OnRetry, when set, is told about every retry before its wait, so that no retry is silent.
	OnRetry retry.Notifier
}

// DefaultMaxRetryAfter is the usual cap on a server's Retry-After.
const DefaultMaxRetryAfter = 2 * time.Minute

// Client posts JSON to one endpoint. It is safe for concurrent use.
type Client struct {
	ep       Endpoint
	cfg      Config
	hc       *http.Client
	slots    Limit
	redactor Redactor
}

// New returns a client for cfg.
func New(cfg Config) *Client {
	if cfg.MaxResponseBytes <= 0 {
		cfg.MaxResponseBytes = 16 << 20
	}
	c := &Client{ep: cfg.Endpoint, cfg: cfg, hc: cfg.HTTPClient, redactor: NewRedactor(cfg.Endpoint.Key)}
	if c.hc == nil {
		tr := http.DefaultTransport.(*http.Transport).Clone()
		idle := max(cfg.Concurrency, 16)
		tr.MaxIdleConns = idle * 2
		tr.MaxIdleConnsPerHost = idle
		tr.ResponseHeaderTimeout = 0 // the attempt's context bounds the whole exchange
		c.hc = &http.Client{Transport: tr}
	}
	c.slots = NewLimit(cfg.Concurrency)
	return c
}

// Endpoint returns the endpoint the client sends to.
func (c *Client) Endpoint() Endpoint { return c.ep }

// Redactor returns the redactor of the client's key.
func (c *Client) Redactor() Redactor { return c.redactor }

// URL returns the base URL followed by path.
func (c *Client) URL(path string) string { return c.ep.BaseURL + path }

// Answer is a server's 2xx answer.
type Answer struct {
	Status int
	Header http.Header
	Body   []byte
}

// Post sends body as one JSON POST to url (usually c.URL(path)) within the client's timeout and
// returns the answer. A failed exchange is a *TransportError (or ctx's error when ctx ended), a body
// over the size limit a *MalformedError, and an answer other than 2xx a *StatusError whose message
// is the server's, redacted.
func (c *Client) Post(ctx context.Context, url string, body []byte) (*Answer, error) {
	actx, cancel := ctx, context.CancelFunc(func() {})
	if c.cfg.Timeout > 0 {
		actx, cancel = context.WithTimeout(ctx, c.cfg.Timeout)
	}
	defer cancel()
	req, err := http.NewRequestWithContext(actx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("build request: %w", err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	if c.ep.Key != "" {
		req.Header.Set("Authorization", "Bearer "+c.ep.Key)
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return nil, c.transportError(ctx, actx, err)
	}
	size := int64(4096)
	if resp.ContentLength > 0 && resp.ContentLength <= c.cfg.MaxResponseBytes {
		size = resp.ContentLength + 1
	}
	buf := bytes.NewBuffer(make([]byte, 0, size))
	_, err = buf.ReadFrom(io.LimitReader(resp.Body, c.cfg.MaxResponseBytes+1))
	b := buf.Bytes()
	resp.Body.Close()
	if err != nil {
		return nil, c.transportError(ctx, actx, fmt.Errorf("read response body (HTTP %d, %d bytes read): %w", resp.StatusCode, len(b), err))
	}
	if int64(len(b)) > c.cfg.MaxResponseBytes {
		return nil, &MalformedError{Reason: fmt.Sprintf("response body exceeds %d bytes", c.cfg.MaxResponseBytes), Excerpt: Excerpt(b)}
	}
	if resp.StatusCode < 200 || resp.StatusCode >= 300 {
		return nil, c.statusError(resp, b)
	}
	return &Answer{Status: resp.StatusCode, Header: resp.Header, Body: b}, nil
}

func (c *Client) transportError(ctx, actx context.Context, err error) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	return &TransportError{Err: err, Timeout: errors.Is(actx.Err(), context.DeadlineExceeded)}
}

// statusError reads the server's message: OpenAI and llama.cpp send {"error": {"message": ...}},
// vLLM {"object": "error", "message": ...}, TEI and others {"error": "text"}.
func (c *Client) statusError(resp *http.Response, b []byte) *StatusError {
	se := &StatusError{Code: resp.StatusCode, Excerpt: c.redactor.String(Excerpt(b)), Body: b}
	se.RetryAfter = retry.ParseAfter(resp.Header, time.Now())
	var body struct {
		Error   json.RawMessage `json:"error"`
		Message string          `json:"message"`
	}
	if json.Unmarshal(b, &body) == nil {
		var nested struct {
			Message string `json:"message"`
		}
		var flat string
		switch {
		case json.Unmarshal(body.Error, &nested) == nil && nested.Message != "":
			se.Message = nested.Message
		case json.Unmarshal(body.Error, &flat) == nil && flat != "":
			se.Message = flat
		case body.Message != "":
			se.Message = body.Message
		}
	}
	se.Message = c.redactor.String(se.Message)
	if len(se.Message) > ExcerptLen {
		se.Message = Excerpt([]byte(se.Message))
	}
	return se
}

// Outcome says how a Retry ended.
type Outcome int

// The outcomes of Retry.
const (
	// Done: an attempt succeeded.
	Done Outcome = iota
	// Failed: an attempt failed with an error no retry mends.
	Failed
	// Exhausted: the retries ran out.
	Exhausted
	// Canceled: the caller's context ended.
	Canceled
	// TimedOut: Policy.MaxWait was reached.
	TimedOut
)

// Result is how a Retry ended.
type Result struct {
	Outcome Outcome
	// Attempts is the number of attempts made (Attempts-1 of them were retried).
	Attempts int
	// Err is the last attempt's error (nil when Done).
	Err error
	// CtxErr is the context's error when Canceled.
	CtxErr error
}

// errMaxWait is the cause of a call's context ending at Policy.MaxWait.
var errMaxWait = errors.New("max wait reached")

// Retry calls attempt until it succeeds or fails for good, under the client's policy. Each attempt
// holds one of the client's Concurrency slots (the waits between attempts do not); what names the
// call in OnRetry's notices, whose errors are redacted.
func (c *Client) Retry(ctx context.Context, what string, attempt func(ctx context.Context) error) Result {
	p := c.cfg.Retry
	maxRetries := max(p.MaxRetries, 0)
	outer := ctx
	if p.MaxWait > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeoutCause(ctx, p.MaxWait, errMaxWait)
		defer cancel()
	}
	timedOut := func() bool { return outer.Err() == nil && errors.Is(context.Cause(ctx), errMaxWait) }
	for n := 0; ; n++ {
		err := c.slot(ctx, attempt)
		switch {
		case err == nil:
			return Result{Outcome: Done, Attempts: n + 1}
		case timedOut():
			return Result{Outcome: TimedOut, Attempts: n + 1, Err: err}
		case ctx.Err() != nil:
			return Result{Outcome: Canceled, Attempts: n + 1, Err: err, CtxErr: ctx.Err()}
		}
		again, after := Retryable(err)
		if !again {
			return Result{Outcome: Failed, Attempts: n + 1, Err: err}
		}
		if n >= maxRetries {
			return Result{Outcome: Exhausted, Attempts: n + 1, Err: err}
		}
		wait := p.backoff(n, after)
		if p.OnRetry != nil {
			p.OnRetry(what, n+1, c.redactor.Err(err), wait)
		}
		if serr := retry.Sleep(ctx, wait); serr != nil {
			if timedOut() {
				return Result{Outcome: TimedOut, Attempts: n + 1, Err: err}
			}
			return Result{Outcome: Canceled, Attempts: n + 1, Err: err, CtxErr: serr}
		}
	}
}

// slot runs attempt holding one of the client's slots.
func (c *Client) slot(ctx context.Context, attempt func(ctx context.Context) error) error {
	if err := c.slots.Acquire(ctx); err != nil {
		return err
	}
	defer c.slots.Release()
	return attempt(ctx)
}

// Retryable says whether err is worth retrying, and the server's Retry-After if any: 429 and 5xx
// answers and transport errors, except those that cannot succeed (retry.Permanent).
func Retryable(err error) (bool, time.Duration) {
	var se *StatusError
	if errors.As(err, &se) {
		return se.Retryable(), se.RetryAfter
	}
	var te *TransportError
	if errors.As(err, &te) {
		return !retry.Permanent(err), 0
	}
	return false, 0
}

// backoff returns the wait before retry number attempt+1.
func (p Policy) backoff(attempt int, retryAfter time.Duration) time.Duration {
	if retryAfter > 0 {
		if p.MaxRetryAfter > 0 {
			return min(retryAfter, p.MaxRetryAfter)
		}
		return retryAfter
	}
	d := float64(p.BackoffBase) * math.Pow(2, float64(min(attempt, 30)))
	d = math.Min(d, float64(p.BackoffMax))
	return time.Duration(d/2 + rand.Float64()*d/2)
}
