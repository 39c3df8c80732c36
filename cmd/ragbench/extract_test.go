package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/urfave/cli/v2"

	"github.com/ragbench/ragbench/harness/llm"
	"github.com/ragbench/ragbench/harness/llm/llmtest"
	"github.com/ragbench/ragbench/internal/testenv"
)

// cannedGen answers every request with the same text and records the prompts.
type cannedGen struct {
	out     string
	prompts []string
}

func (g *cannedGen) Generate(_ context.Context, req llm.Request) (llm.Response, error) {
	p := req.Prompt
	if len(req.Messages) > 0 {
		p = req.Messages[len(req.Messages)-1].Content // chat, the default format
	}
	g.prompts = append(g.prompts, p)
	return llm.Response{Text: g.out}, nil
}

func TestExtractCommand(t *testing.T) {
	dir := t.TempDir()
	tmpl := filepath.Join(dir, "templates.json")
	if err := os.WriteFile(tmpl, []byte(`{"entity_extraction_prompt": "S: {}\nentities:", "entity_extraction_prompt_for_question": "Q: {}\nentities:"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	refDir := t.TempDir() // a reference folder holding prompt_templates.json
	if b, err := os.ReadFile(tmpl); err != nil || os.WriteFile(filepath.Join(refDir, "prompt_templates.json"), b, 0o644) != nil {
		t.Fatal(err)
	}
	gen := &cannedGen{out: `[["Kumbasaram", "released in", "2017"]]`}
	old := extractGenerator
	extractGenerator = func(*cli.Context) (llm.Generator, func() error, error) { return gen, func() error { return nil }, nil }
	defer func() { extractGenerator = old }()

	cases := []struct {
		name string
		args []string
		code int
		want []string // substrings of stdout (or stderr when code != 0)
	}{
		{"rule backend on a sentence", []string{"extract", "--sentence", "Kumbasaram was released in 2017."}, 0, []string{"triple\tKumbasaram\treleased in\t2017\n"}},
		{"rule backend on a question gives entities and pairs", []string{"extract", "-q", "Where did Diane Meyer Simon's husband graduate from?"}, 0, []string{"entity\tDiane Meyer Simon\n", "pair\tDiane Meyer Simon\thusband\n"}},
		{"llm backend parses the model's list", []string{"extract", "--backend", "llm", "--templates", tmpl, "-s", "Kumbasaram was released in 2017."}, 0, []string{"triple\tKumbasaram\treleased in\t2017\n"}},
		{"json output", []string{"extract", "--json", "-s", "Kumbasaram was released in 2017."}, 0, []string{`"triplets"`, `"tail": "2017"`}},
		{"neither flag is a usage error", []string{"extract"}, 2, []string{"exactly one"}},
		{"both flags are a usage error", []string{"extract", "-q", "a?", "-s", "b."}, 2, []string{"exactly one"}},
		{"llm with a templates folder lacking prompt_templates.json fails naming it", []string{"extract", "--backend", "llm", "--templates", t.TempDir(), "-s", "b."}, 1, []string{"prompt_templates.json", "--templates"}},
		{"--templates takes the reference folder, as for predict", []string{"extract", "--backend", "llm", "--templates", refDir, "-s", "Kumbasaram was released in 2017."}, 0, []string{"triple\tKumbasaram\treleased in\t2017\n"}},
		{"--format json replaces --json", []string{"extract", "--format", "json", "-s", "Kumbasaram was released in 2017."}, 0, []string{`"triplets"`}},
		{"an unknown backend is a usage error", []string{"extract", "--backend", "magic", "-s", "b."}, 2, []string{"unknown --backend"}},
		{"an unknown output format is a usage error", []string{"extract", "--format", "xml", "-s", "b."}, 2, []string{"--format \"xml\""}},
		{"an unknown prompt format is a usage error", []string{"extract", "--backend", "llm", "--templates", tmpl, "--prompt-format", "xml", "-s", "b."}, 2, []string{"unknown --prompt-format"}},
		{"a missing template file is a failure", []string{"extract", "--backend", "llm", "--templates", filepath.Join(dir, "none.json"), "-s", "b."}, 1, []string{"none.json"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			out, errOut, code := runCLI(t, tc.args...)
			if code != tc.code {
				t.Fatalf("exit %d, want %d (stdout %q, stderr %q)", code, tc.code, out, errOut)
			}
			got := out
			if code != 0 {
				got = errOut
			}
			for _, w := range tc.want {
				if !strings.Contains(got, w) {
					t.Fatalf("output %q lacks %q", got, w)
				}
			}
		})
	}
	// Two llm cases ran: --templates as a file and as the reference folder; both fill the same template.
	if len(gen.prompts) != 2 || gen.prompts[0] != "S: Kumbasaram was released in 2017.\nentities:" || gen.prompts[1] != gen.prompts[0] {
		t.Fatalf("llm prompts %q", gen.prompts)
	}
	out, _, _ := runCLI(t, "extract", "--json", "-q", "Which film came out first, Kumbasaram or Mystery Of The 13Th Guest?")
	var res extractResult
	if err := json.Unmarshal([]byte(out), &res); err != nil || len(res.Entities) != 2 || len(res.Pairs) != 2 {
		t.Fatalf("json %q: %+v %v", out, res, err)
	}
}

// TestExtractCommandAgainstServer runs the llm extractor end to end against the in-process
// OpenAI-compatible fake server, in the raw and chat formats, with the authors' templates when
// present.
func TestExtractCommandAgainstServer(t *testing.T) {
	tmpl := testenv.Reference(t, "quco-rag/prompt_templates.json")
	srv := llmtest.New(t, llmtest.VLLM)
	srv.Reply = func(prompt string) string {
		if strings.Contains(prompt, "Kumbasaram was released in 2017.") {
			return "[[\"Kumbasaram\", \"released in\", \"2017\"]]\n\n**Example 15:**"
		}
		return "[]"
	}
	for _, format := range []string{"raw", "chat", "chatml"} {
		t.Run(format, func(t *testing.T) {
			flag := "--prompt-format"
			if format == "raw" {
				flag = "--format" // the deprecated spelling still works
			}
			out, errOut, code := runCLI(t, "extract", "--backend", "llm", "--templates", tmpl, flag, format,
				"--base-url", srv.BaseURL(), "--model", "m", "--api-key-env", "RAGBENCH_TEST_NO_KEY", "-s", "Kumbasaram was released in 2017.")
			if code != 0 || out != "triple\tKumbasaram\treleased in\t2017\n" {
				t.Fatalf("exit %d stdout %q stderr %q", code, out, errOut)
			}
		})
	}
	reqs := srv.Requests()
	if len(reqs) != 3 {
		t.Fatalf("%d requests, want 3", len(reqs))
	}
}

func TestLLMCommandOfflineBackend(t *testing.T) {
	out, errOut, code := runCLI(t, "llm", "complete", "--backend", "offline", "--logprobs", "0",
		"--prompt", "Context:\n[1] Paris is the capital of France.\n\nQuestion: What is the capital of France?\nAnswer:")
	if code != 0 || !strings.Contains(out, "So the answer is Paris.") {
		t.Fatalf("exit %d stdout %q stderr %q", code, out, errOut)
	}
}
