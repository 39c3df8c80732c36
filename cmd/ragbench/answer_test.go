package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ragbench/ragbench/harness/llm/llmtest"
	"github.com/ragbench/ragbench/methods"
)

// answerCorpus writes a three-passage DPR TSV corpus.
func answerCorpus(t *testing.T) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "psgs.tsv")
	data := "id\ttext\ttitle\n" +
		"1\tAlpha is a 1990 film directed by Bo Berg.\tAlpha (film)\n" +
		"2\tBo Berg (born 1950 in Oslo) is a Norwegian film director.\tBo Berg\n" +
		"3\tOslo is the capital of Norway.\tOslo\n"
	if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestAnswerCommand(t *testing.T) {
	corpus := answerCorpus(t)
	q := "Where was the director of film Alpha born?"
	for _, m := range []string{"wo-rag", "sr-rag", "fs-rag", "fl-rag", "flare-token", "flare"} {
		var out, errb bytes.Buffer
		args := append([]string{"ragbench", "answer", "--backend", "offline", "--method", m, "--question", q,
			"--dataset", "2wikimultihopqa", "--corpus", corpus}, templatesFlag(t)...)
		if err := run(context.Background(), args, &out, &errb); err != nil {
			t.Fatalf("%s: %v\n%s", m, err, errb.String())
		}
		s := out.String()
		for _, want := range []string{"method: " + m, "generator: offline reader (no LLM)", "answer: ", "counters: #Ret", "trace (", "] answer"} {
			if !strings.Contains(s, want) {
				t.Errorf("%s: output lacks %q:\n%s", m, want, s)
			}
		}
		if m != "wo-rag" && !strings.Contains(s, "] retrieve: retrieve") {
			t.Errorf("%s: no retrieval in the trace:\n%s", m, s)
		}
	}
	// QuCo-RAG gets its counter (an n-gram index built over --corpus) and the rule extractor: the trace
	// shows stage 1's entity counts against the threshold.
	var qout, qerr bytes.Buffer
	args := append([]string{"ragbench", "answer", "--backend", "offline", "--method", "quco", "--question", q,
		"--dataset", "2wikimultihopqa", "--corpus", corpus}, templatesFlag(t)...)
	if err := run(context.Background(), args, &qout, &qerr); err != nil {
		t.Fatalf("quco: %v\n%s", err, qerr.String())
	}
	for _, want := range []string{"method: quco", "] stage1: ", "(threshold 1000)", "n-gram queries ", "extractor calls "} {
		if !strings.Contains(qout.String(), want) {
			t.Errorf("quco: output lacks %q:\n%s", want, qout.String())
		}
	}
	// --json prints the prediction; --set reaches the method.
	var out bytes.Buffer
	args = append([]string{"ragbench", "answer", "--backend", "offline", "--method", "sr-rag", "--question", q,
		"--corpus", corpus, "--set", "top_k=1", "--json"}, templatesFlag(t)...)
	if err := run(context.Background(), args, &out, &bytes.Buffer{}); err != nil {
		t.Fatal(err)
	}
	var p methods.Prediction
	if err := json.Unmarshal(out.Bytes(), &p); err != nil {
		t.Fatalf("--json output: %v\n%s", err, out.String())
	}
	if len(p.Retrieved) != 1 || p.Retrieved[0].K != 1 || len(p.Retrieved[0].IDs) != 1 {
		t.Errorf("--set top_k=1: retrieved %+v", p.Retrieved)
	}
}

func TestAnswerUsage(t *testing.T) {
	corpus := answerCorpus(t)
	cases := []struct {
		args []string
		code int
		want string
	}{
		{[]string{"answer", "--backend", "offline", "--question", "q"}, 2, "needs --method and --question"},
		{[]string{"answer", "--backend", "offline", "--method", "nope", "--question", "q"}, 2, `unknown method "nope"`},
		{[]string{"answer", "--backend", "offline", "--method", "sr-rag", "--question", "q", "--set", "tok_k=2"}, 2, `unknown setting "tok_k"`},
		{[]string{"answer", "--backend", "offline", "--method", "sr-rag", "--question", "q", "--set", "x"}, 2, "want KEY=VALUE"},
		{[]string{"answer", "--backend", "offline", "--method", "sr-rag", "--question", "q", "--index", "a", "--corpus", corpus}, 2, "not both"},
		{append([]string{"answer", "--backend", "offline", "--method", "sr-rag", "--question", "q"}, templatesFlag(t)...), 2, "needs a retriever, and none is configured: give --corpus FILE or --index DIR"},
	}
	for _, c := range cases {
		var errb bytes.Buffer
		err := run(context.Background(), append([]string{"ragbench"}, c.args...), &bytes.Buffer{}, &errb)
		if code := exitCode(err, &errb); code != c.code || !strings.Contains(errb.String(), c.want) {
			t.Errorf("%v: exit %d, stderr %q; want %d and %q", c.args, code, errb.String(), c.code, c.want)
		}
	}
}

// TestAnswerLLMExtractor runs QuCo-RAG with --extractor llm: the prompted extractor finds the authors'
// prompt_templates.json in --templates and asks the generator (the fake server) for the question's
// entities, whose counts stage 1 then checks.
func TestAnswerLLMExtractor(t *testing.T) {
	srv := llmtest.New(t, llmtest.VLLM)
	srv.Reply = func(prompt string) string {
		if strings.Contains(prompt, "Where was the director of film Alpha born?") && strings.Contains(prompt, "entities") {
			return `[["Alpha"], ["Bo Berg"]]` // the authors' format: one row per entity
		}
		return "So the answer is Oslo."
	}
	args := append([]string{"answer", "--method", "quco", "--question", "Where was the director of film Alpha born?",
		"--dataset", "2wikimultihopqa", "--corpus", answerCorpus(t), "--extractor", "llm",
		"--base-url", srv.BaseURL(), "--model", "m", "--api-key-env", "RAGBENCH_TEST_NO_KEY"}, templatesFlag(t)...)
	out, errOut, code := runCLI(t, args...)
	if code != 0 {
		t.Fatalf("exit %d\nstdout %s\nstderr %s", code, out, errOut)
	}
	for _, want := range []string{"] stage1: ", "extractor calls 1", "Bo Berg"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	// Without a templates directory holding prompt_templates.json the llm extractor cannot start.
	_, errOut, code = runCLI(t, "answer", "--backend", "offline", "--method", "quco", "--question", "q",
		"--corpus", answerCorpus(t), "--extractor", "llm", "--templates", t.TempDir())
	if code == 0 || !strings.Contains(errOut, "prompt") {
		t.Errorf("templates directory without prompts: exit %d, stderr %q", code, errOut)
	}
}
