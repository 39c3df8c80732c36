package methods_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/ragbench/ragbench/harness/extract"
	"github.com/ragbench/ragbench/harness/llm"
	"github.com/ragbench/ragbench/harness/retrieval"
	"github.com/ragbench/ragbench/methods"
	"github.com/ragbench/ragbench/methods/methodtest"
)

func TestInstrumentCounts(t *testing.T) {
	gen := &methodtest.Generator{Replies: []methodtest.Reply{{Text: "one two three"}, {Text: "four"}, {Err: errors.New("down")}}}
	ret := &methodtest.Retriever{}
	cnt := &methodtest.Counter{Counts: map[string]uint64{"a": 3}}
	ext := &methodtest.Extractor{}
	env, m := methods.Instrument(methods.Env{Generator: gen, Retriever: ret, Counter: cnt, Extractor: ext,
		Retrievers: map[string]retrieval.Retriever{"bm25@4": ret}})
	ctx := context.Background()
	if _, err := env.Generator.Generate(ctx, llm.Request{Prompt: "p q"}); err != nil {
		t.Fatal(err)
	}
	if _, err := env.Generator.Generate(methods.AnswerCall(ctx), llm.Request{Prompt: "p q r"}); err != nil {
		t.Fatal(err)
	}
	if _, err := env.Generator.Generate(ctx, llm.Request{Prompt: "x"}); err == nil {
		t.Fatal("scripted error lost")
	}
	env.Retriever.Retrieve(ctx, "who", 2)
	env.Retrievers["bm25@4"].Retrieve(ctx, "what", 1)
	env.Counter.Count(ctx, "a")
	env.Counter.CoOccur(ctx, "a", "b", 1000)
	env.Extractor.Entities(ctx, "q")
	env.Extractor.Triplets(ctx, "s")
	got := m.Counters()
	want := methods.Counters{Retrievals: 2, Calls: 2, GeneratedTokens: 3, PromptTokens: 2, AnswerCalls: 1, AnswerTokens: 3 + 1,
		NgramQueries: 2, ExtractorCalls: 2}
	if got != want {
		t.Errorf("counters\n got %+v\nwant %+v", got, want)
	}
	r := m.Retrieved()
	if len(r) != 2 || r[0].Query != "who" || r[0].Retriever != "" || len(r[0].IDs) != 2 || r[1].Retriever != "bm25@4" {
		t.Errorf("retrieved %+v", r)
	}
	for _, s := range []methods.Stage{methods.StageLLM, methods.StageRetrieval, methods.StageNgram, methods.StageExtract} {
		if _, ok := m.Timings()[s]; !ok {
			t.Errorf("no time for stage %s", s)
		}
	}
	var _ extract.Extractor = env.Extractor
}

func TestNeed(t *testing.T) {
	env := methods.Env{Generator: &methodtest.Generator{}}
	if err := env.Need("sr-rag", "generator"); err != nil {
		t.Errorf("generator present: %v", err)
	}
	err := env.Need("sr-rag", "generator", "retriever")
	if err == nil || !strings.Contains(err.Error(), "sr-rag needs a retriever") {
		t.Errorf("missing retriever: %v", err)
	}
}

type cfg struct {
	TauEntity float64 `json:"tau_entity"`
	Key       string  `json:"prompt_key"`
}

func TestDecodeSettings(t *testing.T) {
	cases := []struct {
		name     string
		settings map[string]any
		wantErr  string
		want     cfg
	}{
		{"nil settings keep defaults", nil, "", cfg{TauEntity: 1000, Key: "llama-2"}},
		{"known keys decode", map[string]any{"tau_entity": 5, "prompt_key": "new_prompt_v1"}, "", cfg{TauEntity: 5, Key: "new_prompt_v1"}},
		{"misspelt key is named", map[string]any{"tau_entitiy": 5}, `unknown setting "tau_entitiy"`, cfg{}},
		{"wrong type is named in the config's words, not Go's", map[string]any{"tau_entity": "high"}, "setting tau_entity: got text, want a number", cfg{}},
		{"a list where text is wanted", map[string]any{"prompt_key": []any{"a"}}, "setting prompt_key: got a list, want text", cfg{}},
	}
	for _, c := range cases {
		got := cfg{TauEntity: 1000, Key: "llama-2"}
		err := methods.DecodeSettings(c.settings, &got)
		if c.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), c.wantErr) || strings.Contains(err.Error(), "Go ") || strings.Contains(err.Error(), "float64") {
				t.Errorf("%s: err %v, want %q", c.name, err, c.wantErr)
			}
			continue
		}
		if err != nil || got != c.want {
			t.Errorf("%s: got %+v %v, want %+v", c.name, got, err, c.want)
		}
	}
}
