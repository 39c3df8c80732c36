package methods

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/ragbench/ragbench/datasets"
	"github.com/ragbench/ragbench/harness/corpus"
	"github.com/ragbench/ragbench/methods/prompts"
	"github.com/ragbench/ragbench/metrics"
)

// EvalOptions configure RetrievalEval.
type EvalOptions struct {
	// Ks are the cut-offs of AR@k and gold recall@k (default 1, 3, 5); cut-offs above the method's
	// context size see the whole context.
	Ks []int
	// Gold returns an example's gold document ids or titles (nil: unknown, left out of the gold
	// columns). Default DefaultGold. A context unit is gold when its document id (from Env.Units) or
	// its title is in the set.
	Gold func(ex datasets.Example) map[string]bool
	// GoldPassages returns an example's gold passages when Gold gives none (NQ-open: the oracle
	// passages, datasets.ReadGoldOracle). A context unit covers a gold passage when its text, white
	// space collapsed, lies inside the passage's (units are sentence windows of their documents);
	// gold recall is then the share of gold passages covered.
	GoldPassages func(ex datasets.Example) []datasets.Passage
}

// DefaultGold is the default gold of RetrievalEval: the titles of an example's supporting facts
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

// EvalRow is one cut-off of a retrieval-only evaluation, averaged over the questions.
type EvalRow struct {
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

// EvalReport is the retrieval-only evaluation of one method.
type EvalReport struct {
	Method    string    `json:"method"`
	Questions int       `json:"questions"`
	Rows      []EvalRow `json:"rows"`
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

// RetrievalEval runs a Contexter's retrieval on every example, without a generator, and reports AR@k,
// gold-document recall@k and the preprocessing time per question. Env is instrumented per question
// here; pass it uninstrumented. Questions run one at a time, in order.
func RetrievalEval(ctx context.Context, m Contexter, env Env, examples []datasets.Example, o EvalOptions) (EvalReport, error) {
	if len(o.Ks) == 0 {
		o.Ks = []int{1, 3, 5}
	}
	ks := slices.Clone(o.Ks)
	sort.Ints(ks)
	if ks[0] < 1 {
		return EvalReport{}, fmt.Errorf("retrieval eval: cut-off %d, want positive cut-offs", ks[0])
	}
	if o.Gold == nil {
		o.Gold = DefaultGold
	}
	rep := EvalReport{Method: m.Name(), Rows: make([]EvalRow, len(ks))}
	for i, k := range ks {
		rep.Rows[i].K = k
	}
	var pre, ret, fus []float64
	units := 0
	for _, ex := range examples {
		ienv, meter := Instrument(env)
		start := time.Now()
		cu, _, err := m.Context(ctx, ienv, ex)
		total := time.Since(start)
		if err != nil {
			return rep, fmt.Errorf("retrieval eval %s: example %s: %w", m.Name(), ex.ID, err)
		}
		r := meter.Timings()[StageRetrieval]
		pre = append(pre, msf(total))
		ret = append(ret, msf(r))
		fus = append(fus, msf(total-r))
		units += len(cu)
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
		for i := range rep.Rows {
			row := &rep.Rows[i]
			row.AR += metrics.AnswerRecall(sub, texts, row.K)
			row.ARTokens += metrics.AnswerRecall(tok, texts, row.K)
			if len(passages) > 0 {
				covered := 0
				for _, p := range passages {
					for _, t := range texts[:min(row.K, len(texts))] {
						if t = collapse(t); t != "" && strings.Contains(p, t) {
							covered++
							break
						}
					}
				}
				row.GoldRecall += float64(covered) / float64(len(passages))
				if covered == len(passages) {
					row.GoldAll++
				}
				row.GoldExamples++
				continue
			}
			if len(gold) == 0 {
				continue
			}
			found := map[string]bool{}
			for _, u := range cu[:min(row.K, len(cu))] {
				doc := u.Title
				if env.Units != nil {
					if un, ok := env.Units.Unit(u.ID); ok && gold[un.DocID] {
						doc = un.DocID
					}
				}
				if gold[doc] {
					found[doc] = true
				}
			}
			row.GoldRecall += float64(len(found)) / float64(len(gold))
			if len(found) == len(gold) {
				row.GoldAll++
			}
			row.GoldExamples++
		}
		rep.Questions++
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
