package prompts

import (
	"strings"
	"testing"

	"github.com/ragbench/ragbench/internal/testenv"
)

func TestTemplates(t *testing.T) {
	s, err := Load(testenv.Reference(t, "quco-rag"))
	if err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{"llama-2", "new_prompt_v1", "new_prompt_v3", "default"} {
		tm, err := s.Template(key)
		if err != nil {
			t.Fatalf("%s: %v", key, err)
		}
		if !strings.Contains(tm.Hallucination.DocFormat, "{doc}") || !strings.Contains(tm.Initial.DocFormat, "{doc}") {
			t.Errorf("%s: doc formats %q %q", key, tm.Initial.DocFormat, tm.Hallucination.DocFormat)
		}
	}
	if _, err := s.Template("no-such"); err == nil || !strings.Contains(err.Error(), "llama-2") {
		t.Errorf("unknown key error should list the keys: %v", err)
	}
	tm, _ := s.Template("llama-2")
	if got, want := tm.Initial.Docs([]string{"a", "b"}), "\nContext:\n[1] a\n[2] b\n\n"; got != want {
		t.Errorf("Docs = %q, want %q", got, want)
	}
	exs, err := s.Exemplars("2wikimultihopqa", -1)
	if err != nil || len(exs) != 6 {
		t.Fatalf("2wiki exemplars: %d %v", len(exs), err)
	}
	d := s.Demo(exs[0])
	if !strings.HasPrefix(d, "Question: ") || !strings.Contains(d, "\nAnswer: ") || !strings.HasSuffix(d, ".") || !strings.Contains(d, " So the answer is ") {
		t.Errorf("demo %q", d)
	}
	if c := s.Case("hotpotqa", "Q?"); !strings.HasSuffix(c, "Question: Q?\nAnswer:") || !strings.Contains(c, "\n") {
		t.Errorf("hotpot case %q", c)
	}
	if c := s.Case("", "Q?"); c != "Question: Q?\nAnswer:" {
		t.Errorf("plain case %q", c)
	}
}
