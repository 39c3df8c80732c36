package runner

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"math"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ragbench/ragbench/datasets"
	"github.com/ragbench/ragbench/harness/corpus"
	"github.com/ragbench/ragbench/harness/retrieval"
	"github.com/ragbench/ragbench/harness/retrieval/unitindex"
	"github.com/ragbench/ragbench/internal/testenv"
	"github.com/ragbench/ragbench/methods"
	"github.com/ragbench/ragbench/metrics"
)

// ctxStub is a Contexter with a fixed context per question.
type ctxStub struct {
	units map[string][]methods.ContextUnit
}

func (s ctxStub) Name() string { return "stub" }
func (s ctxStub) K() int       { return 3 }
func (s ctxStub) Answer(context.Context, methods.Env, datasets.Example) (methods.Prediction, error) {
	return methods.Prediction{}, nil
}
func (s ctxStub) Context(_ context.Context, _ methods.Env, ex datasets.Example) ([]methods.ContextUnit, []methods.Event, error) {
	return s.units[ex.Question], nil, nil
}

// TestEvalContextsGold checks AR@k and both gold modes by hand: documents by title (supporting
// facts) and passages covered by unit texts (NQ-open's oracle).
func TestEvalContextsGold(t *testing.T) {
	stub := ctxStub{units: map[string][]methods.ContextUnit{
		"q1": {{ID: "A#g2:0-2", Title: "A", Text: "Paris is big."}, {ID: "B#g2:0-2", Title: "B", Text: "Lyon  is\\nsmaller."}, {ID: "C#g2:0-2", Title: "C", Text: "Nice."}},
		"q2": {{ID: "D#g2:0-2", Title: "D", Text: "Oslo."}, {ID: "A#g2:0-2", Title: "A", Text: "Paris is big."}},
	}}
	exs := []datasets.Example{
		{ID: "1", Question: "q1", Answers: []string{"Lyon"}, SupportingFacts: []datasets.SupportingFact{{Title: "A"}, {Title: "C"}}},
		{ID: "2", Question: "q2", Answers: []string{"Paris"}},
	}
	passages := map[string][]datasets.Passage{"q2": {
		{Title: "P", Text: "Intro. Paris is   big. More."}, // covered by A's unit at k = 2
		{Title: "Q", Text: "Unrelated."},
	}}
	rep, err := EvalContexts(context.Background(), stub, methods.Env{}, exs, ContextOptions{Ks: []int{1, 2, 3},
		Gold: UnitGold(passages)})
	if err != nil {
		t.Fatal(err)
	}
	want := []ContextRow{
		// k=1: q1 no Lyon, gold A of {A,C}; q2 no Paris, no passage covered.
		{K: 1, ARSubstring: 0, ARTokens: 0, GoldRecall: (0.5 + 0) / 2, GoldAll: 0, GoldExamples: 2},
		// k=2: q1 Lyon, A; q2 Paris, passage P of {P,Q}.
		{K: 2, ARSubstring: 1, ARTokens: 1, GoldRecall: (0.5 + 0.5) / 2, GoldAll: 0, GoldExamples: 2},
		// k=3: q1 A and C: all.
		{K: 3, ARSubstring: 1, ARTokens: 1, GoldRecall: (1 + 0.5) / 2, GoldAll: 0.5, GoldExamples: 2},
	}
	for i, w := range want {
		if rep.Rows[i] != w {
			t.Errorf("row %d: %+v, want %+v", i, rep.Rows[i], w)
		}
	}
	if rep.Questions != 2 || rep.MeanUnits != 2.5 {
		t.Errorf("report %+v", rep)
	}
	if _, err := EvalContexts(context.Background(), stub, methods.Env{}, exs, ContextOptions{Ks: []int{0, 2}}); err == nil || !strings.Contains(err.Error(), "cut-off 0") {
		t.Errorf("a cut-off of 0: %v, want an error naming it", err)
	}
}

func TestContextReportWriteText(t *testing.T) {
	var b bytes.Buffer
	ContextReport{Method: "umg", Questions: 2, MeanUnits: 3.5, PreprocessingP50: 1, PreprocessingP95: 2, RetrievalP50: 0.5, FusionP50: 0.25,
		Rows: []ContextRow{{K: 1, ARSubstring: 0.5, ARTokens: 0.5, GoldRecall: 1, GoldAll: 1, GoldExamples: 2}}}.WriteText(&b, "hotpotqa")
	want := "umg on hotpotqa (2 questions, 3.5 units per context): preprocessing p50 1.00 ms, p95 2.00 ms; in retrieval p50 0.50 ms; fusion p50 0.250 ms\n" +
		"  k  AR@k   AR@k(tokens)  gold recall  gold all  gold n\n" +
		"  1  0.500  0.500         1.000        1.000     2\n"
	if b.String() != want {
		t.Errorf("got\n%s\nwant\n%s", b.String(), want)
	}
}

// TestEvalContextsUMG runs the retrieval-only mode for every UMG method and baseline on HotpotQA,
// whose gold documents are its supporting-fact titles, and checks the report against the per-question
// context recall.
func TestEvalContextsUMG(t *testing.T) {
	if testing.Short() {
		t.Skip("builds unit indexes over the HotpotQA pool: not in -short")
	}
	all, err := datasets.Load(context.Background(), testenv.Data(t, "hotpotqa/distractor/validation-00000-of-00001.parquet"), datasets.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	docs, _ := corpus.Pool(all.Examples)
	dir := t.TempDir()
	for _, kind := range []string{"bm25", "dense"} {
		if err := unitindex.Build(context.Background(), docs, filepath.Join(dir, kind), unitindex.BuildOptions{Kind: kind}); err != nil {
			t.Fatal(err)
		}
	}
	units, err := unitindex.OpenPair(filepath.Join(dir, "bm25"), filepath.Join(dir, "dense"), []int{2, 4, 8, 16, 32, corpus.LongSize}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer units.Close()
	env := methods.Env{Retrievers: units.Lean(), Units: units.BM25.Table}
	exs := all.Examples[:50]
	for _, name := range []string{"umg", "umgp", "standard-rag", "hybrid", "longrag"} {
		m, _ := methods.New(name, nil)
		rep, err := EvalContexts(context.Background(), m.(methods.Contexter), env, exs, ContextOptions{Ks: []int{1, 5}})
		if err != nil {
			t.Fatal(err)
		}
		// AR@5 equals the mean of the per-question context recall.
		var ar float64
		for _, ex := range exs {
			cu, _, err := m.(methods.Contexter).Context(context.Background(), env, ex)
			if err != nil {
				t.Fatal(err)
			}
			ar += methods.ContextAnswerRecall(cu, ex.Answers)
		}
		if got := rep.Rows[1].ARSubstring; math.Abs(got-ar/float64(len(exs))) > 1e-12 || rep.Questions != 50 {
			t.Errorf("%s: AR@5 %v, want %v", name, got, ar/float64(len(exs)))
		}
		if rep.Rows[1].GoldExamples != 50 || rep.Rows[1].GoldRecall <= 0 || rep.Rows[0].GoldRecall > rep.Rows[1].GoldRecall {
			t.Errorf("%s: gold recall rows %+v", name, rep.Rows)
		}
		b, _ := json.Marshal(rep)
		t.Logf("%s", b)
	}
}

// fixedRetriever answers every question with the same passages, or fails on "fail".
type fixedRetriever []retrieval.Hit

func (f fixedRetriever) Retrieve(_ context.Context, q string, k int) ([]retrieval.Hit, error) {
	if q == "fail" {
		return nil, errors.New("boom")
	}
	return f[:min(k, len(f))], nil
}

// TestEvalContextsTopK is retrieval-eval's loop: a plain retriever's top k through EvalContexts, with
// retrieval-eval's gold (metrics.GoldDocsOf) and progress every 1000 questions.
func TestEvalContextsTopK(t *testing.T) {
	env := methods.Env{Retriever: fixedRetriever{{Title: "A", Text: "Paris is in France"}, {Title: "B", Text: "Berlin"}}}
	examples := make([]datasets.Example, 2000)
	for i := range examples {
		examples[i] = datasets.Example{ID: "x", Question: "q", Answers: []string{"Berlin"},
			SupportingFacts: []datasets.SupportingFact{{Title: "B"}}}
	}
	var calls []int
	opt := ContextOptions{Ks: []int{2, 1}, Progress: func(n int) { calls = append(calls, n) },
		Gold: func(ex datasets.Example) *metrics.RetrievalGold { return metrics.GoldDocsOf(ex, nil) }}
	rep, err := EvalContexts(context.Background(), TopK{K: 2}, env, examples, opt)
	if err != nil {
		t.Fatal(err)
	}
	rows := rep.RetrievalRows()
	cases := []struct {
		ok  bool
		why string
	}{
		{rep.Questions == 2000 && rep.MeanUnits == 2, "every example evaluated, two passages each"},
		{rows[0].K == 1 && rows[0].ARSubstring == 0 && rows[1].ARSubstring == 1, "the answer is in the second passage: AR@1 0, AR@2 1"},
		{rows[0].GoldRecall == 0 && rows[1].GoldRecall == 1 && rows[1].GoldExamples == 2000, "the gold title is the second hit"},
		{len(calls) == 2 && calls[0] == 1000 && calls[1] == 2000, "progress every 1000 examples"},
	}
	for _, c := range cases {
		if !c.ok {
			t.Errorf("%s: rows %+v, progress %v", c.why, rows, calls)
		}
	}
	bad := []datasets.Example{{ID: "e7", Question: "fail"}}
	if _, err := EvalContexts(context.Background(), TopK{K: 2}, env, bad, opt); err == nil || !strings.Contains(err.Error(), "example e7") {
		t.Errorf("a failing retrieval: %v, want an error naming the example", err)
	}
	if _, err := EvalContexts(context.Background(), TopK{K: 2}, methods.Env{}, examples[:1], opt); err == nil || !strings.Contains(err.Error(), "no retriever") {
		t.Errorf("no retriever: %v, want an error saying so", err)
	}
}
