package methods_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ragbench/ragbench/datasets"
	"github.com/ragbench/ragbench/harness/retrieval"
	"github.com/ragbench/ragbench/methods/methodtest"
	"github.com/ragbench/ragbench/methods/prompts"

	"github.com/ragbench/ragbench/harness/llm"
	"github.com/ragbench/ragbench/harness/llm/llmtest"
	"github.com/ragbench/ragbench/harness/llm/offline"
	"github.com/ragbench/ragbench/methods"
)

// TestBaselinesAgainstServer runs every baseline and both FLARE variants against an in-process
// OpenAI-compatible server answering in the JSON of vLLM, the llama.cpp server and OpenAI (completions
// with logprobs and usage; the text is the offline reader's answer to the prompt, the
// log-probabilities llmtest's fixed falling ones) through the full llm client with its response cache,
// then runs them again: the second run must make no server call and give the same records, every call
// a cache hit.
func TestBaselinesAgainstServer(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end run")
	}
	set := blLoadSet(t)
	ds, ix := openE2E(t, e2eSets[0])
	for _, flavor := range llmtest.Flavors {
		t.Run(string(flavor), func(t *testing.T) { againstServer(t, set, ds.Examples[:5], ix, flavor) })
	}
}

func againstServer(t *testing.T, set *prompts.Set, exs []datasets.Example, ix retrieval.Retriever, flavor llmtest.Flavor) {
	reader := offline.New(offline.Options{})
	srv := llmtest.New(t, flavor)
	srv.Reply = func(prompt string) string {
		resp, err := reader.Generate(context.Background(), llm.Request{Endpoint: llm.Completions, Prompt: prompt})
		if err != nil {
			return ""
		}
		return resp.Text
	}
	t.Setenv(llm.EnvAPIKey, "test-key-not-secret")
	cache := filepath.Join(t.TempDir(), "llm.sqlite")
	run := func(mode llm.CacheMode) (map[string][]byte, map[string]methods.Counters) {
		client, err := llm.New(llm.Config{Backend: "openai", BaseURL: srv.BaseURL(), Model: "Qwen/Qwen2.5-7B-Instruct",
			MaxRetries: -1, Cache: llm.CacheConfig{Path: cache, Mode: mode}})
		if err != nil {
			t.Fatal(err)
		}
		defer client.Close()
		recs := map[string][]byte{}
		cnt := map[string]methods.Counters{}
		for _, name := range baselineMethods {
			m, err := methods.New(name, nil)
			if err != nil {
				t.Fatal(err)
			}
			for _, ex := range exs {
				env, meter := methods.Instrument(methods.Env{Generator: client, GeneratorName: "vLLM test server", Retriever: ix, Prompts: set})
				p, err := m.Answer(context.Background(), env, ex)
				meter.Fill(&p)
				if err != nil {
					t.Fatalf("%s %s: %v", name, ex.ID, err)
				}
				checkCounters(t, "2wikimultihopqa", name, ex, p)
				key := name + "/" + ex.ID
				cnt[key] = p.Counters
				p.Counters.LLMCacheHits = 0
				b, err := json.Marshal(p)
				if err != nil {
					t.Fatal(err)
				}
				recs[key] = b
			}
		}
		return recs, cnt
	}
	first, c1 := run(llm.CacheReadWrite)
	calls := srv.Count()
	if calls == 0 {
		t.Fatal("the first run made no server call")
	}
	second, c2 := run(llm.CacheReplayOnly)
	if srv.Count() != calls {
		t.Errorf("the replay made %d server call(s)", srv.Count()-calls)
	}
	for k, b := range first {
		if string(second[k]) != string(b) {
			t.Errorf("%s: the replayed record differs:\nfirst  %s\nsecond %s", k, b, second[k])
		}
		if c2[k].LLMCacheHits != c2[k].Calls+c2[k].AnswerCalls {
			t.Errorf("%s: replay counters %+v: every call must be a cache hit", k, c2[k])
		}
	}
	// The FLARE variants saw log-probabilities, so their triggers fired on llmtest's falling ones.
	trig := 0
	for k, c := range c1 {
		if (k[:6] == "flare/" && c.Retrievals > 1) || (k[:12] == "flare-token/" && c.Retrievals > 0) {
			trig++
		}
	}
	if trig == 0 {
		t.Error("no FLARE trigger fired against the server")
	}
	t.Logf("%d server calls for %d questions x %d methods; replay: 0", calls, len(exs), len(baselineMethods))
}

// TestFlareServerWithoutLogprobs: a server that ignores the logprobs request (the captured reply of
// harness/llm/testdata has "logprobs": null) makes both FLARE variants fail with an error naming the
// server, never answer as if nothing triggered.
func TestFlareServerWithoutLogprobs(t *testing.T) {
	set := blLoadSet(t)
	body, err := os.ReadFile(filepath.Join("..", "harness", "llm", "testdata", "responses", "no-usage-completions.json"))
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write(body)
	}))
	defer srv.Close()
	t.Setenv(llm.EnvAPIKey, "test-key-not-secret")
	client, err := llm.New(llm.Config{Backend: "openai", BaseURL: srv.URL + "/v1", Model: "m", MaxRetries: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	name := "m at " + srv.URL + "/v1"
	for _, method := range []string{"flare-token", "flare"} {
		m, _ := methods.New(method, nil)
		env, meter := methods.Instrument(methods.Env{Generator: client, GeneratorName: name, Retriever: &methodtest.Retriever{}, Prompts: set})
		p, err := m.Answer(context.Background(), env, datasets.Example{ID: "1", Dataset: "2wikimultihopqa", Question: "Who?"})
		meter.Fill(&p)
		if err == nil || !strings.Contains(err.Error(), name) || !strings.Contains(err.Error(), "log-probabilities") {
			t.Errorf("%s: error %v, want one naming %q and log-probabilities", method, err, name)
		}
		if p.Answer != "" || p.Counters.Calls != 1 {
			t.Errorf("%s: answer %q after %d call(s); want no answer after the first call", method, p.Answer, p.Counters.Calls)
		}
	}
}
