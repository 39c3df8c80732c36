package methods

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/ragbench/ragbench/harness/extract"
	"github.com/ragbench/ragbench/harness/llm"
	"github.com/ragbench/ragbench/harness/ngram"
	"github.com/ragbench/ragbench/harness/retrieval"
)

// Counters count one question's work, as the papers report it.
type Counters struct {
	// Retrievals is #Ret: retrieval calls, each query once, cache hits included.
	Retrievals int `json:"retrievals"`
	// Calls is #Call: generator calls of the method, without extractor calls and without the
	// answer-completion call.
	Calls int `json:"llm_calls"`
	// GeneratedTokens is #Tok: the completion tokens the server reported for those calls.
	GeneratedTokens int `json:"generated_tokens"`
	// PromptTokens are the prompt tokens of those calls.
	PromptTokens int `json:"prompt_tokens"`
	// AnswerCalls are the answer-completion calls ("So the answer is"), counted apart as the
	// authors do; AnswerTokens are their prompt plus completion tokens.
	AnswerCalls  int `json:"answer_calls"`
	AnswerTokens int `json:"answer_tokens"`
	// LLMCacheHits counts generator calls (of either kind) the response cache answered.
	// It depends on the cache's state, not on the question, so run records leave it out (the runner
	// keeps it in the timings file).
	LLMCacheHits int `json:"llm_cache_hits,omitempty"`
	// NgramQueries counts corpus-statistics queries (Count and CoOccur).
	NgramQueries int `json:"ngram_queries"`
	// ExtractorCalls counts entity and triplet extraction calls.
	ExtractorCalls int `json:"extractor_calls"`
}

// Add adds o to c.
func (c *Counters) Add(o Counters) {
	c.Retrievals += o.Retrievals
	c.Calls += o.Calls
	c.GeneratedTokens += o.GeneratedTokens
	c.PromptTokens += o.PromptTokens
	c.AnswerCalls += o.AnswerCalls
	c.AnswerTokens += o.AnswerTokens
	c.LLMCacheHits += o.LLMCacheHits
	c.NgramQueries += o.NgramQueries
	c.ExtractorCalls += o.ExtractorCalls
}

// Stage names a kind of work whose wall time is measured.
type Stage string

// The measured stages.
const (
	StageLLM       Stage = "llm"
	StageRetrieval Stage = "retrieval"
	StageNgram     Stage = "ngram"
	StageExtract   Stage = "extract"
)

// Timings are measured wall times per stage. They vary between runs, so they are kept out of
// records (see Timing).
type Timings map[Stage]time.Duration

// Meter collects one question's counters, retrievals and stage times. It is safe for concurrent use
// (a method may issue calls in parallel).
type Meter struct {
	mu        sync.Mutex
	counters  Counters
	retrieved []Retrieval
	times     Timings
	calls     []llm.Response
}

// NewMeter returns an empty meter.
func NewMeter() *Meter { return &Meter{times: Timings{}} }

// Counters returns the counts so far.
func (m *Meter) Counters() Counters {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.counters
}

// Retrieved returns the retrievals so far, in call order.
func (m *Meter) Retrieved() []Retrieval {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]Retrieval(nil), m.retrieved...)
}

// Calls returns what the answered generator calls so far reported besides their text, in call order:
// the model the server named, usage, latency, whether the cache answered, retries. Records leave
// these out (they depend on the server and the caches); a predictions file shows them.
func (m *Meter) Calls() []llm.Response {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]llm.Response(nil), m.calls...)
}

// Timings returns the stage times so far.
func (m *Meter) Timings() Timings {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make(Timings, len(m.times))
	for k, v := range m.times {
		out[k] = v
	}
	return out
}

// Fill copies the meter's counters and retrievals into p.
func (m *Meter) Fill(p *Prediction) {
	p.Counters = m.Counters()
	p.Retrieved = m.Retrieved()
}

func (m *Meter) add(stage Stage, d time.Duration, f func(c *Counters)) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.times[stage] += d
	if f != nil {
		f(&m.counters)
	}
}

type answerCallKey struct{}

// AnswerCall marks ctx so that a generator call made with it is counted as an answer-completion
// call (Counters.AnswerCalls), not in #Call and #Tok.
func AnswerCall(ctx context.Context) context.Context {
	return context.WithValue(ctx, answerCallKey{}, true)
}

func isAnswerCall(ctx context.Context) bool {
	v, _ := ctx.Value(answerCallKey{}).(bool)
	return v
}

// Instrument returns a copy of env whose components count and time every call into a new Meter, and
// that meter. Call it once per question.
func Instrument(env Env) (Env, *Meter) {
	m := NewMeter()
	out := env
	if env.Generator != nil {
		out.Generator = &countingGenerator{inner: env.Generator, m: m}
	}
	if env.Retriever != nil {
		out.Retriever = &countingRetriever{inner: env.Retriever, m: m}
	}
	if len(env.Retrievers) > 0 {
		out.Retrievers = make(map[string]retrieval.Retriever, len(env.Retrievers))
		for name, r := range env.Retrievers {
			out.Retrievers[name] = &countingRetriever{inner: r, name: name, m: m}
		}
	}
	if env.Counter != nil {
		out.Counter = &countingCounter{inner: env.Counter, m: m}
	}
	if env.Extractor != nil {
		out.Extractor = &countingExtractor{inner: env.Extractor, m: m}
	}
	return out, m
}

type countingGenerator struct {
	inner llm.Generator
	m     *Meter
}

func (g *countingGenerator) Generate(ctx context.Context, req llm.Request) (llm.Response, error) {
	start := time.Now()
	resp, err := g.inner.Generate(ctx, req)
	answer := isAnswerCall(ctx)
	g.m.add(StageLLM, time.Since(start), func(c *Counters) {
		if answer {
			c.AnswerCalls++
		} else {
			c.Calls++
		}
		if err != nil {
			return
		}
		g.m.calls = append(g.m.calls, llm.Response{Usage: resp.Usage, Model: resp.Model, Latency: resp.Latency, Cached: resp.Cached, Retries: resp.Retries})
		if resp.Cached {
			c.LLMCacheHits++
		}
		if answer {
			c.AnswerTokens += resp.Usage.PromptTokens + resp.Usage.CompletionTokens
		} else {
			c.GeneratedTokens += resp.Usage.CompletionTokens
			c.PromptTokens += resp.Usage.PromptTokens
		}
	})
	return resp, err
}

type countingRetriever struct {
	inner retrieval.Retriever
	name  string
	m     *Meter
}

func (r *countingRetriever) Retrieve(ctx context.Context, query string, k int) ([]retrieval.Hit, error) {
	start := time.Now()
	hits, err := r.inner.Retrieve(ctx, query, k)
	r.count(start, query, k, hits)
	return hits, err
}

// count records one search that started at start: its time, the retrieval counter and the hits' ids.
func (r *countingRetriever) count(start time.Time, query string, k int, hits []retrieval.Hit) {
	ids := make([]string, len(hits))
	for i, h := range hits {
		ids[i] = h.ID
	}
	r.m.add(StageRetrieval, time.Since(start), func(c *Counters) {
		c.Retrievals++
	})
	r.m.mu.Lock()
	r.m.retrieved = append(r.m.retrieved, Retrieval{Retriever: r.name, Query: query, K: k, IDs: ids})
	r.m.mu.Unlock()
}

// RetrieveIn counts and times a document-scoped search like Retrieve; an inner retriever that cannot
// search within documents is an error naming it.
func (r *countingRetriever) RetrieveIn(ctx context.Context, query string, k int, docs []string) ([]retrieval.Hit, error) {
	sc, ok := r.inner.(retrieval.Scoped)
	if !ok {
		return nil, fmt.Errorf("retriever %s cannot search within a document (scope document needs a unit index)", r.name)
	}
	start := time.Now()
	hits, err := sc.RetrieveIn(ctx, query, k, docs)
	r.count(start, query, k, hits)
	return hits, err
}

type countingCounter struct {
	inner ngram.Counter
	m     *Meter
}

func (n *countingCounter) Count(ctx context.Context, query string) (ngram.Result, error) {
	start := time.Now()
	res, err := n.inner.Count(ctx, query)
	n.m.add(StageNgram, time.Since(start), func(c *Counters) { c.NgramQueries++ })
	return res, err
}

func (n *countingCounter) CoOccur(ctx context.Context, a, b string, window int) (ngram.Result, error) {
	start := time.Now()
	res, err := n.inner.CoOccur(ctx, a, b, window)
	n.m.add(StageNgram, time.Since(start), func(c *Counters) { c.NgramQueries++ })
	return res, err
}

type countingExtractor struct {
	inner extract.Extractor
	m     *Meter
}

func (e *countingExtractor) Entities(ctx context.Context, question string) ([]string, error) {
	start := time.Now()
	out, err := e.inner.Entities(ctx, question)
	e.m.add(StageExtract, time.Since(start), func(c *Counters) { c.ExtractorCalls++ })
	return out, err
}

func (e *countingExtractor) Triplets(ctx context.Context, sentence string) ([]extract.Triplet, error) {
	start := time.Now()
	out, err := e.inner.Triplets(ctx, sentence)
	e.m.add(StageExtract, time.Since(start), func(c *Counters) { c.ExtractorCalls++ })
	return out, err
}
