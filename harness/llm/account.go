package llm

import (
	"context"
	"sync"
	"time"
)

// Call is the record of one Generate call made through Accounting.
type Call struct {
	Endpoint         Endpoint `json:"endpoint"`
	PromptTokens     int      `json:"prompt_tokens"`
	CompletionTokens int      `json:"completion_tokens"`
	// Estimated is true when the token counts come from the fallback tokenizer (tokens.go).
	Estimated bool `json:"estimated,omitempty"`
	// Latency is the server time reported in Response.Latency (zero for a cache hit); Wall is the
	// time the call took here, cache lookups included.
	Latency time.Duration `json:"latency"`
	Wall    time.Duration `json:"wall"`
	Cached  bool          `json:"cached,omitempty"`
	Retries int           `json:"retries,omitempty"`
	Err     string        `json:"error,omitempty"`
}

// Totals sums Calls.
type Totals struct {
	Calls            int64         `json:"calls"`
	Errors           int64         `json:"errors"`
	CacheHits        int64         `json:"cache_hits"`
	Retries          int64         `json:"retries"`
	PromptTokens     int64         `json:"prompt_tokens"`
	CompletionTokens int64         `json:"completion_tokens"`
	EstimatedCalls   int64         `json:"estimated_calls"`
	Latency          time.Duration `json:"latency"`
}

// Add adds one call.
func (t *Totals) Add(c Call) {
	t.Calls++
	if c.Err != "" {
		t.Errors++
	}
	if c.Cached {
		t.CacheHits++
	}
	if c.Estimated {
		t.EstimatedCalls++
	}
	t.Retries += int64(c.Retries)
	t.PromptTokens += int64(c.PromptTokens)
	t.CompletionTokens += int64(c.CompletionTokens)
	t.Latency += c.Latency
}

// Ledger accumulates Totals; it is safe for concurrent use.
type Ledger struct {
	mu     sync.Mutex
	totals Totals
}

// Add records one call.
func (l *Ledger) Add(c Call) {
	l.mu.Lock()
	l.totals.Add(c)
	l.mu.Unlock()
}

// Totals returns a snapshot.
func (l *Ledger) Totals() Totals {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.totals
}

type ledgerKey struct{}

// WithLedger returns a context whose calls through Accounting are also recorded in l, so that a runner
// can attribute calls to one example while methods never count by hand.
func WithLedger(ctx context.Context, l *Ledger) context.Context {
	return context.WithValue(ctx, ledgerKey{}, l)
}

// Accounting is a Generator decorator that records every call: prompt and completion tokens, latency,
// cache hit and retries. When the server reported no usage it fills Response.Usage from the fallback
// tokenizer and marks it Estimated.
type Accounting struct {
	inner  Generator
	ledger *Ledger
	// OnCall, when set, is called after every call (from the calling goroutine).
	OnCall func(Call)
}

// NewAccounting wraps inner, recording into ledger (a new one when nil).
func NewAccounting(inner Generator, ledger *Ledger) *Accounting {
	if ledger == nil {
		ledger = &Ledger{}
	}
	return &Accounting{inner: inner, ledger: ledger}
}

// Ledger returns the ledger of all calls.
func (a *Accounting) Ledger() *Ledger { return a.ledger }

// Generate implements Generator.
func (a *Accounting) Generate(ctx context.Context, req Request) (Response, error) {
	start := time.Now()
	resp, err := a.inner.Generate(ctx, req)
	c := Call{Endpoint: req.Endpoint, Wall: time.Since(start)}
	if err != nil {
		c.Err = err.Error()
	} else {
		if resp.Usage.PromptTokens == 0 && resp.Usage.CompletionTokens == 0 && !resp.Usage.Estimated {
			resp.Usage = EstimateUsage(req, resp)
		}
		c.PromptTokens = resp.Usage.PromptTokens
		c.CompletionTokens = resp.Usage.CompletionTokens
		c.Estimated = resp.Usage.Estimated
		c.Latency = resp.Latency
		c.Cached = resp.Cached
		c.Retries = resp.Retries
	}
	a.ledger.Add(c)
	if l, ok := ctx.Value(ledgerKey{}).(*Ledger); ok && l != nil && l != a.ledger {
		l.Add(c)
	}
	if a.OnCall != nil {
		a.OnCall(c)
	}
	return resp, err
}
