// Package llm is the generation layer: the Generator interface and the stack every method uses to
// talk to a language model.
//
//   - OpenAI (openai.go): one backend for any OpenAI-compatible server (vLLM, the llama.cpp server,
//     Ollama, OpenAI); requests are go-openai's request types as JSON, sent through the shared
//     OpenAI-compatible transport (internal/transport). It serves /v1/completions with a raw prompt,
//     /v1/chat/completions and /v1/responses. Decoding is greedy (temperature 0, always sent) with a
//     seed. Replies carry per-token log-probabilities with their top alternatives, in whichever layout
//     the server uses (decode.go). The transport bounds every attempt with a timeout, retries 429,
//     5xx, timeouts and connection errors with backoff, jitter and Retry-After, and bounds
//     concurrency; requests- and tokens-per-minute limits are the client's (limit.go).
//   - Cache (cache.go): a SQLite response store (modernc.org/sqlite) keyed on everything that changes
//     the output, with modes off, read, readwrite and replay-only.
//   - Accounting (account.go): a decorator that records tokens, latency, cache hits and retries of
//     every call, estimating tokens with a documented fallback tokenizer (tokens.go) when a server
//     reports no usage.
//   - New (registry.go) builds Accounting(Cache(backend)) from a Config. Backends register by name;
//     the offline reader (no LLM) in harness/llm/offline registers "offline".
//
// It is not a prompt library (methods build prompts), it does not stream, and it never stores or
// prints an API key: the key is read from the environment when a client is built and is redacted
// from any error a server echoes it into.
//
// harness/llm/llmtest holds the fake OpenAI-compatible server used by the tests. docs/llm-servers.md
// documents the servers' differences and the measured performance.
package llm
