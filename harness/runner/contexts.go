package runner

import (
	"context"
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"
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
	// Gold returns an example's gold document ids or titles (nil: unknown, left out of the gold
	// columns). Default DefaultGold. A context unit is gold when its document id (from Env.Units) or
	// its title is in the set.
	Gold func(ex datasets.Example) map[string]bool
	// GoldPassages returns an example's gold passages when Gold gives none (NQ-open: the oracle
	// passages, datasets.GoldOracle). A context unit covers a gold passage when its text, white space
	// collapsed, lies inside the passage's (units are sentence windows of their documents); gold
	// recall is then the share of gold passages covered.
	GoldPassages func(ex datasets.Example) []datasets.Passage
	// Workers bounds the questions in flight (default 1: one at a time, so that the measured times
	// are each question's own).
	Workers int
}

// DefaultGold is the default gold of EvalContexts: the titles of an example's supporting facts
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

// ContextRow is one cut-off of a retrieval-only evaluation, averaged over the questions.
type ContextRow struct {
	K int `json:"k"`
	// AR is AR@k: the share of questions with a gold answer in the first k context units
	// (metrics.AnswerRecall, SQuAD-normalised substring).
	AR float64 `json:"ar"`
	// ARTokens is AR@k with DPR's token-run match (metrics.MatchTokens).
	ARTokens float64 `json:"ar_tokens"`
	// GoldRecall is the mean share of an example's gold documents among the first k units' documents,
	// GoldAll the share of examples with all of them, over GoldExamples examples with known gold.
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

// contextScore is one question's retrieval-only evaluation: per cut-off, AR@k by both rules and, when
// its gold is known, gold recall and whether all of it was found.
type contextScore struct {
	ar, arTokens, goldRecall []float64
	goldAll                  []bool
	gold                     bool
	units                    int
	total, retrieval         time.Duration
}

// EvalContexts is the runner's retrieval-only mode: the method's context step (methods.Contexter)
// on every example through the runner's question loop, without a generator, scored by AR@k and
// gold-document recall@k, with the preprocessing time per question. env is instrumented per question
// here; pass it uninstrumented. A question whose context fails stops the evaluation with its error.
func EvalContexts(ctx context.Context, m methods.Contexter, env methods.Env, examples []datasets.Example, o ContextOptions) (ContextReport, error) {
	if len(o.Ks) == 0 {
		o.Ks = []int{1, 3, 5}
	}
	ks := slices.Clone(o.Ks)
	sort.Ints(ks)
	if ks[0] < 1 {
		return ContextReport{}, fmt.Errorf("retrieval eval: cut-off %d, want positive cut-offs", ks[0])
	}
	if o.Gold == nil {
		o.Gold = DefaultGold
	}
	rep := ContextReport{Method: m.Name(), Rows: make([]ContextRow, len(ks))}
	for i, k := range ks {
		rep.Rows[i].K = k
	}
	do := func(ctx context.Context, i int) (contextScore, error) {
		ex := examples[i]
		ienv, meter := methods.Instrument(env)
		start := time.Now()
		cu, _, err := m.Context(ctx, ienv, ex)
		total := time.Since(start)
		if err != nil {
			return contextScore{}, fmt.Errorf("retrieval eval %s: example %s: %w", m.Name(), ex.ID, err)
		}
		s := scoreContext(ex, cu, env.Units, ks, o)
		s.total, s.retrieval = total, meter.Timings()[methods.StageRetrieval]
		return s, nil
	}
	var pre, ret, fus []float64
	units := 0
	emit := func(_ int, s contextScore) error {
		pre = append(pre, msf(s.total))
		ret = append(ret, msf(s.retrieval))
		fus = append(fus, msf(s.total-s.retrieval))
		units += s.units
		for i := range rep.Rows {
			row := &rep.Rows[i]
			row.AR += s.ar[i]
			row.ARTokens += s.arTokens[i]
			if !s.gold {
				continue
			}
			row.GoldRecall += s.goldRecall[i]
			if s.goldAll[i] {
				row.GoldAll++
			}
			row.GoldExamples++
		}
		rep.Questions++
		return nil
	}
	if err := eachQuestion(ctx, len(examples), max(o.Workers, 1), do, emit); err != nil {
		return rep, err
	}
	n := float64(max(rep.Questions, 1))
	for i := range rep.Rows {
		row := &rep.Rows[i]
		row.AR /= n
		row.ARTokens /= n
		if row.GoldExamples > 0 {
			row.GoldRecall /= float64(row.GoldExamples)
			row.GoldAll /= float64(row.GoldExamples)
		}
	}
	rep.MeanUnits = float64(units) / n
	rep.PreprocessingP50, rep.PreprocessingP95 = quantile(pre, .5), quantile(pre, .95)
	rep.RetrievalP50, rep.FusionP50, rep.FusionP95 = quantile(ret, .5), quantile(fus, .5), quantile(fus, .95)
	return rep, nil
}

// scoreContext scores one question's context units at the cut-offs ks: AR@k by both rules, and gold
// recall by document (o.Gold, a unit's document from store or its title) or, when the example has no
// gold documents, by the gold passages its units' texts lie in (o.GoldPassages).
func scoreContext(ex datasets.Example, cu []methods.ContextUnit, store methods.UnitStore, ks []int, o ContextOptions) contextScore {
	s := contextScore{units: len(cu), ar: make([]float64, len(ks)), arTokens: make([]float64, len(ks)),
		goldRecall: make([]float64, len(ks)), goldAll: make([]bool, len(ks))}
	texts := make([]string, len(cu))
	for i, u := range cu {
		texts[i] = u.Text
	}
	sub := metrics.NewAnswerMatcher(metrics.MatchSubstring, ex.Answers)
	tok := metrics.NewAnswerMatcher(metrics.MatchTokens, ex.Answers)
	gold := o.Gold(ex)
	var passages []string
	if len(gold) == 0 && o.GoldPassages != nil {
		for _, p := range o.GoldPassages(ex) {
			passages = append(passages, collapse(prompts.PassageText(p)))
		}
	}
	s.gold = len(passages) > 0 || len(gold) > 0
	for i, k := range ks {
		s.ar[i] = metrics.AnswerRecall(sub, texts, k)
		s.arTokens[i] = metrics.AnswerRecall(tok, texts, k)
		if len(passages) > 0 {
			covered := 0
			for _, p := range passages {
				for _, t := range texts[:min(k, len(texts))] {
					if t = collapse(t); t != "" && strings.Contains(p, t) {
						covered++
						break
					}
				}
			}
			s.goldRecall[i] = float64(covered) / float64(len(passages))
			s.goldAll[i] = covered == len(passages)
			continue
		}
		if len(gold) == 0 {
			continue
		}
		found := map[string]bool{}
		for _, u := range cu[:min(k, len(cu))] {
			doc := u.Title
			if store != nil {
				if un, ok := store.Unit(u.ID); ok && gold[un.DocID] {
					doc = un.DocID
				}
			}
			if gold[doc] {
				found[doc] = true
			}
		}
		s.goldRecall[i] = float64(len(found)) / float64(len(gold))
		s.goldAll[i] = len(found) == len(gold)
	}
	return s
}

// WriteText writes the report readably: a line with the method, the dataset, the question count, the
// mean context size and the timings, then a table of AR@k and gold recall per cut-off.
func (r ContextReport) WriteText(w io.Writer, dataset string) {
	fmt.Fprintf(w, "%s on %s (%d questions, %.1f units per context): preprocessing p50 %.2f ms, p95 %.2f ms; in retrieval p50 %.2f ms; fusion p50 %.3f ms\n",
		r.Method, dataset, r.Questions, r.MeanUnits, r.PreprocessingP50, r.PreprocessingP95, r.RetrievalP50, r.FusionP50)
	fmt.Fprintf(w, "  k  AR@k   AR@k(tokens)  gold recall  gold all  gold n\n")
	for _, row := range r.Rows {
		fmt.Fprintf(w, "  %-2d %.3f  %.3f         %.3f        %.3f     %d\n", row.K, row.AR, row.ARTokens, row.GoldRecall, row.GoldAll, row.GoldExamples)
	}
}

func collapse(s string) string { return strings.Join(strings.Fields(s), " ") }

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
