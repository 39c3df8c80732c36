package llm

import (
	"fmt"
	"io"
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
