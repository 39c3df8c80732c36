package methods_test

import (
	"context"
	"strings"
	"testing"

	"github.com/ragbench/ragbench/internal/testenv"
	"github.com/ragbench/ragbench/methods"
	"github.com/ragbench/ragbench/methods/methodtest"
	"github.com/ragbench/ragbench/methods/prompts"
)

func TestFinish(t *testing.T) {
	set, err := prompts.Load(testenv.Reference(t, "quco-rag"))
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name, dataset, text   string
		reply                 string
		wantFinal, wantAnswer string
		wantCalls             int
	}{
		{"answer present: no call", "2wikimultihopqa", "X was born in Y. So the answer is Paris.", "", "X was born in Y. So the answer is Paris.", "Paris", 0},
		{"cut at Question: then answer present", "hotpotqa", "So the answer is Rome.\nQuestion: next", "", "So the answer is Rome.\n", "Rome.", 0},
		{"no answer: one completion call", "2wikimultihopqa", "X was born in Y.", " Lyon.\nQuestion: more", "X was born in Y. So the answer is Lyon.\n", "Lyon", 1},
		{"marker at 0 is not cut before completion", "2wikimultihopqa", "Note: x", "Oslo.", "", "", 1},
		{"dataset without exemplars: no call", "nq_open", "Paris", "", "Paris", "Paris", 0},
		{"dataset without a rule of its own: the text after answer is", "nq_open", "It is in France. So the answer is Paris.", "", "It is in France. So the answer is Paris.", "Paris", 0},
	}
	for _, c := range cases {
		gen := &methodtest.Generator{Replies: []methodtest.Reply{{Text: c.reply}}}
		env, m := methods.Instrument(methods.Env{Generator: gen, Prompts: set})
		final, ans, err := methods.Finish(context.Background(), env, c.dataset, "Who?", c.text, methods.DefaultFinish)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if len(gen.Calls()) != c.wantCalls {
			t.Errorf("%s: %d calls, want %d", c.name, len(gen.Calls()), c.wantCalls)
		}
		if c.wantCalls > 0 {
			if m.Counters().AnswerCalls != 1 || m.Counters().Calls != 0 {
				t.Errorf("%s: completion counted as %+v", c.name, m.Counters())
			}
			p := gen.Calls()[0].Prompt
			if !strings.HasPrefix(p, "Question: ") || !strings.Contains(p, "Question: Who?\nAnswer: ") || !strings.HasSuffix(p, " So the answer is ") {
				t.Errorf("%s: completion prompt %q", c.name, p)
			}
			if strings.HasPrefix(p, "Examples:") {
				t.Errorf("%s: completion prompt must not start with Examples:", c.name)
			}
		}
		if c.wantFinal != "" && final != c.wantFinal {
			t.Errorf("%s: final %q, want %q", c.name, final, c.wantFinal)
		}
		if c.wantAnswer != "" && ans != c.wantAnswer {
			t.Errorf("%s: answer %q, want %q", c.name, ans, c.wantAnswer)
		}
	}
}
