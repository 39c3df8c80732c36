package runner

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"sort"
	"time"

	"github.com/ragbench/ragbench/datasets"
	"github.com/ragbench/ragbench/harness/corpus"
	"github.com/ragbench/ragbench/methods"
	"github.com/ragbench/ragbench/methods/prompts"
	"github.com/ragbench/ragbench/metrics"
)

// ContextOptions configure EvalContexts.
type ContextOptions struct {
	// Ks are the cut-offs of AR@k and gold recall@k (default 1, 3, 5); cut-offs above the method's
	// context size see the whole context.
	Ks []int
	// Gold returns an example's gold and the rule its units are matched by (nil: unknown, left out
	// of the gold columns). Default UnitGold(nil).
	Gold func(ex datasets.Example) *metrics.RetrievalGold
	// Workers bounds the questions in flight (default 1: one at a time, so that the measured times
	// are each question's own).
	Workers int
	// Progress, when set, is called after every 1000 questions with the count done.
	Progress func(done int)
}

// DefaultGold is the gold documents of context-eval: the titles of an example's supporting facts
// (HotpotQA, 2WikiMultihopQA); for nq_longdoc the title of the question's page (the document id
// corpus.Pool gives it); otherwise nil (NQ-open's gold passages are not units).
func DefaultGold(ex datasets.Example) map[string]bool {
	g := map[string]bool{}
	for _, sf := range ex.SupportingFacts {
		g[sf.Title] = true
	}
	if ex.Dataset == datasets.LayoutNQLongDoc {
		for _, c := range ex.Contexts {
			g[corpus.NQPageTitle(c.Title, c.Text)] = true
		}
	}
	if len(g) == 0 {
		return nil
	}
	return g
}

// UnitGold is context-eval's gold over unit indexes: DefaultGold's documents (metrics.GoldByDocument:
// a unit's document id from Env.Units, else its title), and for an example without them its
// question's oracle passages (NQ-open, datasets.GoldOracle; may be nil) matched by
// metrics.GoldByCoverage, since units are sentence windows of the passages.
func UnitGold(oracle map[string][]datasets.Passage) func(datasets.Example) *metrics.RetrievalGold {
	return func(ex datasets.Example) *metrics.RetrievalGold {
		if g := DefaultGold(ex); g != nil {
			return metrics.GoldDocuments(g)
		}
		var texts []string
		for _, p := range oracle[ex.Question] {
			texts = append(texts, prompts.PassageText(p))
		}
		return metrics.GoldPassages(metrics.GoldByCoverage, texts)
	}
}

// ContextRow is one cut-off of a retrieval-only evaluation, averaged over the questions: a
// metrics.RetrievalRow (which see) under context-eval's JSON names.
type ContextRow struct {
	K int `json:"k"`
	// ARSubstring is AR@k: the share of questions with a gold answer in the first k context units
	// (metrics.AnswerRecall, SQuAD-normalised substring).
	ARSubstring float64 `json:"ar"`
	// ARTokens is AR@k with DPR's token-run match (metrics.MatchTokens).
	ARTokens float64 `json:"ar_tokens"`
	// GoldRecall is the mean share of an example's gold among the first k units, GoldAll the share
	// of examples with all of it, over GoldExamples examples with known gold.
	GoldRecall   float64 `json:"gold_recall"`
	GoldAll      float64 `json:"gold_all"`
	GoldExamples int     `json:"gold_examples"`
}

// ContextReport is the retrieval-only evaluation of one method.
type ContextReport struct {
	Method    string       `json:"method"`
	Questions int          `json:"questions"`
	Rows      []ContextRow `json:"rows"`
	// MeanUnits is the mean context size (units).
	MeanUnits float64 `json:"mean_units"`
	// Preprocessing is the wall time of Context per question (retrieval calls plus fusion and
	// selection), Retrieval the part spent inside retrieval calls (the meter's retrieval stage), and
	// Fusion the rest; p50 and p95 in milliseconds. They vary between runs.
	PreprocessingP50 float64 `json:"preprocessing_ms_p50"`
	PreprocessingP95 float64 `json:"preprocessing_ms_p95"`
	RetrievalP50     float64 `json:"retrieval_ms_p50"`
	FusionP50        float64 `json:"fusion_ms_p50"`
	FusionP95        float64 `json:"fusion_ms_p95"`
}

// RetrievalRows returns the rows as metrics.RetrievalRow, for retrieval-eval's report.
func (r ContextReport) RetrievalRows() []metrics.RetrievalRow {
	out := make([]metrics.RetrievalRow, len(r.Rows))
	for i, row := range r.Rows {
		out[i] = metrics.RetrievalRow(row)
	}
	return out
}

// ContextMethod is what EvalContexts evaluates: a methods.Contexter, or TopK for a plain retriever.
type ContextMethod interface {
	Name() string
	Context(ctx context.Context, env methods.Env, ex datasets.Example) ([]methods.ContextUnit, []methods.Event, error)
}

// TopK is the context of a plain retriever: Env.Retriever's top K passages for the question, as
// `ragbench retrieval-eval` evaluates an index.
type TopK struct{ K int }

// Name is "top-k".
func (TopK) Name() string { return "top-k" }

// Context retrieves the question's top K passages from env.Retriever, best first.
func (t TopK) Context(ctx context.Context, env methods.Env, ex datasets.Example) ([]methods.ContextUnit, []methods.Event, error) {
	if env.Retriever == nil {
		return nil, nil, errors.New("top-k: no retriever (Env.Retriever)")
	}
	hits, err := env.Retriever.Retrieve(ctx, ex.Question, t.K)
	if err != nil {
		return nil, nil, err
	}
	cu := make([]methods.ContextUnit, len(hits))
	for i, h := range hits {
		cu[i] = methods.ContextUnit{ID: h.ID, Title: h.Title, Text: h.Text, Score: h.Score}
	}
	return cu, nil, nil
}

// contextScore is one question's retrieval-only evaluation, with its context size and times.
type contextScore struct {
	score            metrics.RetrievalScore
	units            int
	total, retrieval time.Duration
}

// EvalContexts is the runner's retrieval-only mode: the method's context step on every example
// through the runner's question loop, without a generator, scored by metrics.RetrievalEval (AR@k by
// both rules, gold recall@k by o.Gold's rule), with the preprocessing time per question. A unit's
// document is looked up in env.Units when set. env is instrumented per question here; pass it
// uninstrumented. A question whose context fails stops the evaluation with its error.
func EvalContexts(ctx context.Context, m ContextMethod, env methods.Env, examples []datasets.Example, o ContextOptions) (ContextReport, error) {
	if len(o.Ks) == 0 {
		o.Ks = []int{1, 3, 5}
	}
	if k := slices.Min(o.Ks); k < 1 {
		return ContextReport{}, fmt.Errorf("retrieval eval: cut-off %d, want positive cut-offs", k)
	}
	eval, err := metrics.NewRetrievalEval(o.Ks)
	if err != nil {
		return ContextReport{}, err
	}
	if o.Gold == nil {
		o.Gold = UnitGold(nil)
	}
	rep := ContextReport{Method: m.Name()}
	do := func(ctx context.Context, i int) (contextScore, error) {
		ex := examples[i]
		ienv, meter := methods.Instrument(env)
		start := time.Now()
		cu, _, err := m.Context(ctx, ienv, ex)
		total := time.Since(start)
		if err != nil {
			return contextScore{}, fmt.Errorf("retrieval eval %s: example %s: %w", m.Name(), ex.ID, err)
		}
		items := make([]metrics.Retrieved, len(cu))
		for j, u := range cu {
			items[j] = metrics.Retrieved{Title: u.Title, Text: u.Text}
			if env.Units != nil {
				if un, ok := env.Units.Unit(u.ID); ok {
					items[j].DocID = un.DocID
				}
			}
		}
		return contextScore{score: eval.Score(ex.Answers, o.Gold(ex), items), units: len(cu),
			total: total, retrieval: meter.Timings()[methods.StageRetrieval]}, nil
	}
	var pre, ret, fus []float64
	units := 0
	emit := func(_ int, s contextScore) error {
		pre = append(pre, msf(s.total))
		ret = append(ret, msf(s.retrieval))
		fus = append(fus, msf(s.total-s.retrieval))
		units += s.units
		eval.Add(s.score)
		if rep.Questions++; o.Progress != nil && rep.Questions%1000 == 0 {
			o.Progress(rep.Questions)
		}
		return nil
	}
	err = eachQuestion(ctx, len(examples), max(o.Workers, 1), do, emit)
	for _, row := range eval.Rows() {
		rep.Rows = append(rep.Rows, ContextRow(row))
	}
	if err != nil {
		return rep, err
	}
	rep.MeanUnits = float64(units) / float64(max(rep.Questions, 1))
	rep.PreprocessingP50, rep.PreprocessingP95 = quantile(pre, .5), quantile(pre, .95)
	rep.RetrievalP50, rep.FusionP50, rep.FusionP95 = quantile(ret, .5), quantile(fus, .5), quantile(fus, .95)
	return rep, nil
}

// WriteText writes the report readably: a line with the method, the dataset, the question count, the
// mean context size and the timings, then a table of AR@k and gold recall per cut-off.
func (r ContextReport) WriteText(w io.Writer, dataset string) {
	fmt.Fprintf(w, "%s on %s (%d questions, %.1f units per context): preprocessing p50 %.2f ms, p95 %.2f ms; in retrieval p50 %.2f ms; fusion p50 %.3f ms\n",
		r.Method, dataset, r.Questions, r.MeanUnits, r.PreprocessingP50, r.PreprocessingP95, r.RetrievalP50, r.FusionP50)
	fmt.Fprintf(w, "  k  AR@k   AR@k(tokens)  gold recall  gold all  gold n\n")
	for _, row := range r.Rows {
		fmt.Fprintf(w, "  %-2d %.3f  %.3f         %.3f        %.3f     %d\n", row.K, row.ARSubstring, row.ARTokens, row.GoldRecall, row.GoldAll, row.GoldExamples)
	}
}

func msf(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// quantile is the nearest-rank quantile of xs (0 for none).
func quantile(xs []float64, q float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	sort.Float64s(s)
	i := int(q*float64(len(s))+0.999999) - 1
	return s[min(max(i, 0), len(s)-1)]
}
