package metrics

import (
	"fmt"
	"strings"
	"testing"

	"github.com/ragbench/ragbench/datasets"
)

// perturb builds a prediction from a gold answer and returns the scores the formulas give for it,
// worked out from the gold's normalised token count g rather than by calling the scorer.
type perturbation struct {
	name string
	make func(gold string) string
	want func(g int) AnswerScores
}

var perturbations = []perturbation{
	{"exact", func(a string) string { return a }, func(int) AnswerScores { return AnswerScores{1, 1, 1, 1, 1} }},
	{"upper case", strings.ToUpper, func(int) AnswerScores { return AnswerScores{1, 1, 1, 1, 1} }},
	{"punctuation", func(a string) string { return "\"" + a + "!!\"" }, func(int) AnswerScores { return AnswerScores{1, 1, 1, 1, 1} }},
	{"article", func(a string) string { return "The " + a }, func(int) AnswerScores { return AnswerScores{1, 1, 1, 1, 1} }},
	{"two extra words", func(a string) string { return a + " indeed certainly" }, func(g int) AnswerScores {
		// P = g/(g+2), R = 1, F1 = 2g/(2g+2); the gold is still a substring.
		p := float64(g) / float64(g+2)
		return AnswerScores{0, 2 * p / (p + 1), p, 1, 1}
	}},
	{"wrong", func(string) string { return "zzz qqq" }, func(int) AnswerScores { return AnswerScores{} }},
}

func TestScorePerturbations(t *testing.T) {
	golds := []string{"Paris", "Barack Obama", "August 25, 1963", "The Phantom Hour", "Genghis Khan"}
	var examples []datasets.Example
	preds := map[string]string{}
	var want []AnswerScores
	for gi, g := range golds {
		gTok := len(strings.Fields(Normalize(g)))
		for pi, p := range perturbations {
			id := fmt.Sprintf("g%d-p%d", gi, pi)
			examples = append(examples, datasets.Example{ID: id, Answers: []string{g}})
			preds[id] = p.make(g)
			want = append(want, p.want(gTok))
		}
	}
	// yes/no questions: a flipped answer scores 0, a correct one 1.
	examples = append(examples, datasets.Example{ID: "yn1", Answers: []string{"yes"}}, datasets.Example{ID: "yn2", Answers: []string{"no"}})
	preds["yn1"], preds["yn2"] = "no", "No."
	want = append(want, AnswerScores{}, AnswerScores{1, 1, 1, 1, 1})
	// A missing prediction scores 0 and is counted; an unknown id is counted and not scored.
	examples = append(examples, datasets.Example{ID: "missing", Answers: []string{"x"}})
	want = append(want, AnswerScores{})
	preds["stray"] = "whatever"

	recs, sum, unknown := Score(examples, preds, nil, Options{Resamples: 200, Seed: 1})
	if sum.N != len(examples) || sum.Missing != 1 || sum.Unknown != 1 || len(unknown) != 1 || unknown[0] != "stray" {
		t.Fatalf("counts: n %d missing %d unknown %v", sum.N, sum.Missing, unknown)
	}
	var mean AnswerScores
	for i, r := range recs {
		w := want[i]
		if !near(r.EM, w.EM) || !near(r.F1, w.F1) || !near(r.Precision, w.Precision) || !near(r.Recall, w.Recall) || !near(r.Acc, w.Acc) {
			t.Errorf("%s: pred %q gold %q: got %+v, want %+v", r.ID, r.Prediction, r.Gold, r.AnswerScores, w)
		}
		mean.EM += w.EM / float64(len(recs))
		mean.F1 += w.F1 / float64(len(recs))
		mean.Acc += w.Acc / float64(len(recs))
	}
	if !near(sum.EM.Mean, mean.EM) || !near(sum.F1.Mean, mean.F1) || !near(sum.Acc.Mean, mean.Acc) {
		t.Fatalf("summary %+v, want EM %v F1 %v acc %v", sum, mean.EM, mean.F1, mean.Acc)
	}
	if !(sum.EM.Lo <= sum.EM.Mean && sum.EM.Mean <= sum.EM.Hi) {
		t.Fatalf("EM interval %+v does not hold the mean", sum.EM)
	}
	if !recs[len(recs)-1].Missing {
		t.Fatal("last record should be missing")
	}
}

func TestScoreClassification(t *testing.T) {
	ex := []datasets.Example{
		{ID: "1", Answers: []string{"yes"}, Label: "yes"},
		{ID: "2", Answers: []string{"no"}, Label: "no"},
		{ID: "3", Answers: []string{"maybe"}, Label: "maybe"},
		{ID: "4", Answers: []string{"yes"}, Label: "yes"},
	}
	preds := map[string]string{"1": "Yes.", "2": "yes", "3": "maybe"}
	recs, sum, _ := Score(ex, preds, nil, Options{Resamples: 100})
	if sum.Classification == nil {
		t.Fatal("no classification summary")
	}
	// gold yes,no,maybe,yes; pred yes,yes,maybe,"" (missing): acc 2/4.
	// classes "",maybe,no,yes: ''=0; maybe P=1 R=1 F1=1; no: 0; yes: P=1/2 R=1/2 F1=1/2 → macro 1.5/4.
	if !near(sum.Classification.Accuracy.Mean, 0.5) || !near(sum.Classification.MacroF1.Mean, 1.5/4) {
		t.Fatalf("classification %+v", sum.Classification)
	}
	if recs[3].PredLabel != "" || *recs[3].Correct != 0 {
		t.Fatalf("missing prediction record %+v", recs[3])
	}
}

func TestScoreExtractor(t *testing.T) {
	ex := []datasets.Example{{ID: "1", Answers: []string{"producer"}}}
	preds := map[string]string{"1": "Jeremy is an actor and producer. So the answer is producer."}
	recs, _, _ := Score(ex, preds, nil, Options{Extractor: ExtractDRAGINHotpotQA, Resamples: -1})
	if recs[0].Answer != "producer" || recs[0].EM != 1 {
		t.Fatalf("%+v", recs[0])
	}
}

func benchExamples(n int) ([]datasets.Example, map[string]string) {
	golds := []string{"Paris", "Barack Obama", "August 25, 1963", "The Phantom Hour", "yes", "no", "15,140", "Genghis Khan"}
	ex := make([]datasets.Example, n)
	preds := make(map[string]string, n)
	for i := range ex {
		g := golds[i%len(golds)]
		id := fmt.Sprintf("id%06d", i)
		ex[i] = datasets.Example{ID: id, Answers: []string{g, strings.ToLower(g) + " alias"}}
		preds[id] = perturbations[i%len(perturbations)].make(g)
	}
	return ex, preds
}

// BenchmarkScore100k scores 100,000 predictions (the target is under 1 s), without and
// with 1,000-resample bootstrap intervals.
func BenchmarkScore100k(b *testing.B) {
	ex, preds := benchExamples(100000)
	b.Run("no-ci", func(b *testing.B) {
		for b.Loop() {
			Score(ex, preds, nil, Options{Resamples: -1})
		}
		b.ReportMetric(float64(len(ex))*float64(b.N)/b.Elapsed().Seconds(), "preds/s")
	})
	b.Run("ci-1000", func(b *testing.B) {
		for b.Loop() {
			Score(ex, preds, nil, Options{Resamples: 1000, Seed: 1})
		}
		b.ReportMetric(float64(len(ex))*float64(b.N)/b.Elapsed().Seconds(), "preds/s")
	})
}

// BenchmarkBootstrap100k compares the grouped (multinomial) bootstrap that Score uses with its peer,
// plain index resampling, on 100,000 0/1 scores and 1,000 resamples.
func BenchmarkBootstrap100k(b *testing.B) {
	xs := make([]float64, 100000)
	for i := range xs {
		if i%3 == 0 {
			xs[i] = 1
		}
	}
	b.Run("grouped", func(b *testing.B) {
		for b.Loop() {
			Bootstrap([][]float64{xs}, 1000, 0.95, 1)
		}
	})
	b.Run("indices", func(b *testing.B) {
		mean := func(s []int) float64 {
			t := 0.0
			if s == nil {
				return Mean(xs)
			}
			for _, i := range s {
				t += xs[i]
			}
			return t / float64(len(s))
		}
		for b.Loop() {
			BootstrapStat(len(xs), 1000, 0.95, 1, mean)
		}
	})
}
