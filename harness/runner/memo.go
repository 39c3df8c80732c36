package runner

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"time"

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
//
// A call answered from the memo takes no time, so the cell that made it would look faster than it is;
// each wrapped environment therefore adds, per stage, the time the first call took (see shared), and
// the timings file records it beside the measured stage times.
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
	// took is the wall time of the call that produced val.
	took time.Duration
}

// shared sums, per stage, the wall time of the calls one cell took from the memo: the time those
// calls took when another cell (or an earlier call of the same cell) made them.
type shared struct {
	mu sync.Mutex
	t  methods.Timings
}

func (s *shared) add(stage methods.Stage, d time.Duration) {
	s.mu.Lock()
	s.t[stage] += d
	s.mu.Unlock()
}

// Timings returns a copy of the shared times.
func (s *shared) Timings() methods.Timings {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make(methods.Timings, len(s.t))
	for k, v := range s.t {
		out[k] = v
	}
	return out
}

func newMemo() *memo { return &memo{m: map[string]*memoEntry{}} }

// do returns the remembered value of key, or calls f once to get it. The bool is true for a memo hit;
// on a hit, the stage's time of the first call is added to sh.
func (m *memo) do(key string, sh *shared, stage methods.Stage, f func() (any, error)) (any, bool, error) {
	m.mu.Lock()
	if e, ok := m.m[key]; ok {
		m.mu.Unlock()
		<-e.done
		if e.err == nil {
			m.mu.Lock()
			m.hits++
			m.mu.Unlock()
			if sh != nil {
				sh.add(stage, e.took)
			}
			return e.val, true, nil
		}
		// The first caller failed: try again ourselves.
		return m.do(key, sh, stage, f)
	}
	e := &memoEntry{done: make(chan struct{})}
	m.m[key] = e
	m.mu.Unlock()
	start := time.Now()
	e.val, e.err = f()
	e.took = time.Since(start)
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

// wrap returns env with every component answering through the memo, and the times of the calls that
// env takes from the memo (see shared); model names the generator in the memo's keys (cells with
// different models share nothing of the generator's). Wrap once per cell and question.
func (m *memo) wrap(env methods.Env, model string) (methods.Env, *shared) {
	sh := &shared{t: methods.Timings{}}
	out := env
	if env.Generator != nil {
		out.Generator = memoGenerator{m: m, sh: sh, model: model, inner: env.Generator}
	}
	if env.Retriever != nil {
		out.Retriever = memoRetriever{m: m, sh: sh, name: "", inner: env.Retriever}
	}
	if len(env.Retrievers) > 0 {
		out.Retrievers = make(map[string]retrieval.Retriever, len(env.Retrievers))
		for k, r := range env.Retrievers {
			out.Retrievers[k] = memoRetriever{m: m, sh: sh, name: k, inner: r}
		}
	}
	if env.Counter != nil {
		out.Counter = memoCounter{m: m, sh: sh, inner: env.Counter}
	}
	if env.Extractor != nil {
		out.Extractor = memoExtractor{m: m, sh: sh, inner: env.Extractor}
	}
	return out, sh
}

type memoGenerator struct {
	m     *memo
	sh    *shared
	model string
	inner llm.Generator
}

func (g memoGenerator) Generate(ctx context.Context, req llm.Request) (llm.Response, error) {
	b, err := json.Marshal(req)
	if err != nil {
		return g.inner.Generate(ctx, req)
	}
	v, hit, err := g.m.do("llm\x00"+g.model+"\x00"+string(b), g.sh, methods.StageLLM, func() (any, error) { return g.inner.Generate(ctx, req) })
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
	sh    *shared
	name  string
	inner retrieval.Retriever
}

func (r memoRetriever) Retrieve(ctx context.Context, query string, k int) ([]retrieval.Hit, error) {
	v, _, err := r.m.do(fmt.Sprintf("ret\x00%s\x00%d\x00%s", r.name, k, query), r.sh, methods.StageRetrieval, func() (any, error) {
		return r.inner.Retrieve(ctx, query, k)
	})
	if err != nil {
		return nil, err
	}
	return append([]retrieval.Hit(nil), v.([]retrieval.Hit)...), nil
}

// RetrieveIn memoises a document-scoped search like Retrieve (the documents are part of the key).
func (r memoRetriever) RetrieveIn(ctx context.Context, query string, k int, docs []string) ([]retrieval.Hit, error) {
	sc, ok := r.inner.(retrieval.Scoped)
	if !ok {
		return nil, fmt.Errorf("retriever %s cannot search within a document (scope document needs a unit index)", r.name)
	}
	v, _, err := r.m.do(fmt.Sprintf("retin\x00%s\x00%d\x00%q\x00%s", r.name, k, docs, query), r.sh, methods.StageRetrieval, func() (any, error) {
		return sc.RetrieveIn(ctx, query, k, docs)
	})
	if err != nil {
		return nil, err
	}
	return append([]retrieval.Hit(nil), v.([]retrieval.Hit)...), nil
}

type memoCounter struct {
	m     *memo
	sh    *shared
	inner ngram.Counter
}

func (c memoCounter) Count(ctx context.Context, query string) (ngram.Result, error) {
	v, _, err := c.m.do("count\x00"+query, c.sh, methods.StageNgram, func() (any, error) { return c.inner.Count(ctx, query) })
	if err != nil {
		return ngram.Result{}, err
	}
	return v.(ngram.Result), nil
}

func (c memoCounter) CoOccur(ctx context.Context, a, b string, window int) (ngram.Result, error) {
	v, _, err := c.m.do(fmt.Sprintf("cooc\x00%d\x00%s\x00%s", window, a, b), c.sh, methods.StageNgram, func() (any, error) {
		return c.inner.CoOccur(ctx, a, b, window)
	})
	if err != nil {
		return ngram.Result{}, err
	}
	return v.(ngram.Result), nil
}

type memoExtractor struct {
	m     *memo
	sh    *shared
	inner extract.Extractor
}

func (e memoExtractor) Entities(ctx context.Context, question string) ([]string, error) {
	v, _, err := e.m.do("ent\x00"+question, e.sh, methods.StageExtract, func() (any, error) { return e.inner.Entities(ctx, question) })
	if err != nil {
		return nil, err
	}
	return append([]string(nil), v.([]string)...), nil
}

func (e memoExtractor) Triplets(ctx context.Context, sentence string) ([]extract.Triplet, error) {
	v, _, err := e.m.do("tri\x00"+sentence, e.sh, methods.StageExtract, func() (any, error) { return e.inner.Triplets(ctx, sentence) })
	if err != nil {
		return nil, err
	}
	return append([]extract.Triplet(nil), v.([]extract.Triplet)...), nil
}
