package methods_test

import (
	"context"
	"reflect"
	"strings"
	"testing"

	"github.com/ragbench/ragbench/datasets"
	"github.com/ragbench/ragbench/harness/llm"
	"github.com/ragbench/ragbench/internal/testenv"
	"github.com/ragbench/ragbench/methods"
	"github.com/ragbench/ragbench/methods/prompts"
)

func TestGoldContexts(t *testing.T) {
	examples := []datasets.Example{
		{ID: "a", Question: "q1", Contexts: []datasets.Passage{{Text: "own"}}},
		{ID: "b", Question: "q2"},
		{ID: "c", Question: "q3"},
	}
	oracle := map[string][]datasets.Passage{"q1": {{Text: "oracle1"}}, "q2": {{Text: "oracle2"}}}
	out, oracled, none := methods.GoldContexts(examples, oracle)
	var got [][]string
	for _, ex := range out {
		got = append(got, prompts.Passages(ex))
	}
	want := [][]string{{"own"}, {"oracle2"}, nil}
	cases := []struct {
		ok  bool
		why string
	}{
		{reflect.DeepEqual(got, want), "own context kept, oracle fills an example without, none left empty"},
		{oracled == 1, "one example took oracle passages"},
		{none == 1, "one example is closed-book"},
		{len(examples[1].Contexts) == 0, "the examples are not modified"},
	}
	for _, c := range cases {
		if !c.ok {
			t.Errorf("%s: got %q, %d oracled, %d without", c.why, got, oracled, none)
		}
	}
	if _, oracled, none := methods.GoldContexts(examples, nil); oracled != 0 || none != 2 {
		t.Errorf("no oracle: %d oracled, %d without; want 0 and 2", oracled, none)
	}
}

// recordingGen records the requests it is sent and answers with a fixed text.
type recordingGen struct{ reqs []llm.Request }

func (g *recordingGen) Generate(_ context.Context, req llm.Request) (llm.Response, error) {
	g.reqs = append(g.reqs, req)
	return llm.Response{Text: "Paris is in France. So the answer is Paris."}, nil
}

// TestGoldContextRequest: the prompt holds the example's own passages and the exemplars of its
// dataset; the request is greedy with seed 0, the settings' limits, and the chat form when asked; the
// prediction is the dataset's extraction of the output.
func TestGoldContextRequest(t *testing.T) {
	set, err := prompts.Load(testenv.Reference(t, "quco-rag"))
	if err != nil {
		t.Fatal(err)
	}
	ex := datasets.Example{ID: "1", Dataset: "hotpotqa", Question: "Where is Paris?", Contexts: []datasets.Passage{{Title: "P", Text: "Paris is the capital of France."}}}
	cases := []struct {
		name     string
		settings map[string]any
		check    func(req llm.Request, p methods.Prediction) string
	}{
		{"defaults", nil, func(req llm.Request, p methods.Prediction) string {
			switch {
			case req.Endpoint != llm.Completions || !strings.Contains(req.Prompt, "[1] Paris is the capital of France.") || !strings.HasSuffix(req.Prompt, "Question: Where is Paris?\nAnswer:"):
				return "a completion with the example's passage and the question last"
			case req.Seed == nil || *req.Seed != 0 || req.Temperature != 0 || req.MaxTokens != 256 || !reflect.DeepEqual(req.Stop, []string{"\n"}):
				return "greedy, seed 0, 256 tokens, stop at a newline"
			case req.Prompt != goldPromptOf(t, set, "hotpotqa", ex):
				return "HotpotQA's exemplars at the authors' count, the passage, the question"
			case p.Answer != "Paris." || p.Raw != "Paris is in France. So the answer is Paris.":
				return "the HotpotQA rule keeps the full stop; raw output as generated"
			}
			return ""
		}},
		{"chat, no exemplars, 2Wiki rule", map[string]any{"chat": true, "exemplars": "none", "extract": "quco-2wiki", "max_tokens": 9, "stop": []string{"X"}}, func(req llm.Request, p methods.Prediction) string {
			switch {
			case req.Endpoint != llm.Chat || req.Prompt != "" || len(req.Messages) != 1 || req.Messages[0].Role != "user":
				return "one user message"
			case req.Messages[0].Content != goldPromptOf(t, set, "", ex) || req.MaxTokens != 9 || !reflect.DeepEqual(req.Stop, []string{"X"}):
				return "no exemplars, the settings' limits"
			case p.Answer != "Paris":
				return "the 2Wiki rule drops the full stop"
			}
			return ""
		}},
	}
	for _, c := range cases {
		m, err := methods.New("gold-context", c.settings)
		if err != nil {
			t.Fatal(err)
		}
		g := &recordingGen{}
		p, err := m.Answer(context.Background(), methods.Env{Generator: g, Prompts: set}, ex)
		if err != nil || len(g.reqs) != 1 {
			t.Fatalf("%s: %v, %d requests", c.name, err, len(g.reqs))
		}
		if why := c.check(g.reqs[0], p); why != "" {
			t.Errorf("%s: want %s; request %+v, prediction %+v", c.name, why, g.reqs[0], p)
		}
	}
	for _, bad := range []map[string]any{{"shots": -2}, {"max_tokens": 0}, {"extract": "magic"}, {"temperature": 1}} {
		if _, err := methods.New("gold-context", bad); err == nil {
			t.Errorf("settings %v accepted", bad)
		}
	}
}

// goldPromptOf is the prompt of ex with exemplar set exemplars at the authors' count and ex's own passages.
func goldPromptOf(t *testing.T, set *prompts.Set, exemplars string, ex datasets.Example) string {
	b, err := set.Builder(prompts.Options{Exemplars: exemplars, Shots: -1})
	if err != nil {
		t.Fatal(err)
	}
	return b.Build(ex.Question, prompts.Passages(ex))
}
