package llm

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
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
	body, err := json.Marshal(map[string]any{"model": o.cfg.Model, "prompt": text, "add_special_tokens": true,
		"content": text, "add_special": true})
	if err != nil {
		return 0, err
	}
	actx, cancel := context.WithTimeout(ctx, o.cfg.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(actx, http.MethodPost, tokenizeURL(o.cfg.BaseURL), bytes.NewReader(body))
	if err != nil {
		return 0, err
	}
	req.Header.Set("Content-Type", "application/json")
	if o.key != "" {
		req.Header.Set("Authorization", "Bearer "+o.key)
	}
	resp, err := o.tokHTTP.Do(req)
	if err != nil {
		return 0, o.redact.err(fmt.Errorf("tokenize %s: %w", RedactURL(o.cfg.BaseURL), err))
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, o.cfg.MaxResponseBytes))
	if err != nil {
		return 0, fmt.Errorf("tokenize %s: read: %w", RedactURL(o.cfg.BaseURL), err)
	}
	switch {
	case resp.StatusCode == http.StatusNotFound || resp.StatusCode == http.StatusMethodNotAllowed || resp.StatusCode == http.StatusNotImplemented:
		o.noTokenize.Store(true)
		return 0, fmt.Errorf("%w (%s: HTTP %d)", ErrNoTokenizer, RedactURL(tokenizeURL(o.cfg.BaseURL)), resp.StatusCode)
	case resp.StatusCode != http.StatusOK:
		return 0, o.redact.err(fmt.Errorf("tokenize %s: HTTP %d: %s", RedactURL(o.cfg.BaseURL), resp.StatusCode, excerpt(data)))
	}
	var w struct {
		Count  *int              `json:"count"`
		Tokens []json.RawMessage `json:"tokens"`
	}
	if err := json.Unmarshal(data, &w); err != nil || (w.Count == nil && w.Tokens == nil) {
		return 0, &MalformedError{Reason: "tokenize answer has neither count nor tokens", Excerpt: o.redact.string(excerpt(data))}
	}
	if w.Count != nil {
		if *w.Count < 0 {
			return 0, &MalformedError{Reason: "negative token count", Excerpt: excerpt(data)}
		}
		return *w.Count, nil
	}
	return len(w.Tokens), nil
}

// TokenCache remembers a Tokenizer's counts (an LLM server's tokenizer does not change during a run).
// It holds at most a bounded number of texts and starts over when full. It is safe for concurrent use.
type TokenCache struct {
	inner Tokenizer
	mu    sync.Mutex
	m     map[string]int
	// Asked counts the counts asked of inner.
	asked atomic.Int64
}

// maxTokenCache bounds a TokenCache.
const maxTokenCache = 1 << 16

// NewTokenCache returns a cache in front of t.
func NewTokenCache(t Tokenizer) *TokenCache { return &TokenCache{inner: t, m: map[string]int{}} }

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
