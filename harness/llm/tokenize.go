package llm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/ragbench/ragbench/internal/transport"
)

// Tokenizer counts tokens with the generator's own tokenizer.
type Tokenizer interface {
	// CountTokens returns the number of tokens of text, special tokens (such as BOS) included, as
	// Hugging Face's tokenizer.encode(text) counts them.
	CountTokens(ctx context.Context, text string) (int, error)
}

// ErrNoTokenizer is returned when the server offers no tokenize endpoint (or the backend has none).
var ErrNoTokenizer = errors.New("the server has no /tokenize endpoint")

// tokenizeURL is the server's tokenize endpoint: vLLM and the llama.cpp server both serve POST
// /tokenize at the server root, beside (not under) the /v1 API root.
func tokenizeURL(base string) string {
	base = strings.TrimRight(base, "/")
	base = strings.TrimSuffix(base, "/v1")
	return base + "/tokenize"
}

// CountTokens implements Tokenizer with the server's /tokenize endpoint. The one request body suits
// both servers: vLLM reads model, prompt and add_special_tokens and answers {"count", "max_model_len",
// "tokens"}; the llama.cpp server reads content and add_special and answers {"tokens"}. Special tokens
// are added, as tokenizer.encode does. A server without the endpoint (404, 405, 501) is remembered and
// gives ErrNoTokenizer without asking again. Attempts are bounded by the client's timeout; failures
// are not retried (the caller falls back to an approximation).
func (o *OpenAI) CountTokens(ctx context.Context, text string) (int, error) {
	if o.noTokenize.Load() {
		return 0, ErrNoTokenizer
	}
	var w struct {
		Count  *int              `json:"count"`
		Tokens []json.RawMessage `json:"tokens"`
	}
	if err := o.post(ctx, "/tokenize", map[string]any{"model": o.cfg.Model, "prompt": text, "add_special_tokens": true,
		"content": text, "add_special": true}, &w); err != nil {
		return 0, err
	}
	switch {
	case w.Count != nil && *w.Count < 0:
		return 0, &MalformedError{Reason: "negative token count"}
	case w.Count != nil:
		return *w.Count, nil
	case w.Tokens == nil:
		return 0, &MalformedError{Reason: "tokenize answer has neither count nor tokens"}
	}
	return len(w.Tokens), nil
}

// TokenCache remembers a Tokenizer's counts (an LLM server's tokenizer does not change during a run).
// It holds at most a bounded number of texts and starts over when full. It is safe for concurrent use.
type TokenCache struct {
	inner Tokenizer
	mu    sync.Mutex
	m     map[string]int
	cut   map[string]string
	// Asked counts the counts asked of inner.
	asked atomic.Int64
}

// maxTokenCache bounds a TokenCache.
const maxTokenCache = 1 << 16

// NewTokenCache returns a cache in front of t.
func NewTokenCache(t Tokenizer) *TokenCache {
	return &TokenCache{inner: t, m: map[string]int{}, cut: map[string]string{}}
}

// CountTokens implements Tokenizer. Errors are not remembered.
func (c *TokenCache) CountTokens(ctx context.Context, text string) (int, error) {
	c.mu.Lock()
	n, ok := c.m[text]
	c.mu.Unlock()
	if ok {
		return n, nil
	}
	c.asked.Add(1)
	n, err := c.inner.CountTokens(ctx, text)
	if err != nil {
		return 0, err
	}
	c.mu.Lock()
	if len(c.m) >= maxTokenCache {
		c.m = map[string]int{}
	}
	c.m[text] = n
	c.mu.Unlock()
	return n, nil
}

// Asked returns how many counts were asked of the inner tokenizer.
func (c *TokenCache) Asked() int64 { return c.asked.Load() }

// Truncator cuts a text to its last n tokens of the generator's tokenizer, as the QuCo-RAG authors'
// BM25 retriever cuts every query (max_query_length 64: tokenized without special tokens, truncated
// on the left, decoded). The text always makes the round trip through the tokenizer, as theirs does.
type Truncator interface {
	KeepLastTokens(ctx context.Context, text string, n int) (string, error)
}

// KeepLastTokens implements Truncator with the server's /tokenize (no special tokens) and
// /detokenize: vLLM answers {"prompt"}, the llama.cpp server {"content"}.
func (o *OpenAI) KeepLastTokens(ctx context.Context, text string, n int) (string, error) {
	if o.noTokenize.Load() {
		return "", ErrNoTokenizer
	}
	var tok struct {
		Tokens []int `json:"tokens"`
	}
	if err := o.post(ctx, "/tokenize", map[string]any{"model": o.cfg.Model, "prompt": text, "add_special_tokens": false,
		"content": text, "add_special": false}, &tok); err != nil {
		return "", err
	}
	ids := tok.Tokens
	if n > 0 && len(ids) > n {
		ids = ids[len(ids)-n:]
	}
	var det struct {
		Prompt  *string `json:"prompt"`
		Content *string `json:"content"`
	}
	if err := o.post(ctx, "/detokenize", map[string]any{"model": o.cfg.Model, "tokens": ids}, &det); err != nil {
		return "", err
	}
	switch {
	case det.Prompt != nil:
		return *det.Prompt, nil
	case det.Content != nil:
		return *det.Content, nil
	}
	return "", &MalformedError{Reason: "detokenize answer has neither prompt nor content"}
}

// post sends one JSON request to the server root's path (through the transport, without retries) and
// decodes the answer into out. A missing endpoint (404, 405, 501) is remembered as ErrNoTokenizer.
func (o *OpenAI) post(ctx context.Context, path string, body, out any) error {
	b, err := json.Marshal(body)
	if err != nil {
		return err
	}
	base := transport.RedactURL(o.cfg.BaseURL)
	url := strings.TrimSuffix(tokenizeURL(o.cfg.BaseURL), "/tokenize") + path
	ans, err := o.client.Post(ctx, url, b)
	var se *StatusError
	var te *TransportError
	switch {
	case errors.As(err, &se) && (se.Code == http.StatusNotFound || se.Code == http.StatusMethodNotAllowed || se.Code == http.StatusNotImplemented):
		o.noTokenize.Store(true)
		return fmt.Errorf("%w (%s: HTTP %d)", ErrNoTokenizer, transport.RedactURL(url), se.Code)
	case se != nil:
		return o.redact.Err(fmt.Errorf("%s %s: HTTP %d: %s", path, base, se.Code, transport.Excerpt(se.Body)))
	case errors.As(err, &te):
		return o.redact.Err(fmt.Errorf("%s %s: %w", path, base, te.Err))
	case err != nil:
		return o.redact.Err(fmt.Errorf("%s %s: %w", path, base, err))
	case ans.Status != http.StatusOK:
		return o.redact.Err(fmt.Errorf("%s %s: HTTP %d: %s", path, base, ans.Status, transport.Excerpt(ans.Body)))
	}
	if err := json.Unmarshal(ans.Body, out); err != nil {
		return &MalformedError{Reason: path + " answer: " + err.Error(), Excerpt: o.redact.String(transport.Excerpt(ans.Body))}
	}
	return nil
}

// KeepLastTokens implements Truncator through the cache (ErrNoTokenizer when the inner tokenizer
// cannot cut).
func (c *TokenCache) KeepLastTokens(ctx context.Context, text string, n int) (string, error) {
	t, ok := c.inner.(Truncator)
	if !ok {
		return "", ErrNoTokenizer
	}
	key := fmt.Sprintf("cut\x00%d\x00%s", n, text)
	c.mu.Lock()
	s, hit := c.cut[key]
	c.mu.Unlock()
	if hit {
		return s, nil
	}
	c.asked.Add(1)
	s, err := t.KeepLastTokens(ctx, text, n)
	if err != nil {
		return "", err
	}
	c.mu.Lock()
	if len(c.cut) >= maxTokenCache {
		c.cut = map[string]string{}
	}
	c.cut[key] = s
	c.mu.Unlock()
	return s, nil
}
