package llm

import (
	"context"
	"fmt"
	"io"
	"time"
)

// WriteCacheStats writes the hit, miss and write counts of g's cache to w in one line naming the cache
// file and mode of cfg (nothing when g has no cache).
func (g *Client) WriteCacheStats(w io.Writer, cfg CacheConfig) {
	if g.Cache != nil {
		s := g.Cache.Stats()
		fmt.Fprintf(w, "cache %s (%s): %d hit(s), %d miss(es), %d write(s)\n", cfg.Path, cfg.Mode, s.Hits, s.Misses, s.Writes)
	}
}

// AsChat returns r for the chat endpoint: its prompt becomes the user message, after a system message
// when system is not empty.
func (r Request) AsChat(system string) Request {
	r.Endpoint, r.Messages = Chat, nil
	if system != "" {
		r.Messages = append(r.Messages, Message{Role: "system", Content: system})
	}
	r.Messages = append(r.Messages, Message{Role: "user", Content: r.Prompt})
	r.Prompt = ""
	return r
}

// Ping sends g a one-token request, the completion of "The capital of France is" or with chat the
// message "Say OK.", and returns the response and how long it took.
func Ping(ctx context.Context, g Generator, chat bool) (Response, time.Duration, error) {
	req := Request{Endpoint: Completions, Prompt: "The capital of France is", MaxTokens: 1}
	if chat {
		req = Request{Endpoint: Chat, Messages: []Message{{Role: "user", Content: "Say OK."}}, MaxTokens: 1}
	}
	start := time.Now()
	resp, err := g.Generate(ctx, req)
	return resp, time.Since(start), err
}
