package llm_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ragbench/ragbench/harness/llm"
)

// responsesWebSearchBody is an OpenAI /v1/responses answer with the web search tool, in the API's
// documented shape: a web_search_call item, then the assistant message whose output_text carries
// url_citation annotations (and markdown links in the text, as the hosted tool writes them).
const responsesWebSearchBody = `{
  "id": "resp_67ccf18ef5fc8190b16dbee19bc54e5f087bb177ab789d5c",
  "object": "response",
  "created_at": 1741484430,
  "status": "completed",
  "error": null,
  "incomplete_details": null,
  "instructions": null,
  "max_output_tokens": null,
  "model": "gpt-4.1-2025-04-14",
  "output": [
    {
      "type": "web_search_call",
      "id": "ws_67ccf18f64008190a39b619f4c8455ef087bb177ab789d5c",
      "status": "completed",
      "action": {"type": "search", "query": "Ed Wood director birthplace"}
    },
    {
      "type": "message",
      "id": "msg_67ccf190ca3881909d433c50b1f6357e087bb177ab789d5c",
      "status": "completed",
      "role": "assistant",
      "content": [
        {
          "type": "output_text",
          "text": "Ed Wood was born in Poughkeepsie, New York ([en.wikipedia.org](https://en.wikipedia.org/wiki/Ed_Wood?utm_source=openai)). So the answer is Poughkeepsie.",
          "annotations": [
            {
              "type": "url_citation",
              "start_index": 42,
              "end_index": 115,
              "url": "https://en.wikipedia.org/wiki/Ed_Wood?utm_source=openai",
              "title": "Ed Wood - Wikipedia"
            }
          ]
        }
      ]
    }
  ],
  "parallel_tool_calls": true,
  "previous_response_id": null,
  "reasoning": {"effort": null, "summary": null},
  "store": true,
  "temperature": 1.0,
  "text": {"format": {"type": "text"}},
  "tool_choice": "auto",
  "tools": [{"type": "web_search", "search_context_size": "medium", "user_location": {"type": "approximate"}}],
  "top_p": 1.0,
  "truncation": "disabled",
  "usage": {
    "input_tokens": 328,
    "input_tokens_details": {"cached_tokens": 0},
    "output_tokens": 356,
    "output_tokens_details": {"reasoning_tokens": 0},
    "total_tokens": 684
  },
  "user": null,
  "metadata": {}
}`

// responsesServer answers POST /v1/responses with the scripted (status, body) pairs in turn and
// records the request bodies.
type responsesServer struct {
	mu     sync.Mutex
	script []struct {
		code int
		body string
	}
	bodies []map[string]any
	auth   []string
	srv    *httptest.Server
}

func newResponsesServer(t *testing.T) *responsesServer {
	s := &responsesServer{}
	s.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		defer s.mu.Unlock()
		if r.URL.Path != "/v1/responses" || r.Method != http.MethodPost {
			http.Error(w, `{"error":{"message":"not found","type":"invalid_request_error"}}`, 404)
			return
		}
		b, _ := io.ReadAll(r.Body)
		var m map[string]any
		if err := json.Unmarshal(b, &m); err != nil {
			t.Errorf("request body is not JSON: %v", err)
		}
		s.bodies = append(s.bodies, m)
		s.auth = append(s.auth, r.Header.Get("Authorization"))
		if len(s.script) == 0 {
			http.Error(w, `{"error":{"message":"script exhausted"}}`, 500)
			return
		}
		step := s.script[0]
		s.script = s.script[1:]
		w.Header().Set("Content-Type", "application/json")
		if step.code == 429 {
			w.Header().Set("Retry-After", "0")
		}
		w.WriteHeader(step.code)
		io.WriteString(w, step.body)
	}))
	t.Cleanup(s.srv.Close)
	return s
}

func (s *responsesServer) push(code int, body string) {
	s.script = append(s.script, struct {
		code int
		body string
	}{code, body})
}

func (s *responsesServer) client(t *testing.T, retries int) *llm.OpenAI {
	t.Helper()
	t.Setenv(llm.EnvAPIKey, testKey)
	c, err := llm.NewOpenAI(llm.Config{BaseURL: s.srv.URL + "/v1", Model: "gpt-4.1", MaxRetries: retries,
		BackoffBase: time.Millisecond, BackoffMax: 5 * time.Millisecond, Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestResponsesWebSearch(t *testing.T) {
	s := newResponsesServer(t)
	s.push(200, responsesWebSearchBody)
	c := s.client(t, 0)
	resp, err := c.Generate(context.Background(), llm.Request{Endpoint: llm.Responses, Prompt: "Question: Where was Ed Wood born?\nAnswer:", WebSearch: true, ServerSampling: true})
	if err != nil {
		t.Fatal(err)
	}
	want := "Ed Wood was born in Poughkeepsie, New York ([en.wikipedia.org](https://en.wikipedia.org/wiki/Ed_Wood?utm_source=openai)). So the answer is Poughkeepsie."
	if resp.Text != want {
		t.Errorf("text %q, want the message's output_text %q", resp.Text, want)
	}
	if resp.WebSearchCalls != 1 || resp.Usage.PromptTokens != 328 || resp.Usage.CompletionTokens != 356 || resp.Usage.Estimated {
		t.Errorf("web search calls %d, usage %+v: want 1 and 328/356 from usage", resp.WebSearchCalls, resp.Usage)
	}
	if resp.FinishReason != "stop" || resp.Model != "gpt-4.1-2025-04-14" {
		t.Errorf("finish %q model %q", resp.FinishReason, resp.Model)
	}
	body := s.bodies[0]
	if body["input"] != "Question: Where was Ed Wood born?\nAnswer:" || body["model"] != "gpt-4.1" {
		t.Errorf("input/model not sent as the authors' client sends them: %v", body)
	}
	tools, _ := json.Marshal(body["tools"])
	if string(tools) != `[{"type":"web_search"}]` {
		t.Errorf("tools %s, want [{\"type\":\"web_search\"}]", tools)
	}
	for _, k := range []string{"temperature", "top_p", "max_output_tokens", "seed", "max_tokens", "logprobs"} {
		if _, ok := body[k]; ok {
			t.Errorf("server_sampling request sent %q: %v (the authors send only model, input, tools)", k, body)
		}
	}
	if s.auth[0] != "Bearer "+testKey {
		t.Errorf("authorization header %q", s.auth[0])
	}
}

func TestResponsesRequestFields(t *testing.T) {
	// Without server sampling and with a length bound: temperature 0 and max_output_tokens are sent,
	// no tools without web search.
	s := newResponsesServer(t)
	s.push(200, `{"id":"resp_1","object":"response","status":"incomplete","incomplete_details":{"reason":"max_output_tokens"},"model":"gpt-4.1","output":[{"type":"message","role":"assistant","content":[{"type":"output_text","text":"Rome","annotations":[]},{"type":"refusal","refusal":"no"},{"type":"output_text","text":" city","annotations":[]}]}],"usage":{"input_tokens":5,"output_tokens":2,"total_tokens":7}}`)
	c := s.client(t, 0)
	resp, err := c.Generate(context.Background(), llm.Request{Endpoint: llm.Responses, Prompt: "p", MaxTokens: 2})
	if err != nil {
		t.Fatal(err)
	}
	if resp.Text != "Rome city" || resp.FinishReason != "length" || resp.WebSearchCalls != 0 {
		t.Errorf("text %q finish %q calls %d: want the output_text parts joined, length, 0", resp.Text, resp.FinishReason, resp.WebSearchCalls)
	}
	body := s.bodies[0]
	if body["temperature"] != 0.0 || body["max_output_tokens"] != 2.0 {
		t.Errorf("want temperature 0 and max_output_tokens 2: %v", body)
	}
	if _, ok := body["tools"]; ok {
		t.Errorf("tools sent without web search: %v", body)
	}
}

func TestResponsesErrors(t *testing.T) {
	cases := []struct {
		name    string
		script  [][2]any
		retries int
		wantErr string // "" = success
		calls   int
	}{
		{"429 then success: retried", [][2]any{{429, `{"error":{"message":"Rate limit reached for gpt-4.1","type":"requests","param":null,"code":"rate_limit_exceeded"}}`}, {200, responsesWebSearchBody}}, 2, "", 2},
		{"500 with no retries: fails at once", [][2]any{{500, `{"error":{"message":"The server had an error while processing your request.","type":"server_error","param":null,"code":null}}`}}, -1, "The server had an error", 1},
		{"400 is not retried", [][2]any{{400, `{"error":{"message":"Hosted tool 'web_search' is not supported with gpt-3.5-turbo.","type":"invalid_request_error","param":"tools","code":null}}`}}, 3, "Hosted tool 'web_search' is not supported", 1},
		{"401 names the message, not the key", [][2]any{{401, `{"error":{"message":"Incorrect API key provided: sk-test-***cdef.","type":"invalid_request_error","param":null,"code":"invalid_api_key"}}`}}, 3, "Incorrect API key", 1},
		{"status failed", [][2]any{{200, `{"id":"resp_2","object":"response","status":"failed","error":{"code":"server_error","message":"The model failed to generate a response."},"model":"gpt-4.1","output":[]}`}}, 0, "server_error: The model failed", 1},
		{"no output array", [][2]any{{200, `{"id":"resp_3","object":"response","status":"completed","model":"gpt-4.1"}`}}, 0, "no output array", 1},
		{"not JSON", [][2]any{{200, `<html>gateway</html>`}}, 0, "decode JSON", 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := newResponsesServer(t)
			for _, st := range tc.script {
				s.push(st[0].(int), st[1].(string))
			}
			c := s.client(t, tc.retries)
			resp, err := c.Generate(context.Background(), llm.Request{Endpoint: llm.Responses, Prompt: "p", WebSearch: true})
			switch {
			case tc.wantErr == "" && err != nil:
				t.Fatalf("unexpected error %v", err)
			case tc.wantErr == "" && resp.Retries != tc.calls-1:
				t.Errorf("retries %d, want %d", resp.Retries, tc.calls-1)
			case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
				t.Fatalf("error %v, want one containing %q", err, tc.wantErr)
			}
			if err != nil && strings.Contains(err.Error(), testKey) {
				t.Errorf("error leaks the API key: %v", err)
			}
			if len(s.bodies) != tc.calls {
				t.Errorf("%d requests, want %d", len(s.bodies), tc.calls)
			}
			var me *llm.MalformedError
			if strings.Contains(tc.name, "JSON") && !errors.As(err, &me) {
				t.Errorf("a non-JSON body should be a MalformedError: %T", err)
			}
		})
	}
}

func TestResponsesValidate(t *testing.T) {
	cases := []struct {
		req    llm.Request
		reason string
	}{
		{llm.Request{Endpoint: llm.Responses}, "an empty input cannot be sent"},
		{llm.Request{Endpoint: llm.Responses, Prompt: "p", Logprobs: 1}, "/v1/responses with tools returns no logprobs here"},
		{llm.Request{Endpoint: llm.Completions, Prompt: "p", WebSearch: true}, "web search exists only on the Responses endpoint"},
		{llm.Request{Endpoint: llm.Chat, Messages: []llm.Message{{Role: "user", Content: "p"}}, ServerSampling: true}, "server sampling is a Responses setting"},
	}
	for _, tc := range cases {
		if err := tc.req.Validate(); err == nil {
			t.Errorf("%+v validated; want an error: %s", tc.req, tc.reason)
		}
	}
}
