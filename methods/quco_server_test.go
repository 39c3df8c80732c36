package methods_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/ragbench/ragbench/harness/llm"
	"github.com/ragbench/ragbench/harness/llm/llmtest"
	"github.com/ragbench/ragbench/harness/llm/offline"
	"github.com/ragbench/ragbench/methods"
)

// TestQuCoAgainstServer runs QuCo-RAG against an in-process OpenAI-compatible server answering with
// the real vLLM JSON (logprobs included), with the llm cache on; a second run in replay-only mode makes
// no server call and gives identical records.
func TestQuCoAgainstServer(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end run")
	}
	f := loadQuFixture(t)
	exs := append(f.examples["2wikimultihopqa"][:4:4], f.examples["hotpotqa"][:4]...)
	reader := offline.New(offline.Options{})
	srv := llmtest.New(t, llmtest.VLLM)
	srv.Reply = func(prompt string) string {
		resp, err := reader.Generate(context.Background(), llm.Request{Endpoint: llm.Completions, Prompt: prompt})
		if err != nil {
			return ""
		}
		return resp.Text
	}
	t.Setenv(llm.EnvAPIKey, "test-key-not-secret")
	cache := filepath.Join(t.TempDir(), "llm.sqlite")
	// A strict stage 2 makes some questions regenerate, so the replay covers more than one call each.
	m, err := methods.New("quco", map[string]any{"tau_cooc": 1e9, "tau_head": 1e9})
	if err != nil {
		t.Fatal(err)
	}
	run := func(mode llm.CacheMode) []string {
		client, err := llm.New(llm.Config{Backend: "openai", BaseURL: srv.BaseURL(), Model: "allenai/OLMo-2-1124-7B-Instruct",
			MaxRetries: -1, Cache: llm.CacheConfig{Path: cache, Mode: mode}})
		if err != nil {
			t.Fatal(err)
		}
		defer client.Close()
		var out []string
		for _, ex := range exs {
			env := f.env(client)
			env.GeneratorName = "vLLM test server"
			env.Tokenizer = client // lengths and query cuts through the server's /tokenize, cached for the replay
			ienv, meter := methods.Instrument(env)
			p, err := m.Answer(context.Background(), ienv, ex)
			meter.Fill(&p)
			if err != nil {
				t.Fatalf("%s: %v", ex.ID, err)
			}
			if mode == llm.CacheReplayOnly && p.Counters.LLMCacheHits != p.Counters.Calls+p.Counters.AnswerCalls {
				t.Errorf("%s: replay counters %+v: every call must be a cache hit", ex.ID, p.Counters)
			}
			if p.Signals["approx_lengths"] != 0 {
				t.Errorf("%s: %v length(s) approximated with the server's /tokenize there", ex.ID, p.Signals["approx_lengths"])
			}
			p.Counters.LLMCacheHits = 0
			b, _ := json.Marshal(p)
			out = append(out, string(b))
		}
		return out
	}
	first := run(llm.CacheReadWrite)
	calls, toks := srv.Count(), srv.TokenizeCount()
	if toks == 0 {
		t.Error("no /tokenize request: lengths were not measured with the server's tokenizer")
	}
	if calls < int64(len(exs)) {
		t.Fatalf("the first run made %d server calls for %d questions", calls, len(exs))
	}
	second := run(llm.CacheReplayOnly)
	if srv.Count() != calls || srv.TokenizeCount() != toks {
		t.Errorf("the replay made %d server call(s) and %d tokenize request(s)", srv.Count()-calls, srv.TokenizeCount()-toks)
	}
	for i := range first {
		if first[i] != second[i] {
			t.Errorf("%s: the replayed record differs:\n%s\n%s", exs[i].ID, first[i], second[i])
		}
	}
	t.Logf("%d server calls for %d questions; replay: 0", calls, len(exs))
}
