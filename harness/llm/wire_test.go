package llm_test

import (
	"context"
	"testing"
	"time"

	"github.com/ragbench/ragbench/harness/llm"
	"github.com/ragbench/ragbench/harness/llm/llmtest"
	"github.com/ragbench/ragbench/internal/transport/transporttest"
)

// TestRequestBytes pins the exact bytes, path and headers of the requests the client sends, so that
// a change of how a request is built cannot pass unnoticed: servers and their caches see these bytes.
func TestRequestBytes(t *testing.T) {
	seed := 7
	cases := []struct {
		why  string
		req  llm.Request
		path string
		body string
	}{
		{"greedy completion: temperature 0 put first, the config seed filled in",
			llm.Request{Prompt: "Q: <capital> of \"France\"\n", Stop: []string{"\n"}, MaxTokens: 5},
			"/v1/completions",
			`{"temperature":0,"model":"test-model","prompt":"Q: \u003ccapital\u003e of \"France\"\n","max_tokens":5,"seed":42,"stop":["\n"],"stream":false}`},
		{"completion asking for the chosen token's logprob only: logprobs 0 put after temperature",
			llm.Request{Prompt: "x", Logprobs: -1, Seed: &seed},
			"/v1/completions",
			`{"temperature":0,"logprobs":0,"model":"test-model","prompt":"x","seed":7,"stream":false}`},
		{"completion with a temperature and top alternatives: nothing put in",
			llm.Request{Prompt: "x", Logprobs: 3, Temperature: 0.5, TopP: 0.9},
			"/v1/completions",
			`{"model":"test-model","prompt":"x","logprobs":3,"seed":42,"stream":false,"temperature":0.5,"top_p":0.9}`},
		{"greedy chat with top logprobs",
			llm.Request{Endpoint: llm.Chat, Messages: []llm.Message{{Role: "system", Content: "be brief"}, {Role: "user", Content: "hi"}}, Logprobs: 2, MaxTokens: 8},
			"/v1/chat/completions",
			`{"temperature":0,"model":"test-model","messages":[{"role":"system","content":"be brief"},{"role":"user","content":"hi"}],"max_tokens":8,"stream":false,"seed":42,"logprobs":true,"top_logprobs":2}`},
	}
	for _, tc := range cases {
		t.Run(tc.why, func(t *testing.T) {
			srv := llmtest.New(t, llmtest.VLLM)
			c := newClient(t, srv, func(c *llm.Config) { c.Seed = 42 })
			if _, err := c.Generate(context.Background(), tc.req); err != nil {
				t.Fatal(err)
			}
			r := srv.Requests()[0]
			if r.Path != tc.path {
				t.Errorf("path %s, want %s", r.Path, tc.path)
			}
			if string(r.Body) != tc.body {
				t.Errorf("body\n %s\nwant\n %s", r.Body, tc.body)
			}
			for k, want := range map[string]string{"Authorization": "Bearer " + testKey, "Content-Type": "application/json", "Accept": "application/json"} {
				if got := r.Header.Get(k); got != want {
					t.Errorf("header %s: %q, want %q", k, got, want)
				}
			}
		})
	}
}

// TestResponsesRequestBytes pins the bytes of a Responses API request (greedy, with web search).
func TestResponsesRequestBytes(t *testing.T) {
	srv := transporttest.New(t, responsesWebSearchBody)
	t.Setenv(llm.EnvAPIKey, testKey)
	c, err := llm.NewOpenAI(llm.Config{BaseURL: srv.URL + "/v1/", Model: "gpt-4.1", Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Generate(context.Background(), llm.Request{Endpoint: llm.Responses, Prompt: "Who? <a & b>", WebSearch: true, MaxTokens: 16}); err != nil {
		t.Fatal(err)
	}
	want := `{"input":"Who? \u003ca \u0026 b\u003e","max_output_tokens":16,"model":"gpt-4.1","temperature":0,"tools":[{"type":"web_search"}]}`
	r := srv.Last()
	if r.Path != "/v1/responses" || r.Header.Get("Authorization") != "Bearer "+testKey || string(r.Body) != want {
		t.Errorf("path %s, headers %v, body\n %s\nwant\n %s", r.Path, r.Header, r.Body, want)
	}
}
