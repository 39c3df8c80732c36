package offline

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/ragbench/ragbench/datasets"
	"github.com/ragbench/ragbench/harness/llm"
	"github.com/ragbench/ragbench/internal/testenv"
	"github.com/ragbench/ragbench/methods/prompts"
	"github.com/ragbench/ragbench/metrics"
)

// This file measures the offline reader with the gold contexts (docs/offline-reader.md):
//
//	go test ./harness/llm/offline -run TestGoldContextAccuracy -v
//
// Prompts follow the QuCo-RAG layout: for 2WikiMultihopQA and HotpotQA, the authors' exemplars
// (6 and 8 shots) in "Question: …\nAnswer: <cot> So the answer is <answer>." form, then the
// new_prompt_v1 "initial" context block ("[i] passage" lines), its instruction and the dataset's test
// input "Question: …\nAnswer:"; the other datasets use the same context block without exemplars. Each
// gold passage is its sentences joined, without the title (as BM25 over psgs_w100 returns them).

// newPromptBuilder loads the authors' reference files (methods/prompts) from ../shared/reference.
func newPromptBuilder(t *testing.T) *promptBuilder { return newPromptBuilderB(t) }

func newPromptBuilderB(t testing.TB) *promptBuilder {
	t.Helper()
	set, err := prompts.Load(testenv.Reference(t, "quco-rag"))
	if err != nil {
		t.Fatal(err)
	}
	b := &promptBuilder{builders: map[string]*prompts.Builder{}}
	for _, name := range []string{"", "hotpotqa", "2wikimultihopqa"} {
		if b.builders[name], err = set.Builder(prompts.Options{Exemplars: name, Shots: -1}); err != nil {
			t.Fatal(err)
		}
	}
	return b
}

// promptBuilder holds one prompts.Builder per exemplar set, with the authors' shot counts.
type promptBuilder struct {
	builders map[string]*prompts.Builder
}

// build returns the prompt for a question with passages; exemplars names the set ("" for none).
func (b *promptBuilder) build(exemplars, question string, passages []string) string {
	return b.builders[exemplars].Build(question, passages)
}

type evalItem struct {
	ex       datasets.Example
	passages []string
	dataset  string // exemplar set ("" for none)
}

// runEval generates an answer for every item and scores the outputs with package metrics, using the
// QuCo-RAG extraction rule of the dataset (its 2WikiMultihopQA rule for the datasets QuCo-RAG does not
// evaluate: the text after "answer is" in the last such sentence, without the full stop).
func runEval(t *testing.T, b *promptBuilder, name string, items []evalItem) (metrics.Summary, time.Duration) {
	t.Helper()
	r := New(Options{})
	start := time.Now()
	debug := os.Getenv("OFFLINE_DEBUG") != ""
	exs := make([]datasets.Example, len(items))
	preds := make(map[string]string, len(items))
	for i, it := range items {
		prompt := b.build(it.dataset, it.ex.Question, it.passages)
		resp, err := r.Generate(context.Background(), llm.Request{Endpoint: llm.Completions, Prompt: prompt, MaxTokens: 256, Stop: []string{"\n"}})
		if err != nil {
			t.Fatal(err)
		}
		exs[i] = it.ex
		preds[it.ex.ID] = resp.Text
	}
	elapsed := time.Since(start)
	ext := metrics.DefaultAnswerRule(name)
	if ext == metrics.ExtractNone {
		ext = metrics.ExtractQuCo2Wiki
	}
	recs, sum, unknown := metrics.Score(exs, preds, nil, metrics.Options{Extractor: ext, Seed: 1})
	if len(unknown) > 0 || sum.Missing > 0 {
		t.Fatalf("%d unknown and %d missing predictions", len(unknown), sum.Missing)
	}
	if debug {
		for i, rec := range recs {
			if rec.EM == 0 && (rec.Correct == nil || *rec.Correct == 0) {
				t.Logf("MISS q=%q gold=%q label=%q out=%q", exs[i].Question, rec.Gold, rec.Label, rec.Prediction)
			}
		}
	}
	return sum, elapsed
}

func loadExamples(t *testing.T, rel string) []datasets.Example { return loadExamplesB(t, rel) }

func loadExamplesB(t testing.TB, rel string) []datasets.Example {
	t.Helper()
	ds, err := datasets.Load(context.Background(), testenv.Data(t, rel), datasets.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return ds.Examples
}

// TestGoldContextAccuracy reports EM/F1 of the offline reader with gold contexts and fails below
// floors set under the measured figures.
func TestGoldContextAccuracy(t *testing.T) {
	b := newPromptBuilder(t)
	type row struct {
		name  string // dataset name, which selects the answer extraction rule
		label string
		items func(t *testing.T) []evalItem
		floor float64 // floor of EM, or of accuracy for PubMedQA
	}
	rows := []row{
		{"hotpotqa-distractor", "HotpotQA distractor dev, first 100 (10 passages: 2 gold + 8 distractors)", func(t *testing.T) []evalItem {
			var out []evalItem
			for _, ex := range loadExamples(t, "hotpotqa/distractor/validation-00000-of-00001.parquet") {
				out = append(out, evalItem{ex, prompts.Passages(ex), "hotpotqa"})
			}
			return out
		}, 0.10},
		{"2wikimultihopqa", "2WikiMultihopQA dev, 300 (10 passages: gold + distractors)", func(t *testing.T) []evalItem {
			var out []evalItem
			for _, ex := range loadExamples(t, "2wikimultihopqa/dev-00000-of-00001.parquet") {
				out = append(out, evalItem{ex, prompts.Passages(ex), "2wikimultihopqa"})
			}
			return out
		}, 0.15},
		{"nq_open", "NQ-open dev with its oracle passage (2,655 of 3,610)", func(t *testing.T) []evalItem {
			return nqOracle(t)
		}, 0.10},
		{"pubmedqa", "PubMedQA pqa_labeled, 1,000 (abstract without conclusion)", func(t *testing.T) []evalItem {
			var out []evalItem
			for _, ex := range loadExamples(t, "pubmedqa/pqa_labeled/train-00000-of-00001.parquet") {
				out = append(out, evalItem{ex, prompts.Passages(ex), ""})
			}
			return out
		}, 0.40},
		{"nq_longdoc", "NQ long-document, 109 (one whole Wikipedia page, one passage per line)", func(t *testing.T) []evalItem {
			var out []evalItem
			for _, ex := range loadExamples(t, "nq_longdoc/validation-00000-of-00001.parquet") {
				out = append(out, evalItem{ex, prompts.Passages(ex), ""})
			}
			return out
		}, 0.0},
	}
	t.Logf("| dataset | n | EM | F1 | accuracy / macro-F1 | extraction rule | time |")
	t.Logf("|---|---|---|---|---|---|---|")
	for _, r := range rows {
		t.Run(r.name, func(t *testing.T) {
			if testing.Short() && r.name == "nq_longdoc" {
				t.Skip("the long-document setting takes seconds; skipped with -short")
			}
			sum, elapsed := runEval(t, b, r.name, r.items(t))
			iv := func(x metrics.Interval) string {
				return fmt.Sprintf("%.1f [%.1f, %.1f]", 100*x.Mean, 100*x.Lo, 100*x.Hi)
			}
			cls, got := "–", sum.EM.Mean
			if c := sum.Classification; c != nil {
				cls = iv(c.Accuracy) + " / " + fmt.Sprintf("%.1f", 100*c.MacroF1.Mean)
				got = c.Accuracy.Mean
			}
			t.Logf("| %s | %d | %s | %s | %s | %s | %s |", r.label, sum.N, iv(sum.EM), iv(sum.F1), cls, sum.Extractor, elapsed.Round(time.Millisecond))
			if got < r.floor {
				t.Errorf("%s %.3f below the floor %.2f", map[bool]string{true: "accuracy", false: "EM"}[sum.Classification != nil], got, r.floor)
			}
		})
	}
}

// nqOracle pairs NQ-open dev questions with the gold passage of the Lost-in-the-Middle oracle file,
// matched by question text. Questions without an oracle passage are left out and counted.
func nqOracle(t *testing.T) []evalItem {
	t.Helper()
	oracle, err := datasets.ReadOracle(context.Background(), testenv.Data(t, "raw/nq_docs/nq-open-oracle.jsonl.gz"))
	if err != nil {
		t.Fatal(err)
	}
	var out []evalItem
	missing := 0
	for _, ex := range loadExamples(t, "nq_open/validation-00000-of-00001.parquet") {
		ps, ok := oracle[ex.Question]
		if !ok {
			missing++
			continue
		}
		ex.Contexts = ps
		out = append(out, evalItem{ex, prompts.Passages(ex), ""})
	}
	t.Logf("nq_open: %d questions with an oracle passage, %d without (left out)", len(out), missing)
	return out
}
