package runner

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"

	"github.com/ragbench/ragbench/harness/extract"
	"github.com/ragbench/ragbench/harness/llm"
	"github.com/ragbench/ragbench/harness/ngram"
	"github.com/ragbench/ragbench/harness/retrieval"
	"github.com/ragbench/ragbench/methods"
)

// memo remembers the answers of one question's component calls, so that the cells of a plan that ask
// the same thing about the same question (a sweep's shared retrievals, corpus counts, extractions and
// prompts) ask it once. Concurrent identical calls wait for the first. Errors are not remembered.
// A memo lives as long as its question.
type memo struct {
	mu sync.Mutex
	m  map[string]*memoEntry
	// hits counts answers served from the memo.
	hits int
}

type memoEntry struct {
	done chan struct{}
	val  any
	err  error
}

func newMemo() *memo { return &memo{m: map[string]*memoEntry{}} }

// do returns the remembered value of key, or calls f once to get it. The bool is true for a memo hit.
func (m *memo) do(key string, f func() (any, error)) (any, bool, error) {
	m.mu.Lock()
	if e, ok := m.m[key]; ok {
		m.mu.Unlock()
		<-e.done
		if e.err == nil {
			m.mu.Lock()
			m.hits++
			m.mu.Unlock()
			return e.val, true, nil
		}
		// The first caller failed: try again ourselves.
		return m.do(key, f)
	}
	e := &memoEntry{done: make(chan struct{})}
	m.m[key] = e
	m.mu.Unlock()
	e.val, e.err = f()
	if e.err != nil {
		m.mu.Lock()
		if m.m[key] == e {
			delete(m.m, key)
		}
		m.mu.Unlock()
	}
	close(e.done)
	return e.val, false, e.err
}

// wrap returns env with every component answering through the memo; model names the generator in
// the memo's keys (cells with different models share nothing of the generator's).
func (m *memo) wrap(env methods.Env, model string) methods.Env {
	out := env
	if env.Generator != nil {
		out.Generator = memoGenerator{m: m, model: model, inner: env.Generator}
	}
	if env.Retriever != nil {
		out.Retriever = memoRetriever{m: m, name: "", inner: env.Retriever}
	}
	if len(env.Retrievers) > 0 {
		out.Retrievers = make(map[string]retrieval.Retriever, len(env.Retrievers))
		for k, r := range env.Retrievers {
			out.Retrievers[k] = memoRetriever{m: m, name: k, inner: r}
		}
	}
	if env.Counter != nil {
		out.Counter = memoCounter{m: m, inner: env.Counter}
	}
	if env.Extractor != nil {
		out.Extractor = memoExtractor{m: m, inner: env.Extractor}
	}
	return out
}

type memoGenerator struct {
	m     *memo
	model string
	inner llm.Generator
}

func (g memoGenerator) Generate(ctx context.Context, req llm.Request) (llm.Response, error) {
	b, err := json.Marshal(req)
	if err != nil {
		return g.inner.Generate(ctx, req)
	}
	v, hit, err := g.m.do("llm\x00"+g.model+"\x00"+string(b), func() (any, error) { return g.inner.Generate(ctx, req) })
	if err != nil {
		return llm.Response{}, err
	}
	resp := v.(llm.Response)
	if hit {
		resp.Cached = true
		resp.Latency = 0
		resp.Retries = 0
	}
	return resp, nil
}

type memoRetriever struct {
	m     *memo
	name  string
	inner retrieval.Retriever
}

func (r memoRetriever) Retrieve(ctx context.Context, query string, k int) ([]retrieval.Hit, error) {
	v, _, err := r.m.do(fmt.Sprintf("ret\x00%s\x00%d\x00%s", r.name, k, query), func() (any, error) {
		return r.inner.Retrieve(ctx, query, k)
	})
	if err != nil {
		return nil, err
	}
	return append([]retrieval.Hit(nil), v.([]retrieval.Hit)...), nil
}

type memoCounter struct {
	m     *memo
	inner ngram.Counter
}

func (c memoCounter) Count(ctx context.Context, query string) (ngram.Result, error) {
	v, _, err := c.m.do("count\x00"+query, func() (any, error) { return c.inner.Count(ctx, query) })
	if err != nil {
		return ngram.Result{}, err
	}
	return v.(ngram.Result), nil
}

func (c memoCounter) CoOccur(ctx context.Context, a, b string, window int) (ngram.Result, error) {
	v, _, err := c.m.do(fmt.Sprintf("cooc\x00%d\x00%s\x00%s", window, a, b), func() (any, error) {
		return c.inner.CoOccur(ctx, a, b, window)
	})
	if err != nil {
		return ngram.Result{}, err
	}
	return v.(ngram.Result), nil
}

type memoExtractor struct {
	m     *memo
	inner extract.Extractor
}

func (e memoExtractor) Entities(ctx context.Context, question string) ([]string, error) {
	v, _, err := e.m.do("ent\x00"+question, func() (any, error) { return e.inner.Entities(ctx, question) })
	if err != nil {
		return nil, err
	}
	return append([]string(nil), v.([]string)...), nil
}

func (e memoExtractor) Triplets(ctx context.Context, sentence string) ([]extract.Triplet, error) {
	v, _, err := e.m.do("tri\x00"+sentence, func() (any, error) { return e.inner.Triplets(ctx, sentence) })
	if err != nil {
		return nil, err
	}
	return append([]extract.Triplet(nil), v.([]extract.Triplet)...), nil
}
