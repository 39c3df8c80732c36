package methods

import (
	"context"
	"fmt"
	"strconv"

	"github.com/ragbench/ragbench/datasets"
	"github.com/ragbench/ragbench/harness/retrieval"
	"github.com/ragbench/ragbench/harness/retrieval/fusion"
	"github.com/ragbench/ragbench/harness/text"
)

// UMG-RAG's baselines, one generation over a retrieved context each:
//   - "standard-rag": one retriever (default "dense@8": dense search over 8-sentence units, which on
//     passage corpora are the passages themselves), its top K (default 5);
//   - "hybrid": a sparse and a dense retriever (default "bm25@8" and "dense@8"), each its top Depth,
//     fused by reciprocal rank fusion with fixed weights (default 1 and 1, k = 60), top K;
//   - "longrag": LongRAG (Jiang et al. 2024): long retrieval units of about 4K tokens, consecutive
//     whole sentences of one document (corpus.LongUnits, retriever "dense@long"), scored by the expert
//     on the whole unit; the reader gets the top K (default 4) that fit in ContextBudget tokens
//     (default 16384, harness/text tokens).
//
// Every baseline searches the pool or, with scope "document", the question's own documents (see
// ScopeDocs). A unit that does not fit in what is left of ContextBudget (0: no budget) is skipped
// and the next one tried.
//
// Retriever names are keys of Env.Retrievers; "" is Env.Retriever. Trace events: "retrieve" (one per
// retriever: Query the question, IDs its hits), "fused" (hybrid: one item per unit, value its RRF
// score, in fused order, at most TraceDepth), "select" (IDs the context; with a budget one item per
// unit looked at, note select or skip-budget), "generate".

// RAGConfig are the settings of the baselines.
type RAGConfig struct {
	// Retrievers name the retrievers (see above); several are fused by weighted RRF.
	Retrievers []string `json:"retrievers"`
	// RRFWeights are the fixed weights of the retrievers in the fusion (default all 1).
	RRFWeights []float64 `json:"rrf_weights"`
	// RRFK is the RRF constant (default 60).
	RRFK float64 `json:"rrf_k"`
	// Depth is the number of hits each retriever gives the fusion (default 100).
	Depth int `json:"depth"`
	// TopK is the number of units in the context (default 5).
	TopK int `json:"top_k"`
	// TraceDepth is the number of fused units shown in the "fused" event (default 20).
	TraceDepth int `json:"trace_depth"`
	// ContextBudget bounds the context in harness/text tokens (0: none; longrag: 16384).
	ContextBudget int `json:"context_budget"`
	// Scope is ScopePool (default) or ScopeDocument.
	Scope string `json:"scope"`
	// MaxTokens bounds the generation (default 128).
	MaxTokens int `json:"max_tokens"`
	FinishOptions
}

// RAG is a baseline ("standard-rag", "hybrid", "longrag").
type RAG struct {
	name string
	cfg  RAGConfig
}

// defaultRAG returns the defaults of the baseline called name.
func defaultRAG(name string) RAGConfig {
	c := RAGConfig{RRFK: fusion.DefaultRRFK, Depth: fusion.DefaultDepth, TopK: 5, TraceDepth: 20, Scope: ScopePool, MaxTokens: 128, FinishOptions: DefaultFinish}
	switch name {
	case "standard-rag":
		c.Retrievers = []string{"dense@8"}
	case "hybrid":
		c.Retrievers = []string{"bm25@8", "dense@8"}
	case "longrag":
		c.Retrievers = []string{"dense@long"}
		c.TopK, c.ContextBudget = 4, 16384
	}
	return c
}

// newRAG builds the baseline called name from its decoded settings: the RRF weights default to 1
// each, and every setting is checked.
func newRAG(name string, c RAGConfig) (Method, error) {
	if len(c.Retrievers) == 0 {
		return nil, fmt.Errorf("retrievers must not be empty")
	}
	if c.RRFWeights == nil {
		c.RRFWeights = make([]float64, len(c.Retrievers))
		for i := range c.RRFWeights {
			c.RRFWeights[i] = 1
		}
	}
	if len(c.RRFWeights) != len(c.Retrievers) {
		return nil, fmt.Errorf("rrf_weights has %d weights for %d retrievers", len(c.RRFWeights), len(c.Retrievers))
	}
	for i, w := range c.RRFWeights {
		if !(w >= 0) {
			return nil, fmt.Errorf("rrf_weights[%d] = %v: want a weight ≥ 0", i, w)
		}
	}
	if err := checkScope(c.Scope); err != nil {
		return nil, err
	}
	if c.ContextBudget < 0 {
		return nil, fmt.Errorf("context_budget %d: want ≥ 0", c.ContextBudget)
	}
	if c.TopK < 1 || c.Depth < c.TopK || c.MaxTokens < 1 || c.TraceDepth < 0 || !(c.RRFK > 0) {
		return nil, fmt.Errorf("top_k %d, depth %d, max_tokens %d, trace_depth %d, rrf_k %v: want top_k ≥ 1, depth ≥ top_k, max_tokens ≥ 1, trace_depth ≥ 0, rrf_k > 0",
			c.TopK, c.Depth, c.MaxTokens, c.TraceDepth, c.RRFK)
	}
	return &RAG{name: name, cfg: c}, nil
}

func init() {
	for _, n := range []string{"standard-rag", "hybrid", "longrag"} {
		Register(n, func() RAGConfig { return defaultRAG(n) }, func(c RAGConfig) (Method, error) { return newRAG(n, c) })
	}
}

// Name implements Method.
func (m *RAG) Name() string { return m.name }

// Settings implements Configured.
func (m *RAG) Settings() any { return m.cfg }

// K implements Contexter.
func (m *RAG) K() int { return m.cfg.TopK }

// Context implements Contexter.
func (m *RAG) Context(ctx context.Context, env Env, ex datasets.Example) ([]ContextUnit, []Event, error) {
	if err := needRetrievers(m.name, env, m.cfg.Retrievers); err != nil {
		return nil, nil, err
	}
	docs, err := ScopeDocs(m.cfg.Scope, ex)
	if err != nil {
		return nil, nil, fmt.Errorf("method %s: %w", m.name, err)
	}
	question := ex.Question
	single := len(m.cfg.Retrievers) == 1
	k := m.cfg.Depth
	if single && m.cfg.ContextBudget == 0 {
		k = m.cfg.TopK
	}
	var trace []Event
	var lists []fusion.List
	weights := map[fusion.Key]float64{}
	hitOf := map[string]retrieval.Hit{}
	for i, name := range m.cfg.Retrievers {
		r := env.Retriever
		if name != "" {
			r = env.Retrievers[name]
		}
		hits, err := retrieveScoped(ctx, r, name, question, k, docs)
		if err != nil {
			return nil, trace, fmt.Errorf("method %s: retriever %s: %w", m.name, name, err)
		}
		ev := Event{Kind: "retrieve", Query: question, Decision: name}
		for _, h := range hits {
			ev.IDs = append(ev.IDs, h.ID)
			if _, ok := hitOf[h.ID]; !ok {
				hitOf[h.ID] = h
			}
		}
		trace = append(trace, ev)
		// Keys are the retriever's position, so that two retrievers of one name stay apart.
		key := fusion.Key{Expert: strconv.Itoa(i) + ":" + name}
		lists = append(lists, fusion.FromHits(key, hits, k))
		weights[key] = m.cfg.RRFWeights[i]
	}
	var ranked []fusion.Candidate
	if single {
		ranked = lists[0].Candidates
	} else {
		ranked = fusion.WeightedRRF(lists, m.cfg.RRFK, weights)
		ev := Event{Kind: "fused"}
		for i, c := range ranked {
			if i == m.cfg.TraceDepth {
				break
			}
			ev.Items = append(ev.Items, Item{Name: c.ID, Value: c.Score})
		}
		trace = append(trace, ev)
	}
	var out []ContextUnit
	ev := Event{Kind: "select"}
	left := m.cfg.ContextBudget
	for _, c := range ranked {
		if len(out) == m.cfg.TopK {
			break
		}
		if m.cfg.ContextBudget > 0 {
			n, err := unitTokens(env, c.ID, hitOf[c.ID])
			if err != nil {
				return nil, trace, fmt.Errorf("method %s: %w", m.name, err)
			}
			if n > left {
				ev.Items = append(ev.Items, Item{Name: c.ID, Value: float64(n), Note: "skip-budget"})
				continue
			}
			left -= n
			ev.Items = append(ev.Items, Item{Name: c.ID, Value: float64(n), Flag: true, Note: "select"})
		}
		cu, err := contextUnit(ctx, env, hitOf[c.ID], c.ID, c.Score)
		if err != nil {
			return nil, trace, fmt.Errorf("method %s: %w", m.name, err)
		}
		out = append(out, cu)
		ev.IDs = append(ev.IDs, c.ID)
	}
	trace = append(trace, ev)
	return out, trace, nil
}

// unitTokens is a context unit's length in harness/text tokens: from the unit table when the method
// has one, else counted in the hit's text.
func unitTokens(env Env, id string, h retrieval.Hit) (int, error) {
	if env.Units != nil {
		if u, ok := env.Units.Unit(id); ok {
			return u.Tokens, nil
		}
	}
	if h.Text == "" {
		return 0, fmt.Errorf("context budget: no token length for %s (no unit table holds it and the hit has no text)", id)
	}
	n := 0
	text.EachSpan(h.Text, func(int, int) { n++ })
	return n, nil
}

// Answer implements Method.
func (m *RAG) Answer(ctx context.Context, env Env, ex datasets.Example) (Prediction, error) {
	return answerWithContext(ctx, m, env, ex, m.cfg.MaxTokens, m.cfg.FinishOptions)
}

// CheckEnv implements EnvChecker: the retrievers the baseline names must all be configured.
func (m *RAG) CheckEnv(env Env) error {
	if err := env.Need(m.name, "generator"); err != nil {
		return err
	}
	return needRetrievers(m.name, env, m.cfg.Retrievers)
}
