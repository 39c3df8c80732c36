package reports

import (
	"math"
	"runtime"
	"sort"
	"sync"

	"github.com/ragbench/ragbench/methods"
	"github.com/ragbench/ragbench/metrics"
)

// Metric is a per-question number a table can show: a score, a counter, a signal or a time.
type Metric struct {
	// Key names it in JSON and flags ("em", "f1", "ret", "ms_llm", ...); Label in table headers.
	Key, Label string
	// Decimals shown in tables.
	Decimals int
	// Value returns the question's value, or false when the metric does not apply to it (the
	// dataset has no such score, the record has no timing). Failed questions (error set) are left
	// out of every metric before Value is asked (see Cell.Column): they are counted, not scored.
	Value func(r *methods.Record, t *Timing, p Prices) (float64, bool)
	// Score names the record score the metric reads ("" for others): a cell where no question has
	// it has no such metric, even if some questions failed.
	Score string
}

// LowerIsBetter is true for cost metrics (counts, times, money).
func (m Metric) LowerIsBetter() bool {
	_, ok := costUnits[m.Key]
	return ok
}

// Unit is the unit of a difference in m: "points" for percent scores, else the metric's own (per
// question).
func (m Metric) Unit() string {
	if u, ok := costUnits[m.Key]; ok {
		return u
	}
	return "points"
}

// costUnits are the cost metrics (lower is better) and their units.
var costUnits = map[string]string{
	"ret": "retrievals", "call": "calls", "tok": "tokens", "prompt_tok": "tokens", "answer_calls": "calls",
	"answer_tok": "tokens", "ngram_queries": "queries", "extractor_calls": "calls",
	"ms_total": "ms", "ms_llm": "ms", "ms_retrieval": "ms", "ms_ngram": "ms", "ms_extract": "ms", "usd": "USD",
}

// Prices are generator prices in USD per million tokens; zero means not configured.
type Prices struct {
	PromptPerM, CompletionPerM float64
}

// Configured reports whether any price is set.
func (p Prices) Configured() bool { return p.PromptPerM > 0 || p.CompletionPerM > 0 }

func score(key string) func(*methods.Record, *Timing, Prices) (float64, bool) {
	return func(r *methods.Record, _ *Timing, _ Prices) (float64, bool) {
		v, ok := r.Scores[key]
		return 100 * v, ok
	}
}

func signal(key string, scale float64) func(*methods.Record, *Timing, Prices) (float64, bool) {
	return func(r *methods.Record, _ *Timing, _ Prices) (float64, bool) {
		v, ok := r.Signals[key]
		return scale * v, ok
	}
}

func counter(f func(c *methods.Counters) int) func(*methods.Record, *Timing, Prices) (float64, bool) {
	return func(r *methods.Record, _ *Timing, _ Prices) (float64, bool) {
		return float64(f(&r.Counters)), true
	}
}

// stage is a stage's time (name "": the total) as the cell's method needs it on its own: the
// measured time plus the time of the calls it took from the runner's question memo, timed when
// another cell made them (Timing.Shared). Without that, a sweep's later cells would look free.
func stage(name string) func(*methods.Record, *Timing, Prices) (float64, bool) {
	return func(_ *methods.Record, t *Timing, _ Prices) (float64, bool) {
		if t == nil {
			return 0, false
		}
		if name == "" {
			v := t.TotalMS
			for _, s := range t.Shared {
				v += s
			}
			return v, true
		}
		return t.Stages[name] + t.Shared[name], true
	}
}

// Metrics are every metric the reports know, by key.
var Metrics = map[string]Metric{}

func init() {
	for _, m := range []Metric{
		{"em", "EM", 1, score("em"), "em"},
		{"f1", "F1", 1, score("f1"), "f1"},
		{"acc", "Acc", 1, score("acc"), "acc"},
		{"label_acc", "Acc", 1, score("label_acc"), "label_acc"},
		{"precision", "Prec", 1, score("precision"), "precision"},
		{"recall", "Rec", 1, score("recall"), "recall"},
		{"answer_recall", "AR", 1, score("answer_recall"), "answer_recall"},
		{"ar@5", "AR@5", 1, signal("ar@5", 100), ""},
		{"ret", "#Ret", 2, counter(func(c *methods.Counters) int { return c.Retrievals }), ""},
		{"call", "#Call", 2, counter(func(c *methods.Counters) int { return c.Calls }), ""},
		{"tok", "#Tok", 1, counter(func(c *methods.Counters) int { return c.GeneratedTokens }), ""},
		{"prompt_tok", "Tok in", 1, counter(func(c *methods.Counters) int { return c.PromptTokens }), ""},
		{"answer_calls", "Ans. calls", 2, counter(func(c *methods.Counters) int { return c.AnswerCalls }), ""},
		{"answer_tok", "Ans. tok", 1, counter(func(c *methods.Counters) int { return c.AnswerTokens }), ""},
		{"ngram_queries", "N-gram q.", 1, counter(func(c *methods.Counters) int { return c.NgramQueries }), ""},
		{"extractor_calls", "Extr. calls", 2, counter(func(c *methods.Counters) int { return c.ExtractorCalls }), ""},
		{"ms_total", "Total ms", 1, stage(""), ""},
		{"ms_llm", "LLM ms", 1, stage("llm"), ""},
		{"ms_retrieval", "Retr. ms", 1, stage("retrieval"), ""},
		{"ms_ngram", "Stats ms", 1, stage("ngram"), ""},
		{"ms_extract", "Extr. ms", 1, stage("extract"), ""},
		{"usd", "USD", 5, func(r *methods.Record, _ *Timing, p Prices) (float64, bool) {
			if !p.Configured() {
				return 0, false
			}
			in := float64(r.Counters.PromptTokens)
			out := float64(r.Counters.GeneratedTokens)
			// Answer-completion tokens are prompt plus completion together; they are billed at
			// the prompt price (their completion is a few tokens).
			in += float64(r.Counters.AnswerTokens)
			return (in*p.PromptPerM + out*p.CompletionPerM) / 1e6, true
		}, ""},
	} {
		Metrics[m.Key] = m
	}
}

// Stat is a metric's mean over a cell's questions, with its bootstrap interval when computed.
type Stat struct {
	Mean   float64 `json:"mean"`
	Lo     float64 `json:"lo"`
	Hi     float64 `json:"hi"`
	N      int     `json:"n"`
	HasCI  bool    `json:"has_ci"`
	exists bool
}

// CIOptions control bootstrap intervals; Resamples 0 disables them.
type CIOptions struct {
	Resamples int
	Level     float64
	Seed      uint64
}

// Column returns the values of metric m over the cell's records where it applies, with their ids.
func (c *Cell) Column(m Metric, p Prices) (ids []string, vals []float64) {
	if m.Score != "" && !c.hasScore(m.Score) {
		return nil, nil
	}
	for i := range c.Records {
		r := &c.Records[i]
		if r.Error != "" {
			continue
		}
		var t *Timing
		if tt, ok := c.Timings[r.ID]; ok {
			t = &tt
		}
		if v, ok := m.Value(r, t, p); ok {
			ids = append(ids, r.ID)
			vals = append(vals, v)
		}
	}
	return ids, vals
}

// hasScore reports whether any of the cell's records has the score key.
func (c *Cell) hasScore(key string) bool {
	c.scoresOnce.Do(func() {
		c.scoreKeys = map[string]bool{}
		for i := range c.Records {
			for k := range c.Records[i].Scores {
				c.scoreKeys[k] = true
			}
		}
	})
	return c.scoreKeys[key]
}

// Summary holds each cell's statistics.
type Summary struct {
	mu    sync.Mutex
	stats map[*Cell]map[string]Stat
	ci    CIOptions
	ciKey map[string]bool
	p     Prices
	pval  map[pairKey]float64
}

type pairKey struct {
	a, b *Cell
	key  string
}

// Summarize computes, for every cell, the mean of every metric in keys, with bootstrap intervals
// for the metrics in ciKeys when ci.Resamples > 0. Work is spread over the CPUs; the result does not
// depend on their number (every interval is seeded by ci.Seed alone). The columns of a cell that
// cover the same questions share one set of resamples (metrics.Bootstrap on all of them at once).
func Summarize(cells []*Cell, keys, ciKeys []string, ci CIOptions, p Prices) *Summary {
	s := &Summary{stats: map[*Cell]map[string]Stat{}, ci: ci, p: p, ciKey: map[string]bool{}, pval: map[pairKey]float64{}}
	for _, k := range ciKeys {
		s.ciKey[k] = true
	}
	parallel(len(cells), func(i int) { s.compute(cells[i], keys) })
	return s
}

// parallel runs f(0..n-1) on GOMAXPROCS goroutines.
func parallel(n int, f func(i int)) {
	jobs := make(chan int)
	var wg sync.WaitGroup
	for w := 0; w < runtime.GOMAXPROCS(0); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range jobs {
				f(i)
			}
		}()
	}
	for i := 0; i < n; i++ {
		jobs <- i
	}
	close(jobs)
	wg.Wait()
}

// compute fills the statistics of keys for cell c.
func (s *Summary) compute(c *Cell, keys []string) {
	out := make(map[string]Stat, len(keys))
	type col struct {
		key  string
		vals []float64
	}
	batch := map[int][]col{} // columns with intervals, by length
	for _, k := range keys {
		m, ok := Metrics[k]
		if !ok {
			out[k] = Stat{}
			continue
		}
		_, vals := c.Column(m, s.p)
		if len(vals) == 0 {
			out[k] = Stat{}
			continue
		}
		st := Stat{N: len(vals), exists: true, Mean: metrics.Mean(vals)}
		st.Lo, st.Hi = st.Mean, st.Mean
		if s.ci.Resamples > 0 && s.ciKey[k] && len(vals) > 1 {
			batch[len(vals)] = append(batch[len(vals)], col{k, vals})
		}
		out[k] = st
	}
	for _, cols := range batch {
		vs := make([][]float64, len(cols))
		for i, cl := range cols {
			vs[i] = cl.vals
		}
		ivs := metrics.Bootstrap(vs, s.ci.Resamples, s.ci.Level, s.ci.Seed)
		for i, cl := range cols {
			st := out[cl.key]
			st.Lo, st.Hi, st.HasCI = ivs[i].Lo, ivs[i].Hi, true
			out[cl.key] = st
		}
	}
	s.mu.Lock()
	if s.stats[c] == nil {
		s.stats[c] = out
	} else {
		for k, v := range out {
			s.stats[c][k] = v
		}
	}
	s.mu.Unlock()
}

// Get returns cell c's statistic of metric key (computing it if needed); ok is false when the
// metric applies to none of the cell's questions.
func (s *Summary) Get(c *Cell, key string) (Stat, bool) {
	s.mu.Lock()
	st, ok := s.stats[c][key]
	s.mu.Unlock()
	if !ok {
		s.compute(c, []string{key})
		s.mu.Lock()
		st = s.stats[c][key]
		s.mu.Unlock()
	}
	return st, st.exists
}

// PValue returns the two-sided p-value of the paired randomization test of metric key between cells
// a and b on the questions both answered (false when they share none); each pair is tested once.
func (s *Summary) PValue(a, b *Cell, key string, rounds int) (float64, bool) {
	k := pairKey{a, b, key}
	s.mu.Lock()
	p, ok := s.pval[k]
	s.mu.Unlock()
	if ok {
		return p, p >= 0
	}
	p = -1
	va, vb, _, _, _ := Pair(a, b, Metrics[key], s.p)
	if len(va) > 0 {
		if pt, err := metrics.PairedTest(va, vb, rounds, 0, s.ci.Level, s.ci.Seed); err == nil {
			p = pt.P
		}
	}
	s.mu.Lock()
	s.pval[k] = p
	s.mu.Unlock()
	return p, p >= 0
}

// FreqBins are QuCo-RAG's entity-frequency bins (Figure 3): upper bounds, inclusive.
var FreqBins = []struct {
	Label string
	Max   float64
}{
	{"0", 0}, {"1–10", 10}, {"11–50", 50}, {"51–100", 100}, {"101–500", 500},
	{"501–1k", 1000}, {"1k–5k", 5000}, {">5k", math.Inf(1)},
}

// FreqBin returns the index in FreqBins of an entity frequency.
func FreqBin(f float64) int {
	for i, b := range FreqBins {
		if f <= b.Max {
			return i
		}
	}
	return len(FreqBins) - 1
}

// Breakdown is a metric's mean over the cell's questions split by some key.
type Breakdown struct {
	Keys  []string
	Mean  map[string]float64
	Count map[string]int
	// Missing counts questions without the key (no signal, no type).
	Missing int
}

// BreakdownBy splits metric m over c's records by key (which returns false when the record has no
// key). Keys come back in order: order first (those present), then the rest sorted.
func BreakdownBy(c *Cell, m Metric, key func(r *methods.Record) (string, bool), order []string) Breakdown {
	b := Breakdown{Mean: map[string]float64{}, Count: map[string]int{}}
	sum := map[string]float64{}
	for i := range c.Records {
		r := &c.Records[i]
		if r.Error != "" {
			continue
		}
		v, ok := m.Value(r, nil, Prices{})
		if !ok {
			continue
		}
		k, ok := key(r)
		if !ok {
			b.Missing++
			continue
		}
		sum[k] += v
		b.Count[k]++
	}
	inOrder := map[string]bool{}
	for _, k := range order {
		inOrder[k] = true
		if b.Count[k] > 0 {
			b.Keys = append(b.Keys, k)
		}
	}
	var rest []string
	for k := range b.Count {
		if !inOrder[k] {
			rest = append(rest, k)
		}
	}
	sort.Strings(rest)
	b.Keys = append(b.Keys, rest...)
	for _, k := range b.Keys {
		b.Mean[k] = sum[k] / float64(b.Count[k])
	}
	return b
}

// FreqKey is the breakdown key of QuCo-RAG's entity-frequency bins (signals.entity_freq).
func FreqKey(r *methods.Record) (string, bool) {
	f, ok := r.Signals["entity_freq"]
	if !ok {
		return "", false
	}
	return FreqBins[FreqBin(f)].Label, true
}

// TypeKey is the breakdown key of the question type.
func TypeKey(r *methods.Record) (string, bool) { return r.Type, r.Type != "" }

// FiredKey is the breakdown key of whether retrieval fired (any retrieval call).
func FiredKey(r *methods.Record) (string, bool) {
	if r.Counters.Retrievals > 0 {
		return "retrieved", true
	}
	return "no retrieval", true
}

// Pair returns the values of metric m for the questions both cells answered, in a's order, and the
// ids only one of them has.
func Pair(a, b *Cell, m Metric, p Prices) (va, vb []float64, ids, onlyA, onlyB []string) {
	ia, xa := a.Column(m, p)
	ib, xb := b.Column(m, p)
	idx := make(map[string]int, len(ib))
	for i, id := range ib {
		idx[id] = i
	}
	used := make([]bool, len(ib))
	for i, id := range ia {
		j, ok := idx[id]
		if !ok {
			onlyA = append(onlyA, id)
			continue
		}
		used[j] = true
		ids = append(ids, id)
		va = append(va, xa[i])
		vb = append(vb, xb[j])
	}
	for j, id := range ib {
		if !used[j] {
			onlyB = append(onlyB, id)
		}
	}
	return
}
