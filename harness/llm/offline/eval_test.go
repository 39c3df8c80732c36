package offline

import (
	"bufio"
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/ragbench/ragbench/datasets"
	"github.com/ragbench/ragbench/harness/llm"
	"github.com/ragbench/ragbench/internal/testenv"
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

// exemplarFile is the layout of reference/quco-rag/exemplars.json.
type exemplarFile struct {
	DemoInput  string            `json:"demo_input_template"`
	Output     string            `json:"output_template"`
	TestInput  map[string]string `json:"test_input_template"`
	FewshotUse map[string]int    `json:"fewshot_used"`
	Exemplars  map[string][]struct {
		Question, Cot, Answer string
	} `json:"exemplars"`
}

type contextTemplate struct {
	Header      string `json:"context_header"`
	DocFormat   string `json:"doc_format"`
	PostDoc     string `json:"post_doc"`
	Instruction string `json:"instruction"`
}

// promptBuilder builds QuCo-RAG-style prompts from the reference files.
type promptBuilder struct {
	ex  exemplarFile
	ctx contextTemplate
}

func newPromptBuilder(t *testing.T) *promptBuilder { return newPromptBuilderB(t) }

func newPromptBuilderB(t testing.TB) *promptBuilder {
	t.Helper()
	var b promptBuilder
	data, err := os.ReadFile(testenv.Reference(t, "quco-rag/exemplars.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &b.ex); err != nil {
		t.Fatalf("exemplars.json: %v", err)
	}
	data, err = os.ReadFile(testenv.Reference(t, "quco-rag/prompt_templates.json"))
	if err != nil {
		t.Fatal(err)
	}
	var tmpl map[string]json.RawMessage
	if err := json.Unmarshal(data, &tmpl); err != nil {
		t.Fatalf("prompt_templates.json: %v", err)
	}
	var v1 struct {
		Initial contextTemplate `json:"initial"`
	}
	if err := json.Unmarshal(tmpl["new_prompt_v1"], &v1); err != nil {
		t.Fatalf("prompt_templates.json new_prompt_v1: %v", err)
	}
	b.ctx = v1.Initial
	return &b
}

// build returns the prompt for a question with passages; dataset selects the exemplars ("" for none).
func (b *promptBuilder) build(dataset, question string, passages []string) string {
	var sb strings.Builder
	if exs := b.ex.Exemplars[dataset]; len(exs) > 0 {
		for _, e := range exs[:min(len(exs), b.ex.FewshotUse[dataset])] {
			sb.WriteString(strings.ReplaceAll(b.ex.DemoInput, "{question}", e.Question))
			sb.WriteString(" ")
			out := strings.ReplaceAll(b.ex.Output, "{cot}", e.Cot)
			sb.WriteString(strings.ReplaceAll(out, "{answer}", e.Answer))
			sb.WriteString("\n\n")
		}
	}
	sb.WriteString(b.ctx.Header)
	for i, p := range passages {
		d := strings.ReplaceAll(b.ctx.DocFormat, "{index}", fmt.Sprint(i+1))
		sb.WriteString(strings.ReplaceAll(d, "{doc}", p))
	}
	sb.WriteString(b.ctx.PostDoc)
	sb.WriteString(b.ctx.Instruction)
	test := b.ex.TestInput[dataset]
	if test == "" {
		test = "Question: {question}\nAnswer:"
	}
	sb.WriteString(strings.ReplaceAll(test, "{question}", question))
	return sb.String()
}

func passageText(p datasets.Passage) string {
	s := p.Text
	if len(p.Sentences) > 0 {
		s = strings.Join(p.Sentences, " ")
	}
	return strings.Join(strings.Fields(s), " ")
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
	ext := metrics.DefaultExtractor(name)
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
				var ps []string
				for _, c := range ex.Contexts {
					ps = append(ps, passageText(c))
				}
				out = append(out, evalItem{ex, ps, "hotpotqa"})
			}
			return out
		}, 0.10},
		{"2wikimultihopqa", "2WikiMultihopQA dev, 300 (10 passages: gold + distractors)", func(t *testing.T) []evalItem {
			var out []evalItem
			for _, ex := range loadExamples(t, "2wikimultihopqa/dev-00000-of-00001.parquet") {
				var ps []string
				for _, c := range ex.Contexts {
					ps = append(ps, passageText(c))
				}
				out = append(out, evalItem{ex, ps, "2wikimultihopqa"})
			}
			return out
		}, 0.15},
		{"nq_open", "NQ-open dev with its oracle passage (2,655 of 3,610)", func(t *testing.T) []evalItem {
			return nqOracle(t)
		}, 0.10},
		{"pubmedqa", "PubMedQA pqa_labeled, 1,000 (abstract without conclusion)", func(t *testing.T) []evalItem {
			var out []evalItem
			for _, ex := range loadExamples(t, "pubmedqa/pqa_labeled/train-00000-of-00001.parquet") {
				var ps []string
				for _, c := range ex.Contexts {
					ps = append(ps, passageText(c))
				}
				out = append(out, evalItem{ex, ps, ""})
			}
			return out
		}, 0.40},
		{"nq_longdoc", "NQ long-document, 109 (one whole Wikipedia page, one passage per line)", func(t *testing.T) []evalItem {
			var out []evalItem
			for _, ex := range loadExamples(t, "nq_longdoc/validation-00000-of-00001.parquet") {
				var ps []string
				for _, c := range ex.Contexts {
					ps = append(ps, strings.Split(c.Text, "\n")...)
				}
				out = append(out, evalItem{ex, ps, ""})
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
	f, err := os.Open(testenv.Data(t, "raw/nq_docs/nq-open-oracle.jsonl.gz"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	oracle := map[string][]string{}
	sc := bufio.NewScanner(zr)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	line := 0
	for sc.Scan() {
		line++
		var row struct {
			Question string `json:"question"`
			Ctxs     []struct {
				Title, Text string
			} `json:"ctxs"`
		}
		if err := json.Unmarshal(sc.Bytes(), &row); err != nil {
			t.Fatalf("nq-open-oracle.jsonl.gz line %d: %v", line, err)
		}
		for _, c := range row.Ctxs {
			oracle[row.Question] = append(oracle[row.Question], strings.Join(strings.Fields(c.Text), " "))
		}
	}
	if err := sc.Err(); err != nil {
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
		out = append(out, evalItem{ex, ps, ""})
	}
	t.Logf("nq_open: %d questions with an oracle passage, %d without (left out)", len(out), missing)
	return out
}
