package methods_test

import (
	"context"
	"fmt"
	"os"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/ragbench/ragbench/datasets"
	"github.com/ragbench/ragbench/harness/llm"
	"github.com/ragbench/ragbench/harness/llm/offline"
	"github.com/ragbench/ragbench/internal/testenv"
	"github.com/ragbench/ragbench/methods"
	"github.com/ragbench/ragbench/methods/prompts"
	"github.com/ragbench/ragbench/metrics"
)

// This file measures the offline reader (harness/llm/offline) with the gold contexts and the prompts of
// methods/prompts (docs/offline-reader.md). It lives here, not beside the reader, because the reader is a
// shared component and may not import methods/prompts (internal/layout):
//
//	go test ./methods -run TestGoldContextAccuracy -v
//
// Prompts follow the QuCo-RAG layout: for 2WikiMultihopQA and HotpotQA, the authors' exemplars
// (6 and 8 shots) in "Question: …\nAnswer: <cot> So the answer is <answer>." form, then the
// new_prompt_v1 "initial" context block ("[i] passage" lines), its instruction and the dataset's test
// input "Question: …\nAnswer:"; the other datasets use the same context block without exemplars. Each
// gold passage is its sentences joined, without the title (as BM25 over psgs_w100 returns them).

// newGoldPromptBuilder loads the authors' reference files (methods/prompts) from ../shared/reference.
func newGoldPromptBuilder(t *testing.T) *goldPromptBuilder { return newGoldPromptBuilderB(t) }

func newGoldPromptBuilderB(t testing.TB) *goldPromptBuilder {
	t.Helper()
	set, err := prompts.Load(testenv.Reference(t, "quco-rag"))
	if err != nil {
		t.Fatal(err)
	}
	b := &goldPromptBuilder{set: set, builders: map[string]*prompts.Builder{}}
	for _, name := range []string{"", "hotpotqa", "2wikimultihopqa"} {
		if b.builders[name], err = set.Builder(prompts.Options{Exemplars: name, Shots: -1}); err != nil {
			t.Fatal(err)
		}
	}
	return b
}

// goldPromptBuilder holds one prompts.Builder per exemplar set, with the authors' shot counts.
type goldPromptBuilder struct {
	set      *prompts.Set
	builders map[string]*prompts.Builder
}

// build returns the prompt for a question with passages; exemplars names the set ("" for none).
func (b *goldPromptBuilder) build(exemplars, question string, passages []string) string {
	return b.builders[exemplars].Build(question, passages)
}

type goldItem struct {
	ex       datasets.Example
	passages []string
	dataset  string // exemplar set ("" for none)
}

// runGoldEval answers every item with the gold-context method (the one `ragbench predict` runs) and
// the offline reader, and scores the raw outputs with package metrics, using the QuCo-RAG extraction
// rule of the dataset (its 2WikiMultihopQA rule for the datasets QuCo-RAG does not evaluate: the text
// after "answer is" in the last such sentence, without the full stop).
func runGoldEval(t *testing.T, b *goldPromptBuilder, name string, items []goldItem) (metrics.Summary, time.Duration) {
	t.Helper()
	env := methods.Env{Generator: offline.New(offline.Options{}), Prompts: b.set}
	gc := map[string]methods.Method{}
	start := time.Now()
	debug := os.Getenv("OFFLINE_DEBUG") != ""
	exs := make([]datasets.Example, len(items))
	preds := make(map[string]string, len(items))
	for i, it := range items {
		m := gc[it.dataset]
		if m == nil {
			set := it.dataset
			if set == "" {
				set = "none"
			}
			var err error
			if m, err = methods.New("gold-context", map[string]any{"exemplars": set}); err != nil {
				t.Fatal(err)
			}
			gc[it.dataset] = m
		}
		if got := prompts.Passages(it.ex); !slices.Equal(got, it.passages) {
			t.Fatalf("%s: the method reads passages %q, the item holds %q", it.ex.ID, got, it.passages)
		}
		p, err := m.Answer(context.Background(), env, it.ex)
		if err != nil {
			t.Fatal(err)
		}
		exs[i] = it.ex
		preds[it.ex.ID] = p.Raw
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

func loadGoldExamples(t *testing.T, rel string) []datasets.Example { return loadGoldExamplesB(t, rel) }

func loadGoldExamplesB(t testing.TB, rel string) []datasets.Example {
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
	b := newGoldPromptBuilder(t)
	type row struct {
		name  string // dataset name, which selects the answer extraction rule
		label string
		items func(t *testing.T) []goldItem
		floor float64 // floor of EM, or of accuracy for PubMedQA
	}
	rows := []row{
		{"hotpotqa-distractor", "HotpotQA distractor dev, first 100 (10 passages: 2 gold + 8 distractors)", func(t *testing.T) []goldItem {
			var out []goldItem
			for _, ex := range loadGoldExamples(t, "hotpotqa/distractor/validation-00000-of-00001.parquet") {
				out = append(out, goldItem{ex, prompts.Passages(ex), "hotpotqa"})
			}
			return out
		}, 0.10},
		{"2wikimultihopqa", "2WikiMultihopQA dev, 300 (10 passages: gold + distractors)", func(t *testing.T) []goldItem {
			var out []goldItem
			for _, ex := range loadGoldExamples(t, "2wikimultihopqa/dev-00000-of-00001.parquet") {
				out = append(out, goldItem{ex, prompts.Passages(ex), "2wikimultihopqa"})
			}
			return out
		}, 0.15},
		{"nq_open", "NQ-open dev with its oracle passage (2,655 of 3,610)", func(t *testing.T) []goldItem {
			return nqOracleItems(t)
		}, 0.10},
		{"pubmedqa", "PubMedQA pqa_labeled, 1,000 (abstract without conclusion)", func(t *testing.T) []goldItem {
			var out []goldItem
			for _, ex := range loadGoldExamples(t, "pubmedqa/pqa_labeled/train-00000-of-00001.parquet") {
				out = append(out, goldItem{ex, prompts.Passages(ex), ""})
			}
			return out
		}, 0.40},
		{"nq_longdoc", "NQ long-document, 109 (one whole Wikipedia page, one passage per line)", func(t *testing.T) []goldItem {
			var out []goldItem
			for _, ex := range loadGoldExamples(t, "nq_longdoc/validation-00000-of-00001.parquet") {
				out = append(out, goldItem{ex, prompts.Passages(ex), ""})
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
			sum, elapsed := runGoldEval(t, b, r.name, r.items(t))
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

// nqOracleItems pairs NQ-open dev questions with the gold passage of the Lost-in-the-Middle oracle file,
// matched by question text. Questions without an oracle passage are left out and counted.
func nqOracleItems(t *testing.T) []goldItem {
	t.Helper()
	oracle, err := datasets.ReadOracle(context.Background(), testenv.Data(t, "raw/nq_docs/nq-open-oracle.jsonl.gz"))
	if err != nil {
		t.Fatal(err)
	}
	var out []goldItem
	missing := 0
	for _, ex := range loadGoldExamples(t, "nq_open/validation-00000-of-00001.parquet") {
		ps, ok := oracle[ex.Question]
		if !ok {
			missing++
			continue
		}
		ex.Contexts = ps
		out = append(out, goldItem{ex, prompts.Passages(ex), ""})
	}
	t.Logf("nq_open: %d questions with an oracle passage, %d without (left out)", len(out), missing)
	return out
}

// BenchmarkOfflineGenerate times the offline reader on the 300 2WikiMultihopQA gold-context prompts (6 exemplars,
// 10 passages each), with one hop and with two as peers in the same run, and reports p50/p99 per
// call:
//
//	go test ./methods -run '^$' -bench OfflineGenerate -benchtime 600x
func BenchmarkOfflineGenerate(b *testing.B) {
	bld := newGoldPromptBuilderB(b)
	var ps []string
	for _, ex := range loadGoldExamplesB(b, "2wikimultihopqa/dev-00000-of-00001.parquet") {
		ps = append(ps, bld.build("2wikimultihopqa", ex.Question, prompts.Passages(ex)))
	}
	for _, hops := range []int{1, 2} {
		b.Run(map[int]string{1: "hops=1", 2: "hops=2"}[hops], func(b *testing.B) {
			r := offline.New(offline.Options{MaxHops: hops})
			lat := make([]time.Duration, 0, b.N)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				start := time.Now()
				if _, err := r.Generate(context.Background(), llm.Request{Prompt: ps[i%len(ps)], Logprobs: 1}); err != nil {
					b.Fatal(err)
				}
				lat = append(lat, time.Since(start))
			}
			b.StopTimer()
			sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
			b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-µs")
			b.ReportMetric(float64(lat[min(len(lat)-1, len(lat)*99/100)].Microseconds()), "p99-µs")
		})
	}
}

// TestParsePromptWithAuthorsTemplates checks that offline.ParsePrompt finds the question and passages
// of prompts built by methods/prompts from the authors' templates, with and without retrieval.
func TestParsePromptWithAuthorsTemplates(t *testing.T) {
	b := newGoldPromptBuilder(t)
	passages := []string{"Lucio Fulci( 17 June 1927 – 13 March 1996) was an Italian film director.", "The House by the Cemetery is a 1981 Italian horror film directed by Lucio Fulci."}
	for _, ds := range []string{"2wikimultihopqa", "hotpotqa", ""} {
		q := "When did the director of film The House By The Cemetery die?"
		got := offline.ParsePrompt(b.build(ds, q, passages))
		if got.Question != q || !reflect.DeepEqual(got.Passages, passages) || got.Partial != "" {
			t.Fatalf("%s: got %#v", ds, got)
		}
		if strings.Contains(strings.Join(got.Passages, " "), "So the answer is") {
			t.Fatalf("%s: an exemplar leaked into the passages", ds)
		}
		// Without retrieval (the first step of FLARE and DRAGIN) nothing is context.
		if got := offline.ParsePrompt(b.build(ds, q, nil)); len(got.Passages) != 0 || got.Question != q {
			t.Fatalf("%s without passages: got %#v", ds, got)
		}
	}
}
