// Package llm is the generation layer: the Generator interface and the stack every method uses to
// talk to a language model.
//
//   - OpenAI (openai.go): one backend for any OpenAI-compatible server (vLLM, the llama.cpp server,
//     Ollama, OpenAI), built on go-openai. It serves /v1/completions with a raw prompt and
//     /v1/chat/completions. Decoding is greedy (temperature 0, always sent) with a seed. Replies carry
//     per-token log-probabilities with their top alternatives, in whichever layout the server uses
//     (decode.go). Every attempt has a timeout; 429, 5xx, timeouts and connection errors are retried
//     with backoff, jitter and Retry-After. Concurrency is bounded, with requests- and
//     tokens-per-minute limits (limit.go).
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
