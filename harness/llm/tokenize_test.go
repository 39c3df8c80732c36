package llm_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ragbench/ragbench/harness/llm"
)

// tokenizeServer answers POST /tokenize in the JSON of vLLM or the llama.cpp server: the count is one
// token per space-separated word plus a BOS token when special tokens are asked for.
func tokenizeServer(t *testing.T, flavor string, calls *atomic.Int32) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		var req map[string]any
		if r.URL.Path != "/tokenize" || r.Method != http.MethodPost || json.NewDecoder(r.Body).Decode(&req) != nil {
			w.WriteHeader(http.StatusNotFound)
			w.Write([]byte(`{"detail":"Not Found"}`))
			return
		}
		w.Header().Set("Content-Type", "application/json")
		switch flavor {
		case "vllm":
			// vLLM: TokenizeCompletionRequest{model, prompt, add_special_tokens} → {count, max_model_len, tokens}
			text, _ := req["prompt"].(string)
			ids := []int{}
			if req["add_special_tokens"] == true {
				ids = append(ids, 100257)
			}
			for i := range strings.Fields(text) {
				ids = append(ids, 1000+i)
			}
			json.NewEncoder(w).Encode(map[string]any{"count": len(ids), "max_model_len": 4096, "tokens": ids})
		case "llamacpp":
			// llama.cpp: {content, add_special} → {tokens}
			text, _ := req["content"].(string)
			ids := []int{}
			if req["add_special"] == true {
				ids = append(ids, 1)
			}
			for i := range strings.Fields(text) {
				ids = append(ids, 500+i)
			}
			json.NewEncoder(w).Encode(map[string]any{"tokens": ids})
		case "error":
			w.WriteHeader(http.StatusBadRequest)
			w.Write([]byte(`{"object":"error","message":"The model m does not exist.","type":"NotFoundError","code":404}`))
		case "garbage":
			w.Write([]byte(`{"ok":true}`))
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

func TestCountTokensServers(t *testing.T) {
	t.Setenv(llm.EnvAPIKey, testKey)
	cases := []struct {
		flavor  string
		want    int
		wantErr string
		why     string
	}{
		{"vllm", 3, "", "vLLM's count, BOS included (add_special_tokens)"},
		{"llamacpp", 3, "", "llama.cpp's token list, BOS included (add_special)"},
		{"missing", 0, "no /tokenize", "a server without the endpoint (Ollama, OpenAI)"},
		{"error", 0, "does not exist", "a server error is quoted"},
		{"garbage", 0, "neither count nor tokens", "an answer without either is malformed"},
	}
	for _, tc := range cases {
		t.Run(tc.flavor, func(t *testing.T) {
			var calls atomic.Int32
			srv := tokenizeServer(t, tc.flavor, &calls)
			if tc.flavor == "missing" {
				srv.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					calls.Add(1)
					http.NotFound(w, r)
				})
			}
			c, err := llm.New(llm.Config{BaseURL: srv.URL + "/v1", Model: "m", Timeout: 5 * time.Second})
			if err != nil {
				t.Fatal(err)
			}
			n, err := c.CountTokens(context.Background(), "Rome city.")
			switch {
			case tc.wantErr == "" && (err != nil || n != tc.want):
				t.Fatalf("count %d, %v; want %d (%s)", n, err, tc.want, tc.why)
			case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
				t.Fatalf("error %v, want %q (%s)", err, tc.wantErr, tc.why)
			}
			// The second count of the same text is cached; a missing endpoint is not asked again.
			_, err2 := c.CountTokens(context.Background(), "Rome city.")
			want := int32(1)
			if tc.flavor == "error" || tc.flavor == "garbage" {
				want = 2 // errors are not remembered
			}
			if calls.Load() != want {
				t.Errorf("%d requests after two counts of one text, want %d", calls.Load(), want)
			}
			if tc.flavor == "missing" && !errors.Is(err2, llm.ErrNoTokenizer) {
				t.Errorf("a missing endpoint should stay ErrNoTokenizer: %v", err2)
			}
		})
	}
}

func TestCountTokensOfflineBackend(t *testing.T) {
	c, err := llm.New(llm.Config{Backend: "openai", BaseURL: "http://127.0.0.1:1/v1", Model: "m"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.CountTokens(context.Background(), "x"); err == nil {
		t.Fatal("a refused connection counted tokens")
	}
}

// TestCountTokensReplay: token counts are stored in the response cache, so that a run replayed from
// it (replay-only, no server) measures lengths as the recorded run did.
func TestCountTokensReplay(t *testing.T) {
	t.Setenv(llm.EnvAPIKey, testKey)
	var calls atomic.Int32
	srv := tokenizeServer(t, "vllm", &calls)
	path := filepath.Join(t.TempDir(), "llm.sqlite")
	rec, err := llm.New(llm.Config{BaseURL: srv.URL + "/v1", Model: "m", Cache: llm.CacheConfig{Path: path}})
	if err != nil {
		t.Fatal(err)
	}
	if n, err := rec.CountTokens(context.Background(), "Rome is a city."); err != nil || n != 5 {
		t.Fatalf("recording: %d %v", n, err)
	}
	rec.Close()
	srv.Close()
	rep, err := llm.New(llm.Config{BaseURL: srv.URL + "/v1", Model: "m", Cache: llm.CacheConfig{Path: path, Mode: llm.CacheReplayOnly}})
	if err != nil {
		t.Fatal(err)
	}
	defer rep.Close()
	if n, err := rep.CountTokens(context.Background(), "Rome is a city."); err != nil || n != 5 {
		t.Errorf("replay: %d %v, want the recorded 5", n, err)
	}
	if _, err := rep.CountTokens(context.Background(), "never counted"); !errors.Is(err, llm.ErrCacheMiss) {
		t.Errorf("an unrecorded count in replay-only: %v, want ErrCacheMiss", err)
	}
	if calls.Load() != 1 {
		t.Errorf("%d tokenize requests, want 1", calls.Load())
	}
}

// cutServer tokenizes words (one id per word, kept in a vocabulary) and detokenizes ids back to
// words joined by spaces, in vLLM's or llama.cpp's JSON; special tokens asked for are refused, as a
// query cut must not add them.
func cutServer(t *testing.T, flavor string, calls *atomic.Int32) *httptest.Server {
	var vocab []string
	id := map[string]int{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		var req map[string]any
		json.NewDecoder(r.Body).Decode(&req)
		switch r.URL.Path {
		case "/tokenize":
			text := req["prompt"]
			if flavor == "llamacpp" {
				text = req["content"]
			}
			if req["add_special_tokens"] != false || req["add_special"] != false {
				http.Error(w, `{"error":"special tokens asked for"}`, 400)
				return
			}
			ids := []int{}
			for _, w := range strings.Fields(text.(string)) {
				if _, ok := id[w]; !ok {
					id[w] = len(vocab)
					vocab = append(vocab, w)
				}
				ids = append(ids, id[w])
			}
			if flavor == "vllm" {
				json.NewEncoder(w).Encode(map[string]any{"count": len(ids), "max_model_len": 4096, "tokens": ids})
			} else {
				json.NewEncoder(w).Encode(map[string]any{"tokens": ids})
			}
		case "/detokenize":
			var words []string
			for _, x := range req["tokens"].([]any) {
				words = append(words, vocab[int(x.(float64))])
			}
			key := "prompt"
			if flavor == "llamacpp" {
				key = "content"
			}
			json.NewEncoder(w).Encode(map[string]any{key: strings.Join(words, " ")})
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

func TestKeepLastTokens(t *testing.T) {
	t.Setenv(llm.EnvAPIKey, testKey)
	for _, flavor := range []string{"vllm", "llamacpp"} {
		t.Run(flavor, func(t *testing.T) {
			var calls atomic.Int32
			srv := cutServer(t, flavor, &calls)
			c, err := llm.New(llm.Config{BaseURL: srv.URL + "/v1", Model: "m", Timeout: 5 * time.Second})
			if err != nil {
				t.Fatal(err)
			}
			got, err := c.KeepLastTokens(context.Background(), "a b  c d e", 3)
			if err != nil || got != "c d e" {
				t.Fatalf("KeepLastTokens = %q, %v; want the last three tokens decoded, \"c d e\"", got, err)
			}
			got, err = c.KeepLastTokens(context.Background(), "x  y", 64)
			if err != nil || got != "x y" {
				t.Fatalf("a short text = %q, %v; want it decoded (the authors' round trip), \"x y\"", got, err)
			}
			before := calls.Load()
			if again, _ := c.KeepLastTokens(context.Background(), "a b  c d e", 3); again != "c d e" || calls.Load() != before {
				t.Errorf("a repeated cut asked the server again (%d requests)", calls.Load()-before)
			}
		})
	}
}
