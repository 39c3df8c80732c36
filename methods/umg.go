package methods

import (
	"context"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/ragbench/ragbench/datasets"
	"github.com/ragbench/ragbench/harness/llm"
	"github.com/ragbench/ragbench/harness/retrieval"
	"github.com/ragbench/ragbench/harness/retrieval/fusion"
	"github.com/ragbench/ragbench/metrics"
)

// UMG-RAG and UMGP-RAG (uncertainty-aware multi-granularity hybrid retrieval). Each (expert,
// granularity) pair — Env.Retrievers named "EXPERT@G" — retrieves its top Depth units for the
// question; each pair's scores become a distribution whose normalised entropy H gives the pair's
// confidence c = 1 − H; the fused mass P(u) is the confidence-weighted mixture of the pairs'
// distributions; units are ranked by R(u) = P(u)/√ℓ(u) (ℓ the token length from Env.Units) and the
// top K form the context of one generation. UMGP-RAG first replaces every fused unit of a promoted
// size (2 and 4 sentences) by its parent (8 sentences), the parent's score being the capped sum of
// its members', and skips a unit overlapping a selected one by more than MaxOverlap. The arithmetic
// is in harness/retrieval/fusion.
//
// Trace events, in order (round 0):
//   - "experts": one item per pair, name "EXPERT@G", value its confidence c, note "n=… H=… w=…"
//     (n candidates, normalised entropy, mixture weight); Decision "equal-weights" when every pair
//     had confidence 0; in scope "document" IDs are the documents searched within.
//   - "fused": the R-ranking's first TraceDepth units, one item each (name the unit id, value R,
//     note "P=… tokens=…"); for UMGP a promoted parent's note adds its members.
//   - "promote" (UMGP): Reason the number of promoted parents; one item for each of the TraceDepth
//     best (value its score, flag when capped, note the uncapped sum and the members).
//   - "select": one item per unit looked at (name the unit id, flag when selected, note the verdict:
//     select, skip-overlap with the unit and share, skip-budget); IDs the final context.
//   - "generate": Text the generation.

// UMGConfig are the settings of "umg".
type UMGConfig struct {
	// Experts are the expert names (default bm25 and dense); each names Env.Retrievers "EXPERT@G".
	Experts []string `json:"experts"`
	// Granularities are the unit sizes in sentences (default 2, 4, 8, 16, 32).
	Granularities []int `json:"granularities"`
	// Depth is the number of units each pair retrieves (default 100).
	Depth int `json:"depth"`
	// Normalization, Temperature, Weights and LogBase are the fusion's open choices (defaults
	// minmax, 1, normalized, e); see fusion.UMGOptions.
	Normalization fusion.Normalization `json:"normalization"`
	Temperature   float64              `json:"temperature"`
	Weights       fusion.Weighting     `json:"weights"`
	LogBase       float64              `json:"log_base"`
	// TopK is the number of units in the context (default 5).
	TopK int `json:"top_k"`
	// ContextBudget bounds the context in harness/text tokens (0: no bound); a unit that does not fit
	// in what is left is skipped and the next one tried.
	ContextBudget int `json:"context_budget"`
	// TraceDepth is the number of ranked units shown in the "fused" event (default 20).
	TraceDepth int `json:"trace_depth"`
	// Scope is ScopePool (default: the whole corpus) or ScopeDocument (the question's own documents).
	Scope string `json:"scope"`
	// MaxTokens bounds the generation (default 128).
	MaxTokens int `json:"max_tokens"`
	// Finish is the answer step (default DefaultFinish).
	FinishOptions
}

// UMGPConfig are the settings of "umgp": UMG's and the promotion's.
type UMGPConfig struct {
	UMGConfig
	// PromoteSizes are the granularities replaced by their parent (default 2 and 4).
	PromoteSizes []int `json:"promote_sizes"`
	// Cap bounds a parent's aggregated score (default 1).
	Cap float64 `json:"cap"`
	// MaxOverlap skips a unit overlapping a selected one by more than this share of the shorter span
	// (default 0.75).
	MaxOverlap float64 `json:"max_overlap"`
}

func defaultUMG() UMGConfig {
	return UMGConfig{Experts: []string{"bm25", "dense"}, Granularities: []int{2, 4, 8, 16, 32}, Depth: fusion.DefaultDepth,
		Normalization: fusion.NormMinMax, Temperature: 1, Weights: fusion.WeightNormalized, LogBase: math.E,
		TopK: 5, TraceDepth: 20, Scope: ScopePool, MaxTokens: 128, FinishOptions: DefaultFinish}
}

func (c *UMGConfig) validate() error {
	if len(c.Experts) == 0 || len(c.Granularities) == 0 {
		return fmt.Errorf("experts and granularities must not be empty")
	}
	for _, e := range c.Experts {
		if e == "" || strings.Contains(e, "@") {
			return fmt.Errorf("expert %q: want a name without @", e)
		}
	}
	for _, g := range c.Granularities {
		if g < 1 {
			return fmt.Errorf("granularity %d: want at least 1 sentence", g)
		}
	}
	if c.Depth < 1 || c.TopK < 1 || c.ContextBudget < 0 || c.TraceDepth < 0 || c.MaxTokens < 1 {
		return fmt.Errorf("depth %d, top_k %d, context_budget %d, trace_depth %d, max_tokens %d: want depth, top_k, max_tokens ≥ 1 and the others ≥ 0",
			c.Depth, c.TopK, c.ContextBudget, c.TraceDepth, c.MaxTokens)
	}
	if err := checkScope(c.Scope); err != nil {
		return err
	}
	o := c.fusionOptions()
	return o.Fill()
}

func (c *UMGConfig) fusionOptions() fusion.UMGOptions {
	return fusion.UMGOptions{Normalization: c.Normalization, Temperature: c.Temperature, Weights: c.Weights, LogBase: c.LogBase}
}

// UMG is the "umg" or "umgp" method.
type UMG struct {
	name    string
	cfg     UMGConfig
	promote *fusion.PromoteOptions // nil for umg
	overlap float64
}

// newUMG builds "umg" from its decoded settings.
func newUMG(c UMGConfig) (Method, error) {
	if err := c.validate(); err != nil {
		return nil, err
	}
	return &UMG{name: "umg", cfg: c, overlap: 1}, nil
}

func defaultUMGP() UMGPConfig {
	return UMGPConfig{UMGConfig: defaultUMG(), PromoteSizes: []int{2, 4}, Cap: 1, MaxOverlap: 0.75}
}

// newUMGP builds "umgp" from its decoded settings.
func newUMGP(c UMGPConfig) (Method, error) {
	if err := c.validate(); err != nil {
		return nil, err
	}
	if !(c.MaxOverlap > 0 && c.MaxOverlap <= 1) {
		return nil, fmt.Errorf("max_overlap %v: want a share in (0, 1]", c.MaxOverlap)
	}
	po := fusion.PromoteOptions{Sizes: c.PromoteSizes, Cap: c.Cap}
	if err := po.Fill(); err != nil {
		return nil, err
	}
	return &UMG{name: "umgp", cfg: c.UMGConfig, promote: &po, overlap: c.MaxOverlap}, nil
}

func init() {
	Register("umg", defaultUMG, newUMG)
	Register("umgp", defaultUMGP, newUMGP)
}

// Name implements Method.
func (m *UMG) Name() string { return m.name }

// Settings implements Configured.
func (m *UMG) Settings() any {
	if m.promote == nil {
		return m.cfg
	}
	return UMGPConfig{UMGConfig: m.cfg, PromoteSizes: m.promote.Sizes, Cap: m.promote.Cap, MaxOverlap: m.overlap}
}

// Pairs returns the retriever names the method queries, "EXPERT@G", in query order.
func (m *UMG) Pairs() []string {
	var out []string
	for _, e := range m.cfg.Experts {
		for _, g := range m.cfg.Granularities {
			out = append(out, e+"@"+strconv.Itoa(g))
		}
	}
	return out
}

// ContextUnit is one unit of a method's final context.
type ContextUnit struct {
	ID    string  `json:"id"`
	Title string  `json:"title,omitempty"`
	Text  string  `json:"text"`
	Score float64 `json:"score"`
}

// Contexter is implemented by methods whose context does not depend on generation (UMG, UMGP and
// their baselines): Context retrieves a question's final context without calling a generator, so
// that the retrieval can be evaluated alone (the runner's retrieval-only mode).
type Contexter interface {
	Method
	// K is the number of units the context holds at most.
	K() int
	// Context returns the final context of ex's question, best first, and the trace of the retrieval
	// (in scope "document" within ex's own documents).
	Context(ctx context.Context, env Env, ex datasets.Example) ([]ContextUnit, []Event, error)
}

// K implements Contexter.
func (m *UMG) K() int { return m.cfg.TopK }

// needRetrievers checks that env has every named retriever.
func needRetrievers(method string, env Env, names []string) error {
	var missing []string
	for _, n := range names {
		if n == "" {
			if env.Retriever == nil {
				missing = append(missing, "the default retriever")
			}
			continue
		}
		if env.Retrievers[n] == nil {
			missing = append(missing, n)
		}
	}
	if len(missing) == 0 {
		return nil
	}
	have := make([]string, 0, len(env.Retrievers))
	for k := range env.Retrievers {
		have = append(have, k)
	}
	sort.Strings(have)
	h := "none"
	if len(have) > 0 {
		h = strings.Join(have, ", ")
	}
	return fmt.Errorf("method %s needs retrievers %s, which are not configured (have %s): open a unit index with every granularity the method names",
		method, strings.Join(missing, ", "), h)
}

// Context implements Contexter: the experts' retrieval, the fusion, the ranking (and for UMGP the
// promotion) and the selection.
func (m *UMG) Context(ctx context.Context, env Env, ex datasets.Example) ([]ContextUnit, []Event, error) {
	if err := env.Need(m.name, "units"); err != nil {
		return nil, nil, err
	}
	pairs := m.Pairs()
	if err := needRetrievers(m.name, env, pairs); err != nil {
		return nil, nil, err
	}
	docs, err := ScopeDocs(m.cfg.Scope, ex)
	if err != nil {
		return nil, nil, fmt.Errorf("method %s: %w", m.name, err)
	}
	var lists []fusion.List
	hitOf := map[string]retrieval.Hit{}
	for _, name := range pairs {
		hits, err := retrieveScoped(ctx, env.Retrievers[name], name, ex.Question, m.cfg.Depth, docs)
		if err != nil {
			return nil, nil, fmt.Errorf("method %s: expert %s: %w", m.name, name, err)
		}
		e, g, _ := strings.Cut(name, "@")
		gi, _ := strconv.Atoi(g)
		lists = append(lists, fusion.FromHits(fusion.Key{Expert: e, Granularity: gi}, hits, m.cfg.Depth))
		for _, h := range hits {
			if _, ok := hitOf[h.ID]; !ok {
				hitOf[h.ID] = h
			}
		}
	}
	f, err := fusion.Fuse(lists, m.cfg.fusionOptions())
	if err != nil {
		return nil, nil, fmt.Errorf("method %s: %w", m.name, err)
	}
	var trace []Event
	ev := Event{Kind: "experts"}
	if f.Fallback {
		ev.Decision, ev.Reason = "equal-weights", "every pair had confidence 0"
	}
	// In scope document, IDs are the documents searched within.
	ev.IDs = docs
	for _, p := range f.Pairs {
		ev.Items = append(ev.Items, Item{Name: p.Key.String(), Value: p.Confidence,
			Note: fmt.Sprintf("n=%d H=%.4f w=%.4f", p.N, p.Entropy, p.Weight)})
	}
	trace = append(trace, ev)
	look := func(id string) (fusion.Span, bool) {
		u, ok := env.Units.Unit(id)
		if !ok {
			return fusion.Span{}, false
		}
		return fusion.Span{ID: u.ID, Doc: u.DocID, Start: u.Start, End: u.End, Size: u.Size, Tokens: u.Tokens, Parent: u.Parent}, true
	}
	var ranked []fusion.Ranked
	var proms []fusion.Promotion
	if m.promote == nil {
		ranked, err = fusion.LengthRank(f.Scores, look)
	} else {
		ranked, proms, err = fusion.Promote(f.Scores, look, *m.promote)
	}
	if err != nil {
		return nil, trace, fmt.Errorf("method %s: %w", m.name, err)
	}
	ev = Event{Kind: "fused"}
	for i, r := range ranked {
		if i == m.cfg.TraceDepth {
			break
		}
		note := fmt.Sprintf("P=%.6g tokens=%d", r.P, r.Tokens)
		if len(r.Members) > 0 {
			note += " members=" + strings.Join(r.Members, ",")
		}
		ev.Items = append(ev.Items, Item{Name: r.ID, Value: r.R, Note: note})
	}
	trace = append(trace, ev)
	if m.promote != nil {
		ev = Event{Kind: "promote", Threshold: Threshold(m.promote.Cap), Reason: fmt.Sprintf("%d parents promoted", len(proms))}
		// The best TraceDepth promotions by score (ties by parent id).
		sort.SliceStable(proms, func(i, j int) bool { return proms[i].Score > proms[j].Score })
		if len(proms) > m.cfg.TraceDepth {
			proms = proms[:m.cfg.TraceDepth]
		}
		for _, p := range proms {
			ev.Items = append(ev.Items, Item{Name: p.Parent, Value: p.Score, Flag: p.Capped,
				Note: fmt.Sprintf("sum=%.6g members=%s", p.Sum, strings.Join(p.Members, ","))})
		}
		trace = append(trace, ev)
	}
	sel, dec, err := fusion.Select(ranked, fusion.SelectOptions{K: m.cfg.TopK, Budget: m.cfg.ContextBudget, MaxOverlap: m.overlap})
	if err != nil {
		return nil, trace, fmt.Errorf("method %s: %w", m.name, err)
	}
	ev = Event{Kind: "select"}
	if m.overlap < 1 {
		ev.Threshold = Threshold(m.overlap)
	}
	for _, d := range dec {
		it := Item{Name: d.ID, Flag: d.Verdict == "select", Note: d.Verdict}
		if d.With != "" {
			it.Value = d.Overlap
			it.Note += " " + d.With
		}
		ev.Items = append(ev.Items, it)
	}
	out := make([]ContextUnit, len(sel))
	for i, r := range sel {
		ev.IDs = append(ev.IDs, r.ID)
		h, ok := hitOf[r.ID]
		if !ok {
			u, _ := env.Units.Unit(r.ID)
			h.Title = u.Title
		}
		cu, err := contextUnit(ctx, env, h, r.ID, r.R)
		if err != nil {
			return nil, append(trace, ev), fmt.Errorf("method %s: %w", m.name, err)
		}
		out[i] = cu
	}
	trace = append(trace, ev)
	return out, trace, nil
}

// contextUnit makes a context unit of a hit, reading its text from env.Units when the hit has none
// (lean retrievers, promoted parents that were not retrieved).
func contextUnit(ctx context.Context, env Env, h retrieval.Hit, id string, score float64) (ContextUnit, error) {
	cu := ContextUnit{ID: id, Title: h.Title, Text: h.Text, Score: score}
	if cu.Text == "" && env.Units != nil {
		t, err := env.Units.Text(ctx, id)
		if err != nil {
			return cu, fmt.Errorf("text of %s: %w", id, err)
		}
		cu.Text = t
	}
	return cu, nil
}

// Answer implements Method: the context, one generation, the answer step.
func (m *UMG) Answer(ctx context.Context, env Env, ex datasets.Example) (Prediction, error) {
	return answerWithContext(ctx, m, env, ex, m.cfg.MaxTokens, m.cfg.FinishOptions)
}

// answerWithContext answers a Contexter's question on the per-question core: it checks the
// components, runs the retrieval, sets the "ar@K" signal (1 when a gold answer is a substring of a
// context unit's text, both SQuAD-normalised; metrics.AnswerMatcher), generates once from the
// core's built prompt (the dataset's exemplars, the context block and the question; builtPrompt) and
// makes the answer step with the generated text as it came. The trace and errors are worded as the
// UMG family's records have them (umgWords); ar@K is the only signal.
func answerWithContext(ctx context.Context, m Contexter, env Env, ex datasets.Example, maxTokens int, fo FinishOptions) (Prediction, error) {
	r := newCore(m.Name(), env, ex)
	r.words, r.signals, r.asIs = umgWords{coreWords{m.Name()}}, map[string]float64{}, true
	if err := env.Need(r.method, "generator", "prompts"); err != nil {
		return r.pred(""), err
	}
	units, trace, err := m.Context(ctx, env, ex)
	r.trace = append(r.trace, trace...)
	if err != nil {
		return r.pred(""), err
	}
	r.signals["ar@"+strconv.Itoa(m.K())] = ContextAnswerRecall(units, ex.Answers)
	prompt, err := r.builtPrompt(units)
	if err != nil {
		return r.pred(""), err
	}
	resp, err := r.generate(ctx, 0, prompt, maxTokens, false)
	if err != nil {
		return r.pred(""), err
	}
	return r.finish(ctx, resp.Text, fo)
}

// umgWords is the UMG family's wording of the core's steps (see core's wording; the context step
// records its own retrievals): a "generate" event holds the text alone, and a failed generation
// records none, its error "method NAME: generate: …"; the answer step records no event and returns
// Finish's error as it is.
type umgWords struct{ coreWords }

func (w umgWords) generated(ev *Event, _ llm.Response, _ llm.Request, err error) error {
	if err != nil {
		ev.Kind = ""
		return fmt.Errorf("method %s: generate: %w", w.method, err)
	}
	return nil
}

func (umgWords) answered(ev *Event, _, _ string, _ bool, err error) error {
	ev.Kind = ""
	return err
}

// ContextAnswerRecall is 1 when any gold answer occurs in any unit's text (SQuAD-normalised
// substring, metrics.MatchSubstring), else 0.
func ContextAnswerRecall(units []ContextUnit, answers []string) float64 {
	am := metrics.NewAnswerMatcher(metrics.MatchSubstring, answers)
	for _, u := range units {
		if am.Contains(u.Text) {
			return 1
		}
	}
	return 0
}

// CheckEnv implements EnvChecker: the unit store and every expert × granularity retriever must be
// configured, so a run missing one fails before its first question.
func (m *UMG) CheckEnv(env Env) error {
	if err := env.Need(m.name, "generator", "units"); err != nil {
		return err
	}
	return needRetrievers(m.name, env, m.Pairs())
}
