package extract

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/ragbench/ragbench/harness/llm"
)

func TestConfigValidate(t *testing.T) {
	tmpl := filepath.Join("testdata", "templates.json")
	cases := []struct {
		name string
		cfg  Config
		want string // substring of the error; "" for valid
	}{
		{"the zero config is the rule backend", Config{}, ""},
		{"rules is read as rule", Config{Backend: "rules"}, ""},
		{"llm with templates; the format defaults to raw", Config{Backend: BackendLLM, Templates: tmpl}, ""},
		{"llm in ChatML, as the authors' 0.5B extractor wants", Config{Backend: BackendLLM, Templates: tmpl, Format: ChatML}, ""},
		{"an unknown backend is named", Config{Backend: "spacy"}, `extract.backend "spacy"`},
		{"llm without templates", Config{Backend: BackendLLM}, "extract.templates is empty"},
		{"an unknown format", Config{Backend: BackendLLM, Templates: tmpl, Format: "xml"}, `extract.format "xml"`},
		{"negative max tokens", Config{Backend: BackendLLM, Templates: tmpl, MaxTokens: -1}, "extract.max_tokens -1"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.cfg.Defaults().Validate()
			if tc.want == "" {
				if err != nil {
					t.Fatalf("valid config rejected: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want an error containing %q", err, tc.want)
			}
		})
	}
}

// listGen answers every request with a nested list and records the prompts.
type listGen struct {
	mu      sync.Mutex
	prompts []string
}

func (g *listGen) Generate(_ context.Context, req llm.Request) (llm.Response, error) {
	g.mu.Lock()
	p := req.Prompt
	if len(req.Messages) > 0 {
		p = req.Messages[len(req.Messages)-1].Content
	}
	g.prompts = append(g.prompts, p)
	g.mu.Unlock()
	return llm.Response{Text: `[["Kumbasaram", "released in", "2017"]]`}, nil
}

func TestNew(t *testing.T) {
	ctx := context.Background()
	tmpl := filepath.Join("testdata", "templates.json")
	want := []Triplet{{Head: "Kumbasaram", Relation: "released in", Tail: "2017"}}
	cases := []struct {
		name    string
		cfg     Config
		gen     llm.Generator
		typ     string // the concrete extractor
		wantErr string
	}{
		{"rule needs no generator", Config{}, nil, "*extract.Rules", ""},
		{"llm asks the generator with the loaded templates", Config{Backend: BackendLLM, Templates: tmpl}, &listGen{}, "*extract.Prompted", ""},
		{"llm without a generator", Config{Backend: BackendLLM, Templates: tmpl}, nil, "", "needs a generator"},
		{"a missing templates file names it", Config{Backend: BackendLLM, Templates: filepath.Join(t.TempDir(), "none.json")}, &listGen{}, "", "none.json"},
		{"an invalid config is not built", Config{Backend: "spacy"}, nil, "", "extract config"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ex, err := New(tc.cfg, tc.gen)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("got %v, want an error containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := reflect.TypeOf(ex).String(); got != tc.typ {
				t.Fatalf("built %s, want %s", got, tc.typ)
			}
			got, err := ex.Triplets(ctx, "Kumbasaram was released in 2017.")
			if err != nil || !reflect.DeepEqual(got, want) {
				t.Fatalf("Triplets = %v, %v; want %v", got, err, want)
			}
			if g, ok := tc.gen.(*listGen); ok && (len(g.prompts) != 1 || !strings.HasPrefix(g.prompts[0], "TRIPLES FOR: Kumbasaram")) {
				t.Fatalf("prompts %q", g.prompts)
			}
		})
	}
}

// TestOpenLLM builds the extractor and its own llm client from the config against an
// OpenAI-compatible server; the key comes from the environment variable the config names. By default
// the extractor is called as the authors call their fine-tuned QuCo-extractor-0.5B: through its chat
// template (chat completions, one user message, the server's default system message) with 256 new
// tokens.
func TestOpenLLM(t *testing.T) {
	var mu sync.Mutex
	var auth, models []string
	var bodies []map[string]any
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req map[string]any
		if r.URL.Path != "/v1/chat/completions" || json.NewDecoder(r.Body).Decode(&req) != nil {
			http.Error(w, `{"error":{"message":"bad request"}}`, http.StatusBadRequest)
			return
		}
		mu.Lock()
		auth, models, bodies = append(auth, r.Header.Get("Authorization")), append(models, fmt.Sprint(req["model"])), append(bodies, req)
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{"id": "chatcmpl-1", "object": "chat.completion", "model": req["model"],
			"choices": []map[string]any{{"index": 0, "message": map[string]any{"role": "assistant", "content": `[["Kumbasaram", "released in", "2017"]]`}, "finish_reason": "stop"}},
			"usage":   map[string]int{"prompt_tokens": 5, "completion_tokens": 9, "total_tokens": 14}})
	}))
	defer srv.Close()
	t.Setenv("RAGBENCH_TEST_EXTRACT_KEY", "sk-extract")
	cfg := Config{Backend: BackendLLM, Templates: filepath.Join("testdata", "templates.json"),
		LLM: llm.Config{BaseURL: srv.URL + "/v1", Model: "quco-extractor-0.5b", APIKeyEnv: "RAGBENCH_TEST_EXTRACT_KEY", MaxRetries: -1}}
	c, err := Open(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	got, err := c.Triplets(context.Background(), "Kumbasaram was released in 2017.")
	if err != nil || len(got) != 1 || got[0].Tail != "2017" {
		t.Fatalf("Triplets = %v, %v", got, err)
	}
	if len(auth) != 1 || auth[0] != "Bearer sk-extract" || models[0] != "quco-extractor-0.5b" {
		t.Fatalf("authorization %q, model %q", auth, models)
	}
	msgs, _ := json.Marshal(bodies[0]["messages"])
	if want := `[{"content":"TRIPLES FOR: Kumbasaram was released in 2017.\nentities:\n","role":"user"}]`; string(msgs) != want {
		t.Errorf("messages %s, want %s (one user message: the server applies the model's chat template)", msgs, want)
	}
	if bodies[0]["max_tokens"] != 256.0 || bodies[0]["stop"] != nil {
		t.Errorf("max_tokens %v stop %v, want 256 new tokens and no stop (the authors' max_new_tokens)", bodies[0]["max_tokens"], bodies[0]["stop"])
	}
	if _, err := Open(Config{Backend: BackendLLM, Templates: cfg.Templates, LLM: llm.Config{BaseURL: "ftp://x"}}); err == nil {
		t.Fatal("an llm config with a bad URL opened")
	}
	r, err := Open(Config{})
	if err != nil || r.LLM != nil || r.Close() != nil {
		t.Fatalf("rule backend: %v %v", r, err)
	}
}

// TestConfigYAML reads the config as the package documentation shows it.
func TestConfigYAML(t *testing.T) {
	src := "backend: llm\ntemplates: reference/quco-rag/prompt_templates.json\nformat: chatml\n" +
		"llm: {base_url: \"http://127.0.0.1:8001/v1\", model: QuCo-extractor-0.5B}\n"
	var c Config
	if err := yaml.Unmarshal([]byte(src), &c); err != nil {
		t.Fatal(err)
	}
	if c.Backend != BackendLLM || c.Format != ChatML || c.LLM.Model != "QuCo-extractor-0.5B" || c.LLM.BaseURL != "http://127.0.0.1:8001/v1" {
		t.Fatalf("parsed %+v", c)
	}
	if err := c.Defaults().Validate(); err != nil {
		t.Fatal(err)
	}
}
