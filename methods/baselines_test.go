package methods_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/ragbench/ragbench/datasets"
	"github.com/ragbench/ragbench/harness/llm"
	"github.com/ragbench/ragbench/internal/testenv"
	"github.com/ragbench/ragbench/methods"
	"github.com/ragbench/ragbench/methods/methodtest"
	"github.com/ragbench/ragbench/methods/prompts"
)

// scripted is one fidelity scenario: a method with settings, a question, the generator's replies in
// order (the answer-completion call answers completion), and the expected counters and queries.
type scripted struct {
	name       string // golden file: testdata/DIR/NAME.golden
	method     string
	settings   map[string]any
	dataset    string
	replies    []methodtest.Reply
	completion string
	genName    string
	noLogprobs bool

	wantCalls, wantRet, wantAnswerCalls int
	wantQueries                         []string
	wantAnswer                          string
	wantErr                             string
	wantStop                            string // a substring of the last stop event's reason
	wantKinds                           []string
}

const blQuestion = "Where was the director of film Alpha born?"

func blLoadSet(t *testing.T) *prompts.Set {
	t.Helper()
	set, err := prompts.Load(testenv.Reference(t, "quco-rag"))
	if err != nil {
		t.Fatal(err)
	}
	return set
}

// runScripted runs one scenario and returns the golden text of its calls, queries, counters and trace.
func runScripted(t *testing.T, set *prompts.Set, sc scripted) (methods.Prediction, *methodtest.Generator, *methodtest.Retriever, error) {
	t.Helper()
	gen := &methodtest.Generator{Replies: sc.replies, NoLogprobs: sc.noLogprobs}
	gen.Match = func(req llm.Request) (methodtest.Reply, bool) {
		if strings.HasSuffix(req.Prompt, " So the answer is ") {
			return methodtest.Reply{Text: sc.completion}, true
		}
		return methodtest.Reply{}, false
	}
	ret := &methodtest.Retriever{}
	m, err := methods.New(sc.method, sc.settings)
	if err != nil {
		t.Fatalf("%s: %v", sc.name, err)
	}
	name := sc.genName
	if name == "" {
		name = "scripted generator"
	}
	env, meter := methods.Instrument(methods.Env{Generator: gen, GeneratorName: name, Retriever: ret, Prompts: set})
	ds := sc.dataset
	if ds == "" {
		ds = "2wikimultihopqa"
	}
	p, err := m.Answer(context.Background(), env, datasets.Example{ID: "q1", Dataset: ds, Question: blQuestion})
	meter.Fill(&p)
	return p, gen, ret, err
}

// redactor replaces the authors' exemplars and template text in prompts by placeholders, so that
// golden files hold none of their text.
func redactor(t *testing.T, set *prompts.Set) func(string) string {
	type rep struct{ from, to string }
	var reps []rep
	for _, ds := range []string{"2wikimultihopqa", "hotpotqa"} {
		exs, err := set.Exemplars(ds, -1)
		if err != nil {
			t.Fatal(err)
		}
		var b strings.Builder
		for _, e := range exs {
			b.WriteString(set.Demo(e) + "\n")
		}
		reps = append(reps, rep{b.String(), fmt.Sprintf("<DEMOS %s x%d>\n", ds, len(exs))})
		c := set.Case(ds, "Q")
		if pre, _, ok := strings.Cut(c, "Question: Q"); ok && pre != "" {
			reps = append(reps, rep{pre, fmt.Sprintf("<CASE-PREFIX %s>", ds)})
		}
	}
	// Template text of a sentence or more (instructions, long headers); short headers such as
	// "Context:" stay readable. A text shared by several fields names them all.
	names := map[string][]string{}
	for _, key := range set.TemplateKeys() {
		tm, _ := set.Template(key)
		for name, sec := range map[string]prompts.Section{"initial": tm.Initial, "hallucination": tm.Hallucination} {
			for field, v := range map[string]string{"context_header": sec.Header, "instruction": sec.Instruction, "post_doc": sec.PostDoc} {
				if len(strings.TrimSpace(v)) >= 20 {
					names[v] = append(names[v], key+"."+name+"."+field)
				}
			}
		}
	}
	for v, ns := range names {
		sort.Strings(ns)
		reps = append(reps, rep{v, "<" + strings.Join(ns, "=") + ">"})
	}
	sort.SliceStable(reps, func(i, j int) bool {
		if len(reps[i].from) != len(reps[j].from) {
			return len(reps[i].from) > len(reps[j].from)
		}
		return reps[i].to < reps[j].to
	})
	return func(s string) string {
		for _, r := range reps {
			s = strings.ReplaceAll(s, r.from, r.to)
		}
		return s
	}
}

func blGolden(t *testing.T, set *prompts.Set, dir string, sc scripted, p methods.Prediction, gen *methodtest.Generator, ret *methodtest.Retriever, runErr error) {
	t.Helper()
	red := redactor(t, set)
	var b strings.Builder
	ds := sc.dataset
	if ds == "" {
		ds = "2wikimultihopqa"
	}
	fmt.Fprintf(&b, "method %s, settings %v, dataset %s\n", sc.method, sc.settings, ds)
	for i, c := range gen.Calls() {
		fmt.Fprintf(&b, "=== generator call %d: max_tokens=%d logprobs=%d stop=%q\n%s\n=== end of prompt %d\n", i+1, c.MaxTokens, c.Logprobs, c.Stop, red(c.Prompt), i+1)
	}
	for i, q := range ret.Queries() {
		fmt.Fprintf(&b, "retriever query %d: %q\n", i+1, q)
	}
	if runErr != nil {
		fmt.Fprintf(&b, "error: %v\n", runErr)
	}
	if err := methods.FormatTrace(&b, p); err != nil {
		t.Fatal(err)
	}
	got := b.String()
	path := filepath.Join("testdata", dir, sc.name+".golden")
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%s: %v (run go test -update to create it)", sc.name, err)
	}
	if string(want) != got {
		t.Errorf("%s: output differs from %s (go test -update rewrites it):\n%s", sc.name, path, blLineDiff(string(want), got))
	}
}

func blLineDiff(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	for i := 0; i < max(len(w), len(g)); i++ {
		var a, b string
		if i < len(w) {
			a = w[i]
		}
		if i < len(g) {
			b = g[i]
		}
		if a != b {
			return fmt.Sprintf("first difference at line %d:\nwant %q\ngot  %q", i+1, a, b)
		}
	}
	return "(no line differs)"
}

func checkScripted(t *testing.T, set *prompts.Set, dir string, sc scripted) methods.Prediction {
	t.Helper()
	p, gen, ret, err := runScripted(t, set, sc)
	switch {
	case sc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), sc.wantErr)):
		t.Errorf("%s: error %v, want one containing %q", sc.name, err, sc.wantErr)
	case sc.wantErr == "" && err != nil:
		t.Errorf("%s: %v", sc.name, err)
	}
	c := p.Counters
	if c.Calls != sc.wantCalls || c.Retrievals != sc.wantRet || c.AnswerCalls != sc.wantAnswerCalls {
		t.Errorf("%s: #Call %d #Ret %d answer calls %d, want %d %d %d", sc.name, c.Calls, c.Retrievals, c.AnswerCalls, sc.wantCalls, sc.wantRet, sc.wantAnswerCalls)
	}
	if q := ret.Queries(); sc.wantQueries != nil && strings.Join(q, "|") != strings.Join(sc.wantQueries, "|") {
		t.Errorf("%s: queries %q, want %q", sc.name, q, sc.wantQueries)
	}
	if sc.wantErr == "" && p.Answer != sc.wantAnswer {
		t.Errorf("%s: answer %q, want %q", sc.name, p.Answer, sc.wantAnswer)
	}
	if gen.Remaining() != 0 {
		t.Errorf("%s: %d scripted replies unused", sc.name, gen.Remaining())
	}
	if sc.wantStop != "" {
		last := ""
		for _, e := range p.Trace {
			if e.Kind == "stop" {
				last = e.Reason
			}
		}
		if !strings.Contains(last, sc.wantStop) {
			t.Errorf("%s: stop reason %q, want %q", sc.name, last, sc.wantStop)
		}
	}
	if sc.wantKinds != nil {
		var kinds []string
		for _, e := range p.Trace {
			kinds = append(kinds, e.Kind)
		}
		if strings.Join(kinds, ",") != strings.Join(sc.wantKinds, ",") {
			t.Errorf("%s: event kinds %v, want %v", sc.name, kinds, sc.wantKinds)
		}
	}
	want := 0.0
	if c.Retrievals > 0 {
		want = 1
	}
	if p.Signals["retrieved"] != want {
		t.Errorf("%s: signal retrieved %v with %d retrievals", sc.name, p.Signals["retrieved"], c.Retrievals)
	}
	blGolden(t, set, dir, sc, p, gen, ret, err)
	return p
}

func blReply(s string) methodtest.Reply { return methodtest.Reply{Text: s} }

func TestBaselinesScripted(t *testing.T) {
	set := blLoadSet(t)
	cases := []scripted{
		{name: "wo-rag", method: "wo-rag", replies: []methodtest.Reply{blReply(" Alpha was directed by Bo. Bo was born in Oslo. So the answer is Oslo.")},
			wantCalls: 1, wantRet: 0, wantQueries: []string{}, wantAnswer: "Oslo",
			wantKinds: []string{"question", "generate", "answer"}},
		{name: "wo-rag-hotpotqa-completion", method: "wo-rag", dataset: "hotpotqa", replies: []methodtest.Reply{blReply(" Alpha was directed by Bo.\n\nQuestion: next?")},
			completion: "Oslo.", wantCalls: 1, wantAnswerCalls: 1, wantAnswer: "Oslo."},
		{name: "wo-rag-quco-runner", method: "wo-rag", settings: map[string]any{"runner": "quco", "prompt_key": "new_prompt_v1"},
			replies:   []methodtest.Reply{blReply(" Sure, here is the answer.\nAlpha was directed by Bo.\n\nBo was born in Oslo. So the answer is Oslo.")},
			wantCalls: 1, wantRet: 0, wantQueries: []string{}, wantAnswer: "Oslo",
			wantKinds: []string{"question", "generate", "filter", "answer"}},
		{name: "wo-rag-quco-runner-completion", method: "wo-rag", dataset: "hotpotqa", settings: map[string]any{"runner": "quco"},
			replies: []methodtest.Reply{blReply("Certainly! Alpha was directed by Bo.")}, completion: "Oslo.",
			wantCalls: 1, wantAnswerCalls: 1, wantAnswer: "Oslo."},
		{name: "sr-rag", method: "sr-rag", replies: []methodtest.Reply{blReply(" Bo was born in Oslo. So the answer is Oslo.")},
			wantCalls: 1, wantRet: 1, wantQueries: []string{blQuestion}, wantAnswer: "Oslo"},
		{name: "sr-rag-new_prompt_v1-top2", method: "sr-rag", settings: map[string]any{"prompt_key": "new_prompt_v1", "top_k": 2},
			replies: []methodtest.Reply{blReply(" So the answer is Oslo.")}, wantCalls: 1, wantRet: 1, wantAnswer: "Oslo"},
		{name: "fs-rag-answer-stop", method: "fs-rag",
			replies: []methodtest.Reply{blReply(" Alpha was directed by Bo. Bo was born in Rome."), blReply(" Bo was born in Oslo. So the answer is Rome."),
				blReply(" So the answer is Oslo. More text.")},
			wantCalls: 3, wantRet: 3, wantQueries: []string{blQuestion, "Alpha was directed by Bo.", "Bo was born in Oslo."}, wantAnswer: "Oslo",
			wantStop: `"the answer is"`},
		{name: "fs-rag-length-stop", method: "fs-rag", settings: map[string]any{"generate_max_length": 8},
			replies:    []methodtest.Reply{blReply(" one two three four five. six."), blReply(" seven eight nine ten. eleven.")},
			completion: "ten.", wantCalls: 2, wantRet: 2, wantAnswerCalls: 1, wantQueries: []string{blQuestion, "one two three four five."},
			wantAnswer: "ten", wantStop: "length: 11 tokens > 8"},
		{name: "fs-rag-question-stop", method: "fs-rag",
			replies:    []methodtest.Reply{blReply("Alpha, Question: who? More.")},
			completion: "Bo.", wantCalls: 1, wantRet: 1, wantAnswerCalls: 1, wantAnswer: "Bo", wantStop: `"Question:"`},
		{name: "fs-rag-empty", method: "fs-rag", replies: []methodtest.Reply{blReply("  ")}, completion: "Bo.",
			wantCalls: 1, wantRet: 1, wantAnswerCalls: 1, wantAnswer: "Bo", wantStop: "empty generation"},
		{name: "fl-rag-no-growth", method: "fl-rag", settings: map[string]any{"fix_length": 4},
			replies:    []methodtest.Reply{blReply(" Alpha was directed by"), blReply("")},
			completion: "Bo.", wantCalls: 2, wantRet: 2, wantAnswerCalls: 1, wantQueries: []string{blQuestion, "Alpha was directed by"},
			wantAnswer: "Bo", wantStop: "no growth"},
		{name: "fl-rag-answer-stop", method: "fl-rag", settings: map[string]any{"fix_length": 4},
			replies:   []methodtest.Reply{blReply(" Bo was born in"), blReply(" Oslo. So the answer is Oslo.")},
			wantCalls: 2, wantRet: 2, wantQueries: []string{blQuestion, "Bo was born in"},
			wantAnswer: "Oslo", wantStop: `"the answer is"`},
	}
	for _, sc := range cases {
		t.Run(sc.name, func(t *testing.T) { checkScripted(t, set, "baselines", sc) })
	}
}

func TestBaselineSettings(t *testing.T) {
	cases := []struct {
		method   string
		settings map[string]any
		wantErr  string
		why      string
	}{
		{"wo-rag", map[string]any{"top_k": 3}, "unknown setting \"top_k\"", "wo-rag does not retrieve"},
		{"wo-rag", map[string]any{"runner": "main"}, "runner \"main\"", "the authors' runners are baselines and quco"},
		{"sr-rag", map[string]any{"fix_length": 3}, "unknown setting \"fix_length\"", "only fl-rag has fix_length"},
		{"fl-rag", map[string]any{"fix_length": 0}, "fix_length 0", "a step must generate"},
		{"fs-rag", map[string]any{"top_k": 0}, "top_k 0", "retrieval needs k >= 1"},
		{"fs-rag", map[string]any{"prompt_key": ""}, "prompt_key is empty", "a template is needed"},
		{"flare-token", map[string]any{"sentence_solver": "median"}, "sentence_solver", "only avg, max, min"},
		{"flare-token", map[string]any{"hallucination_threshold": 1.5}, "hallucination_threshold", "a probability"},
		{"flare", map[string]any{"look_ahead_steps": 0}, "look_ahead_steps 0", "a look-ahead needs tokens"},
		{"flare", map[string]any{"generate_max_length": 10}, "unknown setting", "official FLARE bounds by max_generation_len"},
		{"sr-rag", map[string]any{"answer_completion_max_tokens": 20}, "", "DRAGIN's 20-token completion"},
	}
	for _, c := range cases {
		_, err := methods.New(c.method, c.settings)
		if c.wantErr == "" {
			if err != nil {
				t.Errorf("%s %v (%s): %v", c.method, c.settings, c.why, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), c.wantErr) {
			t.Errorf("%s %v (%s): error %v, want %q", c.method, c.settings, c.why, err, c.wantErr)
		}
	}
	// Settings shows the defaults.
	m, err := methods.New("fl-rag", nil)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(m.(methods.Configured).Settings())
	want := `{"prompt_key":"llama-2","shots":-1,"generate_max_length":128,"answer_completion":true,"answer_completion_max_tokens":128,"top_k":3,"fix_length":32}`
	if string(b) != want {
		t.Errorf("fl-rag settings %s, want %s", b, want)
	}
}

func TestBaselineBadInput(t *testing.T) {
	set := blLoadSet(t)
	// An unknown prompt key is an error that lists the keys.
	m, err := methods.New("sr-rag", map[string]any{"prompt_key": "nope"})
	if err != nil {
		t.Fatal(err)
	}
	env, _ := methods.Instrument(methods.Env{Generator: &methodtest.Generator{}, Retriever: &methodtest.Retriever{}, Prompts: set})
	_, err = m.Answer(context.Background(), env, datasets.Example{Dataset: "2wikimultihopqa", Question: "q"})
	if err == nil || !strings.Contains(err.Error(), `no prompt template "nope"`) || !strings.Contains(err.Error(), "llama-2") {
		t.Errorf("unknown prompt key: %v", err)
	}
	// A missing retriever is named.
	env, _ = methods.Instrument(methods.Env{Generator: &methodtest.Generator{}, Prompts: set})
	m, _ = methods.New("fs-rag", nil)
	if _, err = m.Answer(context.Background(), env, datasets.Example{Question: "q"}); err == nil || !strings.Contains(err.Error(), "needs a retriever") {
		t.Errorf("missing retriever: %v", err)
	}
	// A retriever that fails mid-question: the error names the query, the partial trace is kept.
	gen := &methodtest.Generator{Replies: []methodtest.Reply{blReply(" A is B. C.")}}
	env, _ = methods.Instrument(methods.Env{Generator: gen, Retriever: &methodtest.Retriever{Err: fmt.Errorf("index closed")}, Prompts: set})
	p, err := m.Answer(context.Background(), env, datasets.Example{Question: "q", Dataset: "2wikimultihopqa"})
	if err == nil || !strings.Contains(err.Error(), "index closed") || len(p.Trace) == 0 {
		t.Errorf("retriever error: %v, trace %d events", err, len(p.Trace))
	}
	// Shots asked on a dataset without exemplars.
	m, _ = methods.New("wo-rag", map[string]any{"shots": 2})
	env, _ = methods.Instrument(methods.Env{Generator: &methodtest.Generator{}, Prompts: set})
	if _, err = m.Answer(context.Background(), env, datasets.Example{Question: "q", Dataset: "nq_open"}); err == nil || !strings.Contains(err.Error(), "no exemplar set") {
		t.Errorf("shots without exemplars: %v", err)
	}
}
