// Package methodtest provides scripted components for testing methods: a generator that replays
// fixed outputs with fixed token probabilities, a retriever, a corpus-statistics counter and an
// extractor that answer from tables, each recording every call in order so that a test can assert the
// exact sequence of calls, queries and prompts a method made.
//
// It is for tests only; nothing in the shipped binary imports it.
package methodtest

import (
	"context"
	"fmt"
	"math"
	"strings"
	"sync"

	"github.com/ragbench/ragbench/harness/extract"
	"github.com/ragbench/ragbench/harness/llm"
	"github.com/ragbench/ragbench/harness/ngram"
	"github.com/ragbench/ragbench/harness/retrieval"
)

// Reply is one scripted generation.
type Reply struct {
	// Text is the generated text. When Tokens is empty, Tokens(Text) splits it with probability 1.
	Text   string
	Tokens []llm.TokenLogprob
	// Err, when set, is returned instead of a response.
	Err error
}

// Generator replays Replies in order, one per call, and records every request. When Match is set it
// is asked first: a reply it returns (ok) is used without consuming the queue. A call with no reply
// left is an error that quotes the prompt's end, so an unscripted call fails the test clearly.
type Generator struct {
	Replies []Reply
	Match   func(req llm.Request) (Reply, bool)
	// NoLogprobs makes every response carry no token log-probabilities, as some servers do.
	NoLogprobs bool

	mu    sync.Mutex
	calls []llm.Request
	next  int
}

// Generate implements llm.Generator.
func (g *Generator) Generate(ctx context.Context, req llm.Request) (llm.Response, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.calls = append(g.calls, req)
	var r Reply
	ok := false
	if g.Match != nil {
		r, ok = g.Match(req)
	}
	if !ok {
		if g.next >= len(g.Replies) {
			return llm.Response{}, fmt.Errorf("methodtest: unscripted generator call %d; prompt ends %q", len(g.calls), tail(req.Prompt, 200))
		}
		r = g.Replies[g.next]
		g.next++
	}
	if r.Err != nil {
		return llm.Response{}, r.Err
	}
	toks := r.Tokens
	if len(toks) == 0 {
		toks = Tokens(r.Text)
	}
	if g.NoLogprobs {
		toks = nil
	}
	return llm.Response{
		Text:         r.Text,
		Tokens:       toks,
		FinishReason: "stop",
		Usage:        llm.Usage{PromptTokens: len(strings.Fields(req.Prompt)), CompletionTokens: max(len(toks), len(Tokens(r.Text)))},
		Model:        "scripted",
	}, nil
}

// Calls returns the requests made so far, in order.
func (g *Generator) Calls() []llm.Request {
	g.mu.Lock()
	defer g.mu.Unlock()
	return append([]llm.Request(nil), g.calls...)
}

// Remaining is the number of queued replies not used.
func (g *Generator) Remaining() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return len(g.Replies) - g.next
}

func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return "…" + s[len(s)-n:]
}

// Tokens splits text into tokens at word starts (each token carries its leading space, as BPE
// tokenizers do) with probability 1.
func Tokens(text string) []llm.TokenLogprob {
	var out []llm.TokenLogprob
	start := 0
	for i := 1; i <= len(text); i++ {
		if i == len(text) || (text[i] == ' ' && text[i-1] != ' ') {
			if i > start {
				out = append(out, llm.TokenLogprob{Text: text[start:i]})
			}
			start = i
		}
	}
	return out
}

// WithProbs returns Tokens(text) with the given probabilities assigned to the tokens in order
// (tokens beyond probs keep probability 1).
func WithProbs(text string, probs ...float64) []llm.TokenLogprob {
	toks := Tokens(text)
	for i := range toks {
		if i < len(probs) {
			toks[i].Logprob = math.Log(probs[i])
		}
	}
	return toks
}

// Retriever answers from Hits (by exact query); a query not in the table gets Default(query, k) or,
// with Default nil, k hits with ids "QUERY#1" … "QUERY#k" and text "passage i for QUERY". Err, when
// set, fails every call. Every query is recorded.
type Retriever struct {
	Hits    map[string][]retrieval.Hit
	Default func(query string, k int) []retrieval.Hit
	Err     error

	mu      sync.Mutex
	queries []string
}

// Retrieve implements retrieval.Retriever.
func (r *Retriever) Retrieve(ctx context.Context, query string, k int) ([]retrieval.Hit, error) {
	r.mu.Lock()
	r.queries = append(r.queries, query)
	r.mu.Unlock()
	if r.Err != nil {
		return nil, r.Err
	}
	if h, ok := r.Hits[query]; ok {
		if len(h) > k {
			h = h[:k]
		}
		return h, nil
	}
	if r.Default != nil {
		return r.Default(query, k), nil
	}
	out := make([]retrieval.Hit, k)
	for i := range out {
		out[i] = retrieval.Hit{ID: fmt.Sprintf("%s#%d", query, i+1), Text: fmt.Sprintf("passage %d for %s", i+1, query), Score: float64(k - i), Rank: i + 1}
	}
	return out, nil
}

// Queries returns the queries so far, in order.
func (r *Retriever) Queries() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.queries...)
}

// Counter answers Count from Counts and CoOccur from Cooc (keyed "A AND B"); a query in neither gets
// 0. Errs makes the named queries fail. Every query is recorded, CoOccur as "A AND B @WINDOW".
type Counter struct {
	Counts map[string]uint64
	Cooc   map[string]uint64
	Errs   map[string]error

	mu      sync.Mutex
	queries []string
}

// Count implements ngram.Counter.
func (c *Counter) Count(ctx context.Context, q string) (ngram.Result, error) {
	c.mu.Lock()
	c.queries = append(c.queries, q)
	c.mu.Unlock()
	if err := c.Errs[q]; err != nil {
		return ngram.Result{}, err
	}
	return ngram.Result{Count: c.Counts[q]}, nil
}

// CoOccur implements ngram.Counter.
func (c *Counter) CoOccur(ctx context.Context, a, b string, window int) (ngram.Result, error) {
	k := a + " AND " + b
	c.mu.Lock()
	c.queries = append(c.queries, fmt.Sprintf("%s @%d", k, window))
	c.mu.Unlock()
	if err := c.Errs[k]; err != nil {
		return ngram.Result{}, err
	}
	return ngram.Result{Count: c.Cooc[k]}, nil
}

// Queries returns the queries so far, in order.
func (c *Counter) Queries() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.queries...)
}

// Extractor answers Entities and Triplets from tables (a text not in them gives none); Err fails
// every call. Every call is recorded as "entities: TEXT" or "triplets: TEXT".
type Extractor struct {
	EntitiesOf map[string][]string
	TripletsOf map[string][]extract.Triplet
	Err        error

	mu    sync.Mutex
	calls []string
}

// Entities implements extract.Extractor.
func (e *Extractor) Entities(ctx context.Context, q string) ([]string, error) {
	e.mu.Lock()
	e.calls = append(e.calls, "entities: "+q)
	e.mu.Unlock()
	if e.Err != nil {
		return nil, e.Err
	}
	return e.EntitiesOf[q], nil
}

// Triplets implements extract.Extractor.
func (e *Extractor) Triplets(ctx context.Context, s string) ([]extract.Triplet, error) {
	e.mu.Lock()
	e.calls = append(e.calls, "triplets: "+s)
	e.mu.Unlock()
	if e.Err != nil {
		return nil, e.Err
	}
	return e.TripletsOf[s], nil
}

// Calls returns the calls so far, in order.
func (e *Extractor) Calls() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]string(nil), e.calls...)
}
