package llm

import (
	"context"
	"time"
)

// Endpoint selects the API endpoint.
type Endpoint string

// The endpoints.
const (
	// Completions is /v1/completions with a raw prompt (the papers' few-shot setting, no chat template).
	Completions Endpoint = "completions"
	// Chat is /v1/chat/completions.
	Chat Endpoint = "chat"
	// Responses is OpenAI's /v1/responses with the prompt as its input string (the QuCo-RAG authors'
	// API client; the only endpoint with the hosted web search tool).
	Responses Endpoint = "responses"
)

// Message is one chat message.
type Message struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

// Request is one generation request. The zero value of Temperature means greedy decoding.
type Request struct {
	Endpoint Endpoint  `json:"endpoint"`
	Prompt   string    `json:"prompt,omitempty"`   // for Completions
	Messages []Message `json:"messages,omitempty"` // for Chat
	// MaxTokens bounds the completion length (0: the backend's default).
	MaxTokens   int      `json:"max_tokens,omitempty"`
	Temperature float64  `json:"temperature"`
	TopP        float64  `json:"top_p,omitempty"`
	Stop        []string `json:"stop,omitempty"`
	Seed        *int     `json:"seed,omitempty"`
	// Logprobs asks for per-token log-probabilities with this many top alternatives (0: none; -1: the
	// chosen token's only).
	Logprobs int `json:"logprobs,omitempty"`
	// Replicate distinguishes repeated samples of the same request in the cache.
	Replicate int `json:"replicate,omitempty"`
	// WebSearch switches on the hosted web search tool (Responses only: tools [{"type":
	// "web_search"}]).
	WebSearch bool `json:"web_search,omitempty"`
	// ServerSampling sends no temperature and no top_p, leaving sampling to the server's defaults
	// (Responses only; the QuCo-RAG authors' API client sends neither).
	ServerSampling bool `json:"server_sampling,omitempty"`
}

// TokenLogprob is one generated token with its log-probability and the top alternatives.
type TokenLogprob struct {
	Text    string        `json:"text"`
	Logprob float64       `json:"logprob"`
	Top     []Alternative `json:"top,omitempty"`
}

// Alternative is a candidate token at a position.
type Alternative struct {
	Text    string  `json:"text"`
	Logprob float64 `json:"logprob"`
}

// Usage counts tokens for one call.
type Usage struct {
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
	// Estimated is true when the server reported no usage and the counts come from the documented
	// fallback tokenizer.
	Estimated bool `json:"estimated,omitempty"`
}

// Response is one generation.
type Response struct {
	Text         string         `json:"text"`
	Tokens       []TokenLogprob `json:"tokens,omitempty"`
	FinishReason string         `json:"finish_reason,omitempty"`
	Usage        Usage          `json:"usage"`
	Model        string         `json:"model,omitempty"`
	// Latency is the wall time of the call (zero for a cache hit).
	Latency time.Duration `json:"latency"`
	// Cached is true when the response came from the cache.
	Cached bool `json:"cached,omitempty"`
	// Retries counts retried attempts.
	Retries int `json:"retries,omitempty"`
	// WebSearchCalls counts the web_search_call items of a Responses answer.
	WebSearchCalls int `json:"web_search_calls,omitempty"`
}

// Generator generates text.
type Generator interface {
	Generate(ctx context.Context, req Request) (Response, error)
}
