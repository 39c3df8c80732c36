package llm

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
	"os"
	"strings"
	"sync/atomic"
	"time"

	"github.com/ragbench/ragbench/internal/retry"

	openai "github.com/sashabaranov/go-openai"
)

// OpenAI is a Generator for OpenAI-compatible servers (vLLM, the llama.cpp server, Ollama, OpenAI),
// built on go-openai. It bounds every attempt with a timeout, retries 429, 5xx, timeouts and
// connection errors with exponential backoff and jitter (honouring Retry-After), bounds concurrency
// and enforces requests- and tokens-per-minute limits. It is safe for concurrent use.
//
// go-openai builds and sends the request (URL, headers, JSON body); the HTTP exchange goes through a
// small HTTPDoer that keeps the raw body, so that Retry-After is visible, errors can quote the body, and
// log-probabilities are decoded tolerantly in both servers' shapes (decode.go). The doer also puts
// back "temperature": 0, which go-openai's omitempty tag would otherwise drop (servers then default
// to temperature 1, which is not greedy).
type OpenAI struct {
	cfg      Config
	client   *openai.Client
	redact   redactor
	sem      semaphore
	rpm, tpm *bucket

	attempts atomic.Int64 // HTTP attempts sent, for statistics and tests

	key        string       // for the requests go-openai does not build (tokenize)
	tokHTTP    *http.Client // the tokenize requests' client
	noTokenize atomic.Bool  // the server answered that it has no /tokenize
}

// Identity names a backend for cache keys and reports.
type Identity struct {
	Backend string `json:"backend"`
	BaseURL string `json:"base_url,omitempty"`
	Model   string `json:"model,omitempty"`
}

// Identifier is implemented by generators that can name their backend, base URL and model; the cache
// keys on it.
type Identifier interface {
	Identity() Identity
}

// Normalizer is implemented by generators that fill request defaults (seed, max tokens) from their
// config; the cache keys on the normalized request, so that a changed default is a different key.
type Normalizer interface {
	Normalize(Request) Request
}

// NewOpenAI builds the client. cfg is resolved with Resolve(os.Getenv) and validated; the API key is
// read from the environment variable cfg.APIKeyEnv (default OPENAI_API_KEY) and may be empty for local
// servers that do not check it.
func NewOpenAI(cfg Config) (*OpenAI, error) {
	cfg = cfg.Resolve(os.Getenv)
	cfg.Backend = "openai"
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("llm config: %w", err)
	}
	key := os.Getenv(cfg.APIKeyEnv)
	tr := http.DefaultTransport.(*http.Transport).Clone()
	idle := max(cfg.Concurrency, 16)
	tr.MaxIdleConns = idle * 2
	tr.MaxIdleConnsPerHost = idle
	tr.ResponseHeaderTimeout = 0 // the per-attempt context bounds the whole exchange
	oc := openai.DefaultConfig(key)
	oc.BaseURL = cfg.BaseURL
	oc.HTTPClient = &doer{hc: &http.Client{Transport: tr}, maxBody: cfg.MaxResponseBytes}
	return &OpenAI{
		key:     key,
		tokHTTP: &http.Client{Transport: tr},
		cfg:     cfg,
		client:  openai.NewClientWithConfig(oc),
		redact:  redactor{secret: key},
		sem:     newSemaphore(cfg.Concurrency),
		rpm:     newBucket(cfg.RPM),
		tpm:     newBucket(cfg.TPM),
	}, nil
}

// Config returns the resolved config (it holds no API key).
func (o *OpenAI) Config() Config { return o.cfg }

// Attempts returns the number of HTTP attempts sent so far.
func (o *OpenAI) Attempts() int64 { return o.attempts.Load() }

// Identity implements Identifier.
func (o *OpenAI) Identity() Identity {
	return Identity{Backend: "openai", BaseURL: o.cfg.BaseURL, Model: o.cfg.Model}
}

// Normalize implements Normalizer: it picks the endpoint when empty (Chat when messages are given)
// and fills Seed and MaxTokens from the config.
func (o *OpenAI) Normalize(req Request) Request {
	if req.Endpoint == "" {
		req.Endpoint = Completions
		if len(req.Messages) > 0 {
			req.Endpoint = Chat
		}
	}
	if req.Seed == nil {
		s := o.cfg.Seed
		req.Seed = &s
	}
	if req.MaxTokens == 0 {
		req.MaxTokens = o.cfg.MaxTokens
	}
	return req
}

// Validate reports a request the backend cannot send.
func (r Request) Validate() error {
	switch r.Endpoint {
	case Completions:
		if r.Prompt == "" {
			return errors.New("completions request has an empty prompt")
		}
	case Chat:
		if len(r.Messages) == 0 {
			return errors.New("chat request has no messages")
		}
	case Responses:
		if r.Prompt == "" {
			return errors.New("responses request has an empty prompt (its input)")
		}
		if r.Logprobs != 0 || len(r.Stop) > 0 {
			return errors.New("responses request: logprobs and stop are not supported on /v1/responses")
		}
	default:
		return fmt.Errorf("unknown endpoint %q (want %q, %q or %q)", r.Endpoint, Completions, Chat, Responses)
	}
	if r.Endpoint != Responses && (r.WebSearch || r.ServerSampling) {
		return fmt.Errorf("%s request: web_search and server_sampling need the %q endpoint", r.Endpoint, Responses)
	}
	switch {
	case r.MaxTokens < 0:
		return fmt.Errorf("max_tokens %d is negative", r.MaxTokens)
	case r.Temperature < 0 || r.Temperature > 2 || math.IsNaN(r.Temperature):
		return fmt.Errorf("temperature %v is outside [0, 2]", r.Temperature)
	case r.TopP < 0 || r.TopP > 1 || math.IsNaN(r.TopP):
		return fmt.Errorf("top_p %v is outside [0, 1]", r.TopP)
	case r.Logprobs < -1 || r.Logprobs > 20:
		return fmt.Errorf("logprobs %d is outside [-1, 20]", r.Logprobs)
	}
	return nil
}

// Generate implements Generator.
func (o *OpenAI) Generate(ctx context.Context, req Request) (Response, error) {
	req = o.Normalize(req)
	if err := req.Validate(); err != nil {
		return Response{}, fmt.Errorf("llm request: %w", err)
	}
	start := time.Now()
	est := float64(EstimatePromptTokens(req) + max(req.MaxTokens, 16))
	maxRetries := max(o.cfg.MaxRetries, 0)
	outer := ctx
	if o.cfg.MaxWait > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeoutCause(ctx, o.cfg.MaxWait, errMaxWait)
		defer cancel()
	}
	for attempt := 0; ; attempt++ {
		resp, err := o.attempt(ctx, req, est)
		if err == nil {
			resp.Latency = time.Since(start)
			resp.Retries = attempt
			return resp, nil
		}
		if outer.Err() == nil && errors.Is(context.Cause(ctx), errMaxWait) {
			return Response{}, o.maxWaitErr(req, attempt+1, err)
		}
		if ctx.Err() != nil {
			return Response{}, fmt.Errorf("llm %s after %d attempt(s): %w", req.Endpoint, attempt+1, ctx.Err())
		}
		again, after := retryable(err)
		if !again || attempt >= maxRetries {
			if again {
				err = fmt.Errorf("gave up after %d attempts: %w", attempt+1, err)
			}
			return Response{}, o.redact.err(fmt.Errorf("llm %s %s: %w", req.Endpoint, RedactURL(o.cfg.BaseURL), err))
		}
		wait := o.backoff(attempt, after)
		if o.cfg.OnRetry != nil {
			o.cfg.OnRetry("llm "+string(req.Endpoint), attempt+1, o.redact.err(err), wait)
		}
		if serr := retry.Sleep(ctx, wait); serr != nil {
			if outer.Err() == nil && errors.Is(context.Cause(ctx), errMaxWait) {
				return Response{}, o.maxWaitErr(req, attempt+1, err)
			}
			return Response{}, fmt.Errorf("llm %s after %d attempt(s): %w", req.Endpoint, attempt+1, serr)
		}
	}
}

// maxWaitErr is the error of a request that reached Config.MaxWait after attempts attempts, the last
// failing with last.
func (o *OpenAI) maxWaitErr(req Request, attempts int, last error) error {
	return o.redact.err(fmt.Errorf("llm %s %s: no answer within llm.max_wait %v (%d attempt(s); last: %v)", req.Endpoint, RedactURL(o.cfg.BaseURL), o.cfg.MaxWait, attempts, last))
}

// errMaxWait is the cause of a request's context ending at Config.MaxWait.
var errMaxWait = errors.New("llm.max_wait reached")

// backoff returns the wait before retry number attempt+1: the server's Retry-After when it gave one
// (capped by MaxRetryAfter), else BackoffBase·2^attempt capped by BackoffMax, with "equal jitter"
// (a uniform draw from the upper half), so that many workers do not retry in lockstep.
func (o *OpenAI) backoff(attempt int, retryAfter time.Duration) time.Duration {
	if retryAfter > 0 {
		return min(retryAfter, o.cfg.MaxRetryAfter)
	}
	d := float64(o.cfg.BackoffBase) * math.Pow(2, float64(min(attempt, 30)))
	d = math.Min(d, float64(o.cfg.BackoffMax))
	return time.Duration(d/2 + rand.Float64()*d/2)
}

// TransportError is a failed HTTP exchange: a connection error, a reset, a body cut short, or an
// attempt that ran past its timeout. It is retried.
type TransportError struct {
	Err     error
	Timeout bool
}

// Error implements error.
func (e *TransportError) Error() string {
	if e.Timeout {
		return "attempt timed out: " + e.Err.Error()
	}
	return "transport: " + e.Err.Error()
}

// Unwrap returns the underlying error.
func (e *TransportError) Unwrap() error { return e.Err }

// retryable says whether err is worth retrying, and the server's Retry-After if any: 429 and 5xx
// answers and transport errors, except those that cannot succeed (retry.Permanent).
func retryable(err error) (bool, time.Duration) {
	var se *StatusError
	if errors.As(err, &se) {
		return se.Retryable(), se.RetryAfter
	}
	var te *TransportError
	if errors.As(err, &te) {
		// A name that does not resolve or a refused local port cannot succeed on a retry.
		return !retry.Permanent(err), 0
	}
	return false, 0
}

// attempt sends one HTTP request after taking a concurrency slot and the rate limits.
func (o *OpenAI) attempt(ctx context.Context, req Request, est float64) (Response, error) {
	if err := o.sem.acquire(ctx); err != nil {
		return Response{}, err
	}
	defer o.sem.release()
	if err := o.rpm.take(ctx, 1); err != nil {
		return Response{}, err
	}
	if err := o.tpm.take(ctx, est); err != nil {
		return Response{}, err
	}
	actx, cancel := context.WithTimeout(ctx, o.cfg.Timeout)
	defer cancel()
	c := &capture{}
	actx = context.WithValue(actx, captureKey{}, c)
	o.attempts.Add(1)

	var err error
	switch req.Endpoint {
	case Chat:
		cr := openai.ChatCompletionRequest{
			Model:       o.cfg.Model,
			MaxTokens:   req.MaxTokens,
			Temperature: float32(req.Temperature),
			TopP:        float32(req.TopP),
			Stop:        req.Stop,
			Seed:        req.Seed,
			LogProbs:    req.Logprobs != 0,
			TopLogProbs: max(req.Logprobs, 0),
		}
		for _, m := range req.Messages {
			cr.Messages = append(cr.Messages, openai.ChatCompletionMessage{Role: m.Role, Content: m.Content})
		}
		if cr.Temperature == 0 {
			c.inject = append(c.inject, `"temperature":0`)
		}
		_, err = o.client.CreateChatCompletion(actx, cr)
	case Responses:
		_, err = o.client.CreateResponse(actx, responsesRequest(o.cfg.Model, req))
	default:
		cr := openai.CompletionRequest{
			Model:       o.cfg.Model,
			Prompt:      req.Prompt,
			MaxTokens:   req.MaxTokens,
			Temperature: float32(req.Temperature),
			TopP:        float32(req.TopP),
			Stop:        req.Stop,
			Seed:        req.Seed,
			LogProbs:    max(req.Logprobs, 0),
		}
		if cr.Temperature == 0 {
			c.inject = append(c.inject, `"temperature":0`)
		}
		if req.Logprobs == -1 {
			c.inject = append(c.inject, `"logprobs":0`) // the chosen token's only
		}
		_, err = o.client.CreateCompletion(actx, cr)
	}
	if err != nil {
		switch {
		case !c.called:
			return Response{}, fmt.Errorf("build request: %w", err)
		case c.transportErr != nil:
			if ctx.Err() != nil {
				return Response{}, ctx.Err()
			}
			return Response{}, &TransportError{Err: c.transportErr, Timeout: errors.Is(actx.Err(), context.DeadlineExceeded)}
		case c.fatal != nil:
			return Response{}, c.fatal
		case c.status >= 300 || c.status < 200:
			return Response{}, o.statusError(c)
		}
		// Any other error after a 2xx answer: decodeResponse below says what is wrong with the body.
	}
	decode := decodeResponse
	if req.Endpoint == Responses {
		decode = decodeResponses
	}
	resp, reported, derr := decode(req.Endpoint, c.body)
	if derr != nil {
		var me *MalformedError
		if errors.As(derr, &me) {
			me.Excerpt = o.redact.string(me.Excerpt)
		}
		return Response{}, derr
	}
	if reported {
		o.tpm.adjust(float64(resp.Usage.PromptTokens+resp.Usage.CompletionTokens) - est)
	}
	return resp, nil
}

func (o *OpenAI) statusError(c *capture) *StatusError {
	se := &StatusError{Code: c.status, Excerpt: o.redact.string(excerpt(c.body))}
	se.RetryAfter = retry.ParseAfter(c.header, time.Now())
	// OpenAI and llama.cpp: {"error": {"message": ...}}; vLLM: {"object": "error", "message": ...};
	// some servers: {"error": "text"}.
	var body struct {
		Error   json.RawMessage `json:"error"`
		Message string          `json:"message"`
	}
	if json.Unmarshal(c.body, &body) == nil {
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
	se.Message = o.redact.string(se.Message)
	if len(se.Message) > excerptLen {
		se.Message = excerpt([]byte(se.Message))
	}
	return se
}

// captureKey carries a *capture from attempt to doer through the request context.
type captureKey struct{}

// capture records one HTTP exchange for attempt.
type capture struct {
	inject       []string // JSON members to add to the request body when absent
	called       bool
	transportErr error
	fatal        error
	status       int
	header       http.Header
	body         []byte
}

// doer is the HTTPDoer given to go-openai.
type doer struct {
	hc      *http.Client
	maxBody int64
}

// Do implements go-openai's HTTPDoer.
func (d *doer) Do(r *http.Request) (*http.Response, error) {
	c, _ := r.Context().Value(captureKey{}).(*capture)
	if c == nil {
		c = &capture{}
	}
	c.called = true
	if len(c.inject) > 0 && r.Body != nil {
		if err := injectMembers(r, c.inject); err != nil {
			c.fatal = err
			return nil, err
		}
	}
	resp, err := d.hc.Do(r)
	if err != nil {
		c.transportErr = err
		return nil, err
	}
	size := int64(4096)
	if resp.ContentLength > 0 && resp.ContentLength <= d.maxBody {
		size = resp.ContentLength + 1
	}
	buf := bytes.NewBuffer(make([]byte, 0, size))
	_, err = buf.ReadFrom(io.LimitReader(resp.Body, d.maxBody+1))
	body := buf.Bytes()
	resp.Body.Close()
	if err != nil {
		c.transportErr = fmt.Errorf("read response body (HTTP %d, %d bytes read): %w", resp.StatusCode, len(body), err)
		return nil, c.transportErr
	}
	if int64(len(body)) > d.maxBody {
		c.fatal = &MalformedError{Reason: fmt.Sprintf("response body exceeds %d bytes", d.maxBody), Excerpt: excerpt(body)}
		return nil, c.fatal
	}
	c.status, c.header, c.body = resp.StatusCode, resp.Header, body
	if resp.StatusCode >= 200 && resp.StatusCode < 300 {
		// attempt decodes the kept body itself (decode.go); go-openai gets an empty object, so that
		// a success is not decoded twice.
		body = []byte("{}")
	}
	resp.Body = io.NopCloser(bytes.NewReader(body))
	resp.ContentLength = int64(len(body))
	return resp, nil
}

// injectMembers adds JSON object members (each `"key":value`) to the request body for keys the body
// does not already have. A key in a JSON string value is always escaped (\"key\"), so the unescaped
// `"key":` can only be a member name.
func injectMembers(r *http.Request, members []string) error {
	b, err := io.ReadAll(r.Body)
	r.Body.Close()
	if err != nil {
		return fmt.Errorf("read request body: %w", err)
	}
	b = bytes.TrimSpace(b)
	if len(b) < 2 || b[0] != '{' {
		return errors.New("request body is not a JSON object")
	}
	var add []byte
	for _, m := range members {
		name := m[:strings.IndexByte(m[1:], '"')+2]
		if bytes.Contains(b, []byte(name+":")) {
			continue
		}
		add = append(add, m...)
		add = append(add, ',')
	}
	if len(add) > 0 {
		if bytes.Equal(bytes.TrimSpace(b[1:]), []byte("}")) {
			add = add[:len(add)-1]
		}
		nb := make([]byte, 0, len(b)+len(add))
		nb = append(nb, '{')
		nb = append(nb, add...)
		nb = append(nb, b[1:]...)
		b = nb
	}
	r.Body = io.NopCloser(bytes.NewReader(b))
	r.ContentLength = int64(len(b))
	r.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(b)), nil }
	return nil
}
