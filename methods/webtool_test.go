package methods_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ragbench/ragbench/datasets"
	"github.com/ragbench/ragbench/harness/llm"
	"github.com/ragbench/ragbench/methods"
	"github.com/ragbench/ragbench/methods/prompts"
)

// wtAnswer is a /v1/responses answer in the API's shape: optional web_search_call items, then the
// assistant message with its output_text (annotations as the hosted tool returns them).
func wtAnswer(text string, searches int) string {
	var out []any
	for i := 0; i < searches; i++ {
		out = append(out, map[string]any{"type": "web_search_call", "id": fmt.Sprintf("ws_%d", i), "status": "completed",
			"action": map[string]any{"type": "search", "query": "director of Alpha"}})
	}
	out = append(out, map[string]any{"type": "message", "id": "msg_1", "status": "completed", "role": "assistant",
		"content": []any{map[string]any{"type": "output_text", "text": text, "annotations": []any{
			map[string]any{"type": "url_citation", "start_index": 0, "end_index": 3, "url": "https://example.org/a", "title": "A"}}}}})
	b, _ := json.Marshal(map[string]any{"id": "resp_1", "object": "response", "created_at": 1741484430, "status": "completed",
		"error": nil, "incomplete_details": nil, "model": "gpt-4.1-2025-04-14", "output": out, "tool_choice": "auto",
		"usage": map[string]any{"input_tokens": 400, "input_tokens_details": map[string]any{"cached_tokens": 0},
			"output_tokens": 30, "output_tokens_details": map[string]any{"reasoning_tokens": 0}, "total_tokens": 430}})
	return string(b)
}

// wtServer is an in-process OpenAI Responses endpoint: it answers the scripted (status, body) pairs
// in turn and records each request body.
type wtServer struct {
	mu     sync.Mutex
	steps  [][2]any
	bodies []map[string]any
	srv    *httptest.Server
}

func newWTServer(t *testing.T, steps ...[2]any) *wtServer {
	s := &wtServer{steps: steps}
	s.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		defer s.mu.Unlock()
		b, _ := io.ReadAll(r.Body)
		var m map[string]any
		_ = json.Unmarshal(b, &m)
		m["path"] = r.URL.Path
		s.bodies = append(s.bodies, m)
		w.Header().Set("Content-Type", "application/json")
		if len(s.steps) == 0 {
			w.WriteHeader(500)
			io.WriteString(w, `{"error":{"message":"unscripted call","type":"server_error"}}`)
			return
		}
		st := s.steps[0]
		s.steps = s.steps[1:]
		w.WriteHeader(st[0].(int))
		io.WriteString(w, st[1].(string))
	}))
	t.Cleanup(s.srv.Close)
	return s
}

func TestWebToolAgainstServer(t *testing.T) {
	set := blLoadSet(t)
	cases := []struct {
		name     string
		dataset  string
		settings map[string]any
		steps    [][2]any
		answer   string
		searches float64
		wantErr  string
		calls    int
	}{
		{name: "web-tool", steps: [][2]any{{200, wtAnswer("Alpha was directed by Bo ([en.wikipedia.org](https://en.wikipedia.org/wiki/Bo?utm_source=openai)). Bo was born in [Oslo](https://oslo.no) (https://x.org/y). So the answer is Oslo.", 2)}},
			answer: "Oslo", searches: 2, calls: 1},
		{name: "web-tool-hotpotqa-completion", dataset: "hotpotqa", steps: [][2]any{{200, wtAnswer(" Alpha was directed by Bo. ", 0)}, {200, wtAnswer("Oslo.", 0)}},
			answer: "Oslo.", calls: 2},
		{name: "web-tool-corrected", settings: map[string]any{"send_max_length": true, "server_sampling": false, "generate_max_length": 64},
			steps: [][2]any{{200, wtAnswer("Bo was born in Oslo.", 1)}, {200, wtAnswer("Oslo.", 0)}}, answer: "Oslo", searches: 1, calls: 2},
		{name: "web-tool-search-off", settings: map[string]any{"use_web_search": false},
			steps: [][2]any{{200, wtAnswer("So the answer is Oslo ([a.org](https://a.org)).", 0)}}, answer: "Oslo ([a.org](https://a.org))", calls: 1},
		{name: "web-tool-400", steps: [][2]any{{400, `{"error":{"message":"Hosted tool 'web_search' is not supported with gpt-3.5-turbo-instruct.","type":"invalid_request_error","param":"tools","code":null}}`}},
			wantErr: "Hosted tool 'web_search' is not supported", calls: 1},
		{name: "web-tool-failed", steps: [][2]any{{200, `{"id":"resp_9","object":"response","status":"failed","error":{"code":"server_error","message":"The model failed."},"model":"gpt-4.1","output":[]}`}},
			wantErr: "server_error: The model failed.", calls: 1},
	}
	t.Setenv(llm.EnvAPIKey, "test-key-not-secret")
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := newWTServer(t, tc.steps...)
			client, err := llm.NewOpenAI(llm.Config{BaseURL: s.srv.URL + "/v1", Model: "gpt-4.1", MaxRetries: -1, Timeout: 5 * time.Second})
			if err != nil {
				t.Fatal(err)
			}
			m, err := methods.New("web-tool", tc.settings)
			if err != nil {
				t.Fatal(err)
			}
			ds := tc.dataset
			if ds == "" {
				ds = "2wikimultihopqa"
			}
			env, meter := methods.Instrument(methods.Env{Generator: client, GeneratorName: "OpenAI test server", Prompts: set})
			p, err := m.Answer(context.Background(), env, datasets.Example{ID: "q1", Dataset: ds, Question: blQuestion})
			meter.Fill(&p)
			switch {
			case tc.wantErr == "" && err != nil:
				t.Fatal(err)
			case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
				t.Fatalf("error %v, want one containing %q", err, tc.wantErr)
			}
			if tc.wantErr == "" && (p.Answer != tc.answer || p.Signals["web_search_calls"] != tc.searches) {
				t.Errorf("answer %q web searches %v, want %q %v", p.Answer, p.Signals["web_search_calls"], tc.answer, tc.searches)
			}
			if len(s.bodies) != tc.calls {
				t.Errorf("%d requests, want %d", len(s.bodies), tc.calls)
			}
			for i, b := range s.bodies {
				if b["path"] != "/v1/responses" {
					t.Errorf("request %d went to %v, want /v1/responses", i+1, b["path"])
				}
				_, tools := b["tools"]
				if wantTools := i == 0 && tc.settings["use_web_search"] != false; tools != wantTools {
					t.Errorf("request %d: tools sent %v, want %v (the answer completion never searches)", i+1, tools, wantTools)
				}
			}
			wtGolden(t, set, tc.name, s.bodies, p, err)
		})
	}
}

// wtGolden compares the requests (prompts redacted, byte for byte otherwise) and the record with
// testdata/webtool/NAME.golden.
func wtGolden(t *testing.T, set *prompts.Set, name string, bodies []map[string]any, p methods.Prediction, runErr error) {
	t.Helper()
	red := redactor(t, set)
	var b strings.Builder
	for i, body := range bodies {
		keys := make([]string, 0, len(body))
		for k := range body {
			if k != "input" && k != "path" {
				keys = append(keys, k)
			}
		}
		sort.Strings(keys)
		fmt.Fprintf(&b, "=== request %d: %v", i+1, body["path"])
		for _, k := range keys {
			v, _ := json.Marshal(body[k])
			fmt.Fprintf(&b, " %s=%s", k, v)
		}
		fmt.Fprintf(&b, "\n%s\n=== end of input %d\n", red(fmt.Sprint(body["input"])), i+1)
	}
	if runErr != nil {
		fmt.Fprintf(&b, "error: %v\n", runErr)
	}
	if err := methods.FormatTrace(&b, p); err != nil {
		t.Fatal(err)
	}
	got := wtServerURL.ReplaceAllString(b.String(), "SERVER")
	path := filepath.Join("testdata", "webtool", name+".golden")
	if *update {
		_ = os.MkdirAll(filepath.Dir(path), 0o755)
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (go test -update creates it)", err)
	}
	if string(want) != got {
		t.Errorf("output differs from %s (go test -update rewrites it):\n%s", path, blLineDiff(string(want), got))
	}
}

var wtServerURL = regexp.MustCompile(`http://127\.0\.0\.1:[0-9]+`)

func TestRemoveWebLinks(t *testing.T) {
	cases := []struct{ in, want, why string }{
		{"Bo ([en.wikipedia.org](https://en.wikipedia.org/wiki/Bo?utm_source=openai)).", "Bo.", "site citation dropped with the space before it"},
		{"born in [Oslo](https://oslo.no).", "born in Oslo.", "markdown link keeps its text"},
		{"see (https://x.org/y) now", "see now", "bare url dropped with the space before it"},
		{"a ([x.org](http://x.org)) b ([y](https://y))", "a b", "several, http too"},
		{"([ex ample.org](https://e.org))", "(ex ample.org)", "a site with a space is no site citation: only the markdown link is replaced"},
		{"  keep [no link] (not a url)  ", "keep [no link] (not a url)", "no link: only stripped"},
		{"Rome ([münchen.de](https://münchen.de))", "Rome", "Python's \\w is Unicode-aware"},
	}
	for _, tc := range cases {
		if got := methods.RemoveWebLinks(tc.in); got != tc.want {
			t.Errorf("RemoveWebLinks(%q) = %q, want %q (%s)", tc.in, got, tc.want, tc.why)
		}
	}
}

func TestWebToolSettings(t *testing.T) {
	m, err := methods.New("web-tool", nil)
	if err != nil {
		t.Fatal(err)
	}
	got := m.(methods.Configured).Settings().(methods.WebToolConfig)
	if !got.UseWebSearch || got.MaxLength != 512 || got.Fewshot != -1 || got.PromptKey != "llama-2" || !got.ServerSampling || got.SendMaxLength || !got.RemoveWebLinks {
		t.Errorf("defaults %+v are not the authors' Web-Tool.json run", got)
	}
	for _, bad := range []map[string]any{{"fewshot": -2}, {"generate_max_length": 0}, {"use_web_serch": true}, {"prompt_key": ""}} {
		if _, err := methods.New("web-tool", bad); err == nil {
			t.Errorf("settings %v accepted", bad)
		}
	}
}

// TestRemoveWebLinksOracle compares RemoveWebLinks with the authors' remove_web_links
// (src/gpt_api_client.py) on 2,000 random texts of citations, links, brackets and Unicode spaces
// (testdata/webtool/remove_web_links_oracle.jsonl: each input with their function's output).
func TestRemoveWebLinksOracle(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("testdata", "webtool", "remove_web_links_oracle.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		var rec struct{ In, Out string }
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatal(err)
		}
		n++
		if got := methods.RemoveWebLinks(rec.In); got != rec.Out {
			t.Errorf("RemoveWebLinks(%q) = %q, theirs %q", rec.In, got, rec.Out)
		}
	}
	if n != 2000 {
		t.Fatalf("%d oracle lines, want 2000", n)
	}
}
