package offline

import (
	"bufio"
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"
	"unicode"

	"github.com/ragbench/ragbench/datasets"
	"github.com/ragbench/ragbench/harness/llm"
	"github.com/ragbench/ragbench/internal/testenv"
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

var (
	articlesRE = regexp.MustCompile(`\b(a|an|the)\b`)
	answerRE2  = regexp.MustCompile(`(?i)so the answer is\s*(.*)`)
)

// extractAnswer takes the text after "So the answer is", without the final full stop.
// TODO(metrics): use the metrics package's answer extraction once it is on main.
func extractAnswer(out string) string {
	m := answerRE2.FindStringSubmatch(out)
	if m == nil {
		return strings.TrimSpace(out)
	}
	return strings.TrimSuffix(strings.TrimSpace(m[1]), ".")
}

// normalize is the SQuAD answer normalisation.
// TODO(metrics): use the metrics package once it is on main.
func normalize(s string) string {
	s = strings.ToLower(s)
	s = strings.Map(func(r rune) rune {
		if unicode.IsPunct(r) || unicode.IsSymbol(r) {
			return -1
		}
		return r
	}, s)
	s = articlesRE.ReplaceAllString(s, " ")
	return strings.Join(strings.Fields(s), " ")
}

func emF1(pred string, golds []string) (float64, float64) {
	em, f1 := 0.0, 0.0
	p := normalize(pred)
	for _, g := range golds {
		g := normalize(g)
		if p == g {
			em = 1
		}
		pt, gt := strings.Fields(p), strings.Fields(g)
		common := map[string]int{}
		for _, w := range gt {
			common[w]++
		}
		same := 0
		for _, w := range pt {
			if common[w] > 0 {
				same++
				common[w]--
			}
		}
		if same > 0 {
			pr, rc := float64(same)/float64(len(pt)), float64(same)/float64(len(gt))
			f1 = max(f1, 2*pr*rc/(pr+rc))
		}
	}
	return em, f1
}

type evalItem struct {
	question string
	passages []string
	golds    []string
	dataset  string // exemplar set
}

type evalResult struct {
	n       int
	em, f1  float64
	elapsed time.Duration
}

func runEval(t *testing.T, b *promptBuilder, items []evalItem) evalResult {
	t.Helper()
	r := New(Options{})
	var res evalResult
	start := time.Now()
	debug := os.Getenv("OFFLINE_DEBUG") != ""
	for _, it := range items {
		prompt := b.build(it.dataset, it.question, it.passages)
		resp, err := r.Generate(context.Background(), llm.Request{Endpoint: llm.Completions, Prompt: prompt, MaxTokens: 256, Stop: []string{"\n"}})
		if err != nil {
			t.Fatal(err)
		}
		em, f1 := emF1(extractAnswer(resp.Text), it.golds)
		if debug && em == 0 {
			t.Logf("MISS q=%q gold=%q out=%q", it.question, it.golds, resp.Text)
		}
		res.n++
		res.em += em
		res.f1 += f1
	}
	res.elapsed = time.Since(start)
	if res.n > 0 {
		res.em /= float64(res.n)
		res.f1 /= float64(res.n)
	}
	return res
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
		name  string
		items func(t *testing.T) []evalItem
		floor float64 // EM floor
	}
	rows := []row{
		{"hotpotqa-distractor (100, 10 passages)", func(t *testing.T) []evalItem {
			var out []evalItem
			for _, ex := range loadExamples(t, "hotpotqa/distractor/validation-00000-of-00001.parquet") {
				var ps []string
				for _, c := range ex.Contexts {
					ps = append(ps, passageText(c))
				}
				out = append(out, evalItem{ex.Question, ps, ex.Answers, "hotpotqa"})
			}
			return out
		}, 0.10},
		{"2wikimultihopqa (300, 10 passages)", func(t *testing.T) []evalItem {
			var out []evalItem
			for _, ex := range loadExamples(t, "2wikimultihopqa/dev-00000-of-00001.parquet") {
				var ps []string
				for _, c := range ex.Contexts {
					ps = append(ps, passageText(c))
				}
				out = append(out, evalItem{ex.Question, ps, ex.Answers, "2wikimultihopqa"})
			}
			return out
		}, 0.15},
		{"nq_open oracle (2,655 with a gold passage)", func(t *testing.T) []evalItem {
			return nqOracle(t)
		}, 0.10},
		{"pubmedqa (1,000, yes/no/maybe accuracy)", func(t *testing.T) []evalItem {
			var out []evalItem
			for _, ex := range loadExamples(t, "pubmedqa/pqa_labeled/train-00000-of-00001.parquet") {
				var ps []string
				for _, c := range ex.Contexts {
					ps = append(ps, passageText(c))
				}
				out = append(out, evalItem{ex.Question, ps, []string{ex.Label}, ""})
			}
			return out
		}, 0.40},
		{"nq_longdoc (109, one long page)", func(t *testing.T) []evalItem {
			var out []evalItem
			for _, ex := range loadExamples(t, "nq_longdoc/validation-00000-of-00001.parquet") {
				var ps []string
				for _, c := range ex.Contexts {
					ps = append(ps, strings.Split(c.Text, "\n")...)
				}
				out = append(out, evalItem{ex.Question, ps, ex.Answers, ""})
			}
			return out
		}, 0.0},
	}
	t.Logf("| dataset | n | EM | F1 | time |")
	t.Logf("|---|---|---|---|---|")
	for _, r := range rows {
		t.Run(strings.Fields(r.name)[0], func(t *testing.T) {
			if testing.Short() && strings.HasPrefix(r.name, "nq_longdoc") {
				t.Skip("the long-document setting takes seconds; skipped with -short")
			}
			items := r.items(t)
			res := runEval(t, b, items)
			t.Logf("| %s | %d | %.1f | %.1f | %s |", r.name, res.n, 100*res.em, 100*res.f1, res.elapsed.Round(time.Millisecond))
			if res.em < r.floor {
				t.Errorf("EM %.3f below the floor %.2f", res.em, r.floor)
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
		out = append(out, evalItem{ex.Question, ps, ex.Answers, ""})
	}
	t.Logf("nq_open: %d questions with an oracle passage, %d without (left out)", len(out), missing)
	return out
}
