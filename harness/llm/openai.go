package llm

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"strings"
	"sync/atomic"
	"time"

	openai "github.com/sashabaranov/go-openai"

	"github.com/ragbench/ragbench/internal/transport"
)

// OpenAI is a Generator for OpenAI-compatible servers (vLLM, the llama.cpp server, Ollama, OpenAI).
// It builds each request's JSON from go-openai's request types and sends it through the shared
// transport (internal/transport), which bounds every attempt with a timeout, retries 429, 5xx,
// timeouts and connection errors with exponential backoff and jitter (honouring Retry-After) and
// bounds concurrency; the client adds requests- and tokens-per-minute limits and decodes the answer
// tolerantly in both servers' shapes (decode.go). It is safe for concurrent use.
type OpenAI struct {
	cfg      Config
	client   *transport.Client
	redact   transport.Redactor
	rpm, tpm *bucket

	attempts atomic.Int64 // HTTP attempts sent, for statistics and tests

	noTokenize atomic.Bool // the server answered that it has no /tokenize
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
	return newOpenAI(cfg.Resolve(os.Getenv))
}

// newOpenAI builds the client of a resolved config (New and the registry resolve it once).
func newOpenAI(cfg Config) (*OpenAI, error) {
	cfg.Backend = "openai"
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("llm config: %w", err)
	}
	ep := cfg.endpoint(os.Getenv)
	client := transport.New(transport.Config{
		Endpoint:         ep,
		Timeout:          cfg.Timeout,
		Concurrency:      cfg.Concurrency,
		MaxResponseBytes: cfg.MaxResponseBytes,
		Retry: transport.Policy{MaxRetries: cfg.MaxRetries, BackoffBase: cfg.BackoffBase, BackoffMax: cfg.BackoffMax,
			MaxRetryAfter: cfg.MaxRetryAfter, MaxWait: cfg.MaxWait, OnRetry: cfg.OnRetry},
	})
	return &OpenAI{
		cfg:    cfg,
		client: client,
		redact: client.Redactor(),
		rpm:    newBucket(cfg.RPM),
		tpm:    newBucket(cfg.TPM),
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
	path, body, err := requestBody(o.cfg.Model, req)
	if err != nil {
		return Response{}, o.fail(req, fmt.Errorf("build request: %w", err))
	}
	var resp Response
	res := o.client.Retry(ctx, "llm "+string(req.Endpoint), func(ctx context.Context) error {
		r, err := o.attempt(ctx, req, path, body, est)
		resp = r
		return err
	})
	switch res.Outcome {
	case transport.Done:
		resp.Latency = time.Since(start)
		resp.Retries = res.Attempts - 1
		return resp, nil
	case transport.TimedOut:
		return Response{}, o.redact.Err(fmt.Errorf("llm %s %s: no answer within llm.max_wait %v (%d attempt(s); last: %v)", req.Endpoint, transport.RedactURL(o.cfg.BaseURL), o.cfg.MaxWait, res.Attempts, res.Err))
	case transport.Canceled:
		return Response{}, fmt.Errorf("llm %s after %d attempt(s): %w", req.Endpoint, res.Attempts, res.CtxErr)
	case transport.Exhausted:
		return Response{}, o.fail(req, fmt.Errorf("gave up after %d attempts: %w", res.Attempts, res.Err))
	}
	return Response{}, o.fail(req, res.Err)
}

// fail is the error of a request that failed for good with err.
func (o *OpenAI) fail(req Request, err error) error {
	return o.redact.Err(fmt.Errorf("llm %s %s: %w", req.Endpoint, transport.RedactURL(o.cfg.BaseURL), err))
}

// requestBody returns the endpoint's path and the JSON body of req, as go-openai's types marshal it,
// with "temperature": 0 put back (their omitempty tag drops it, and servers then default to
// temperature 1, which is not greedy) and, for a completion that asks for the chosen token's
// log-probability only, "logprobs": 0.
func requestBody(model string, req Request) (string, []byte, error) {
	var lead []string
	var v any
	path := "/completions"
	switch req.Endpoint {
	case Chat:
		cr := openai.ChatCompletionRequest{
			Model:       model,
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
		if err := openai.NewReasoningValidator().Validate(cr); err != nil {
			return "", nil, err
		}
		if cr.Temperature == 0 {
			lead = append(lead, `"temperature":0`)
		}
		path, v = "/chat/completions", cr
	case Responses:
		path, v = "/responses", responsesRequest(model, req)
	default:
		cr := openai.CompletionRequest{
			Model:       model,
			Prompt:      req.Prompt,
			MaxTokens:   req.MaxTokens,
			Temperature: float32(req.Temperature),
			TopP:        float32(req.TopP),
			Stop:        req.Stop,
			Seed:        req.Seed,
			LogProbs:    max(req.Logprobs, 0),
		}
		if cr.Temperature == 0 {
			lead = append(lead, `"temperature":0`)
		}
		if req.Logprobs == -1 {
			lead = append(lead, `"logprobs":0`) // the chosen token's only
		}
		v = cr
	}
	b, err := json.Marshal(v)
	if err != nil {
		return "", nil, err
	}
	return path, leadMembers(b, lead), nil
}

// leadMembers puts JSON object members (each `"key":value`) at the start of the object b, for keys b
// does not have. A key in a JSON string value is always escaped (\"key\"), so the unescaped `"key":`
// can only be a member name.
func leadMembers(b []byte, members []string) []byte {
	var add []byte
	for _, m := range members {
		name := m[:strings.IndexByte(m[1:], '"')+2]
		if bytes.Contains(b, []byte(name+":")) {
			continue
		}
		add = append(add, m...)
		add = append(add, ',')
	}
	if len(add) == 0 || len(b) < 2 || b[0] != '{' {
		return b
	}
	if bytes.Equal(bytes.TrimSpace(b[1:]), []byte("}")) {
		add = add[:len(add)-1]
	}
	nb := make([]byte, 0, len(b)+len(add))
	nb = append(nb, '{')
	nb = append(nb, add...)
	return append(nb, b[1:]...)
}

// attempt sends one request after taking the rate limits and decodes the answer.
func (o *OpenAI) attempt(ctx context.Context, req Request, path string, body []byte, est float64) (Response, error) {
	if err := o.rpm.take(ctx, 1); err != nil {
		return Response{}, err
	}
	if err := o.tpm.take(ctx, est); err != nil {
		return Response{}, err
	}
	o.attempts.Add(1)
	ans, err := o.client.Post(ctx, o.client.URL(path), body)
	if err != nil {
		return Response{}, err
	}
	decode := decodeResponse
	if req.Endpoint == Responses {
		decode = decodeResponses
	}
	resp, reported, derr := decode(req.Endpoint, ans.Body)
	if derr != nil {
		var me *MalformedError
		if errors.As(derr, &me) {
			me.Excerpt = o.redact.String(me.Excerpt)
		}
		return Response{}, derr
	}
	if reported {
		o.tpm.adjust(float64(resp.Usage.PromptTokens+resp.Usage.CompletionTokens) - est)
	}
	return resp, nil
}
