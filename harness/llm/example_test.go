package llm_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"

	"github.com/ragbench/ragbench/harness/llm"
)

// A Generator built from a Config (llm.New) against an OpenAI-compatible completions server, here a
// stand-in that answers every prompt with " Paris.". The API key would come from the environment
// variable named by APIKeyEnv, never from the config.
func ExampleGenerator() {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Model string `json:"model"`
		}
		json.NewDecoder(r.Body).Decode(&req)
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{"id": "1", "object": "text_completion", "model": req.Model,
			"choices": []map[string]any{{"index": 0, "text": " Paris.", "finish_reason": "stop"}},
			"usage":   map[string]int{"prompt_tokens": 8, "completion_tokens": 2, "total_tokens": 10}})
	}))
	defer srv.Close()

	client, err := llm.New(llm.Config{BaseURL: srv.URL + "/v1", Model: "qwen2.5-7b-instruct", Seed: 1})
	if err != nil {
		panic(err)
	}
	defer client.Close()
	var g llm.Generator = client
	resp, err := g.Generate(context.Background(), llm.Request{Endpoint: llm.Completions,
		Prompt: "Question: What is the capital of France?\nAnswer:", MaxTokens: 8})
	if err != nil {
		panic(err)
	}
	fmt.Printf("%q %s %d+%d tokens\n", resp.Text, resp.FinishReason, resp.Usage.PromptTokens, resp.Usage.CompletionTokens)
	// Output: " Paris." stop 8+2 tokens
}
