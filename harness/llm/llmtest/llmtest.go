// Package llmtest is an in-process fake OpenAI-compatible server for tests. It replays the response
// shapes of vLLM, the llama.cpp server and OpenAI for /v1/completions and /v1/chat/completions
// (text, per-token log-probabilities in each server's layout, usage, and error bodies), injects
// faults on demand (429 with Retry-After, 500, slow replies, truncated JSON, bodies cut short,
// connection resets), and counts and records the requests it receives.
//
// It is for tests only (the ragbench binary does not import it); it is not a model. It listens on 127.0.0.1
// through httptest and answers deterministically.
package llmtest

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Flavor is a server whose response shapes are replayed.
type Flavor string

// The flavors.
const (
	VLLM     Flavor = "vllm"
	LlamaCPP Flavor = "llama.cpp"
	OpenAI   Flavor = "openai"
)

// Flavors lists every flavor.
var Flavors = []Flavor{VLLM, LlamaCPP, OpenAI}

// Fault is a misbehaviour injected into one reply.
type Fault int

// The faults.
const (
	// None answers normally.
	None Fault = iota
	// RateLimit answers 429 with Retry-After (Server.RetryAfter) and the flavor's error body.
	RateLimit
	// ServerError answers 500 with the flavor's error body.
	ServerError
	// BadRequest answers 400 with the flavor's error body (not retryable).
	BadRequest
	// Slow waits Server.SlowDelay (or until the client goes away) before answering normally.
	Slow
	// Truncated answers 200 with the first half of a valid JSON body (a consistent Content-Length).
	Truncated
	// CutBody announces the full Content-Length, writes half the body and closes the connection.
	CutBody
	// Reset closes the connection with a TCP reset before answering.
	Reset
)

// String names the fault.
func (f Fault) String() string {
	names := [...]string{"none", "rate-limit", "server-error", "bad-request", "slow", "truncated", "cut-body", "reset"}
	if int(f) >= 0 && int(f) < len(names) {
		return names[f]
	}
	return fmt.Sprintf("fault(%d)", int(f))
}

// Request is one received request.
type Request struct {
	Path   string
	Header http.Header
	Body   []byte
}

// Server is the fake server.
type Server struct {
	*httptest.Server
	Flavor Flavor
	// Delay is added to every reply (a simulated model).
	Delay time.Duration
	// SlowDelay is the delay of the Slow fault (default 5s).
	SlowDelay time.Duration
	// RetryAfter is the Retry-After header value of the RateLimit fault (default "1"); RetryAfterMs,
	// when set, is sent as retry-after-ms as OpenAI does.
	RetryAfter   string
	RetryAfterMs string
	// NoUsage leaves the usage block out of replies.
	NoUsage bool
	// Reply makes the completion text from the prompt (or the last message); default: "answer to "
	// plus the prompt's last word.
	Reply func(prompt string) string
	// Record keeps every request (headers and bodies); default true.
	Record bool
	// EchoAuth makes error bodies and truncated bodies quote the request's Authorization header, as a
	// careless proxy might; the client must redact it.
	EchoAuth bool

	mu       sync.Mutex
	faults   []Fault
	requests []Request

	count       atomic.Int64
	tokenize    atomic.Int64
	vocab       []string
	inFlight    atomic.Int64
	maxInFlight atomic.Int64
	closing     chan struct{}
}

// tb is the part of testing.TB that New uses.
type tb interface {
	Helper()
	Cleanup(func())
}

// New starts a server of the flavor on 127.0.0.1; it is closed when the test ends.
func New(t tb, flavor Flavor) *Server {
	t.Helper()
	s := &Server{Flavor: flavor, SlowDelay: 5 * time.Second, RetryAfter: "1", Record: true, closing: make(chan struct{})}
	s.Server = httptest.NewServer(http.HandlerFunc(s.handle))
	t.Cleanup(func() {
		close(s.closing)
		s.Server.CloseClientConnections()
		s.Server.Close()
	})
	return s
}

// BaseURL is the API root to give the client (URL + "/v1").
func (s *Server) BaseURL() string { return s.URL + "/v1" }

// Enqueue queues faults; each request takes the next one (None when the queue is empty).
func (s *Server) Enqueue(f ...Fault) {
	s.mu.Lock()
	s.faults = append(s.faults, f...)
	s.mu.Unlock()
}

// Count returns the number of requests received.
func (s *Server) Count() int64 { return s.count.Load() }

// MaxInFlight returns the largest number of requests handled at once.
func (s *Server) MaxInFlight() int64 { return s.maxInFlight.Load() }

// Requests returns the recorded requests.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.requests...)
}

func (s *Server) nextFault() Fault {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.faults) == 0 {
		return None
	}
	f := s.faults[0]
	s.faults = s.faults[1:]
	return f
}

// body is the part of a request the fake reads.
type body struct {
	Model    string `json:"model"`
	Prompt   any    `json:"prompt"`
	Messages []struct {
		Role    string `json:"role"`
		Content string `json:"content"`
	} `json:"messages"`
	MaxTokens   int      `json:"max_tokens"`
	Stop        []string `json:"stop"`
	Logprobs    any      `json:"logprobs"`
	TopLogprobs int      `json:"top_logprobs"`
	Temperature *float64 `json:"temperature"`
	Seed        *int     `json:"seed"`
}

// TokenizeCount returns the number of /tokenize and /detokenize requests (not in Count, Requests or
// the fault queue).
func (s *Server) TokenizeCount() int64 { return s.tokenize.Load() }

// handleTokenize serves POST /tokenize and /detokenize at the server root as vLLM and the llama.cpp
// server do (OpenAI has neither: 404). Tokens are Tokens(text) (words with their leading space), each
// given an id on first sight; a BOS token (id 0, "<s>") comes first when special tokens are asked for
// (vLLM add_special_tokens, default true; llama.cpp add_special, default false).
func (s *Server) handleTokenize(w http.ResponseWriter, r *http.Request) {
	s.tokenize.Add(1)
	if s.Flavor == OpenAI {
		s.writeError(w, http.StatusNotFound, "no route "+r.URL.Path)
		return
	}
	var req map[string]any
	if err := json.NewDecoder(io.LimitReader(r.Body, 8<<20)).Decode(&req); err != nil {
		s.writeError(w, http.StatusBadRequest, "invalid JSON: "+err.Error())
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.vocab) == 0 {
		s.vocab = []string{"<s>"}
	}
	w.Header().Set("Content-Type", "application/json")
	if r.URL.Path == "/detokenize" {
		var b strings.Builder
		ids, _ := req["tokens"].([]any)
		for _, x := range ids {
			if f, ok := x.(float64); ok && int(f) > 0 && int(f) < len(s.vocab) {
				b.WriteString(s.vocab[int(f)])
			}
		}
		key := "prompt"
		if s.Flavor == LlamaCPP {
			key = "content"
		}
		json.NewEncoder(w).Encode(map[string]any{key: b.String()})
		return
	}
	text, special := req["prompt"], req["add_special_tokens"]
	if s.Flavor == LlamaCPP {
		text, special = req["content"], req["add_special"]
	}
	str, _ := text.(string)
	ids := []int{}
	if special == true || (special == nil && s.Flavor == VLLM) {
		ids = append(ids, 0)
	}
	for _, tok := range Tokens(str) {
		id := -1
		for i, v := range s.vocab {
			if v == tok {
				id = i
				break
			}
		}
		if id < 0 {
			id = len(s.vocab)
			s.vocab = append(s.vocab, tok)
		}
		ids = append(ids, id)
	}
	if s.Flavor == VLLM {
		json.NewEncoder(w).Encode(map[string]any{"count": len(ids), "max_model_len": 4096, "tokens": ids})
		return
	}
	json.NewEncoder(w).Encode(map[string]any{"tokens": ids})
}

func (s *Server) handle(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path == "/tokenize" || r.URL.Path == "/detokenize" {
		s.handleTokenize(w, r)
		return
	}
	s.count.Add(1)
	n := s.inFlight.Add(1)
	defer s.inFlight.Add(-1)
	for {
		m := s.maxInFlight.Load()
		if n <= m || s.maxInFlight.CompareAndSwap(m, n) {
			break
		}
	}
	raw, err := io.ReadAll(io.LimitReader(r.Body, 8<<20))
	if err != nil {
		return
	}
	if s.Record {
		s.mu.Lock()
		s.requests = append(s.requests, Request{Path: r.URL.Path, Header: r.Header.Clone(), Body: raw})
		s.mu.Unlock()
	}
	fault := s.nextFault()
	auth := ""
	if s.EchoAuth {
		auth = " (received " + r.Header.Get("Authorization") + ")"
	}
	if s.Delay > 0 && !s.wait(r, s.Delay) {
		return
	}
	chat := strings.HasSuffix(r.URL.Path, "/chat/completions")
	if !chat && !strings.HasSuffix(r.URL.Path, "/completions") {
		s.writeError(w, http.StatusNotFound, "no route "+r.URL.Path)
		return
	}
	var b body
	if err := json.Unmarshal(raw, &b); err != nil {
		s.writeError(w, http.StatusBadRequest, "invalid JSON: "+err.Error())
		return
	}
	switch fault {
	case RateLimit:
		if s.RetryAfter != "" {
			w.Header().Set("Retry-After", s.RetryAfter)
		}
		if s.RetryAfterMs != "" {
			w.Header().Set("retry-after-ms", s.RetryAfterMs)
		}
		s.writeError(w, http.StatusTooManyRequests, "Rate limit reached for requests")
		return
	case ServerError:
		s.writeError(w, http.StatusInternalServerError, "internal server error")
		return
	case BadRequest:
		s.writeError(w, http.StatusBadRequest, "This model's maximum context length is 4096 tokens"+auth)
		return
	case Slow:
		if !s.wait(r, s.SlowDelay) {
			return
		}
	case Reset:
		if hj, ok := w.(http.Hijacker); ok {
			if conn, _, err := hj.Hijack(); err == nil {
				if tc, ok := conn.(*net.TCPConn); ok {
					tc.SetLinger(0)
				}
				conn.Close()
			}
		}
		return
	}
	out := s.reply(chat, b)
	w.Header().Set("Content-Type", "application/json")
	switch fault {
	case Truncated:
		out = append([]byte(`{"auth":"`+auth+`",`), out[1:len(out)/2]...)
	case CutBody:
		w.Header().Set("Content-Length", fmt.Sprint(len(out)))
		w.WriteHeader(http.StatusOK)
		w.Write(out[:len(out)/2])
		if f, ok := w.(http.Flusher); ok {
			f.Flush()
		}
		if hj, ok := w.(http.Hijacker); ok {
			if conn, _, err := hj.Hijack(); err == nil {
				conn.Close()
			}
		}
		return
	}
	w.Write(out)
}

// wait sleeps d unless the client goes away or the server closes; it reports whether to go on.
func (s *Server) wait(r *http.Request, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-r.Context().Done():
		return false
	case <-s.closing:
		return false
	}
}

func (s *Server) writeError(w http.ResponseWriter, code int, msg string) {
	var v any
	switch s.Flavor {
	case VLLM:
		v = map[string]any{"object": "error", "message": msg, "type": http.StatusText(code), "param": nil, "code": code}
	case LlamaCPP:
		typ := "server_error"
		if code < 500 {
			typ = "invalid_request_error"
		}
		v = map[string]any{"error": map[string]any{"code": code, "message": msg, "type": typ}}
	default:
		typ, c := "server_error", any(nil)
		if code == 429 {
			typ, c = "requests", "rate_limit_exceeded"
		} else if code < 500 {
			typ = "invalid_request_error"
		}
		v = map[string]any{"error": map[string]any{"message": msg, "type": typ, "param": nil, "code": c}}
	}
	b, _ := json.Marshal(v)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	w.Write(b)
}

// Tokens returns the fake tokenization of a reply: words with their leading space.
func Tokens(text string) []string {
	var toks []string
	start := 0
	for i := 1; i <= len(text); i++ {
		if i == len(text) || text[i] == ' ' {
			toks = append(toks, text[start:i])
			start = i
		}
	}
	return toks
}

// Logprob is the fake log-probability of the i-th generated token.
func Logprob(i int) float64 { return -0.125 * float64(i+1) }

// AltLogprob is the fake log-probability of the j-th alternative (j >= 1) at position i.
func AltLogprob(i, j int) float64 { return Logprob(i) - float64(j) }

func (s *Server) reply(chat bool, b body) []byte {
	prompt := ""
	if p, ok := b.Prompt.(string); ok {
		prompt = p
	}
	if chat && len(b.Messages) > 0 {
		prompt = b.Messages[len(b.Messages)-1].Content
	}
	var text string
	if s.Reply != nil {
		text = s.Reply(prompt)
	} else {
		f := strings.Fields(prompt)
		last := ""
		if len(f) > 0 {
			last = f[len(f)-1]
		}
		text = " answer to " + last
	}
	finish := "stop"
	for _, st := range b.Stop {
		if i := strings.Index(text, st); st != "" && i >= 0 {
			text = text[:i]
		}
	}
	toks := Tokens(text)
	if b.MaxTokens > 0 && len(toks) > b.MaxTokens {
		toks = toks[:b.MaxTokens]
		text = strings.Join(toks, "")
		finish = "length"
	}
	// How many alternatives were asked for, and whether logprobs were asked at all.
	want, top := false, 0
	switch v := b.Logprobs.(type) {
	case bool:
		want, top = v, b.TopLogprobs
	case float64:
		want, top = true, int(v)
	}
	usage := map[string]any{"prompt_tokens": len(strings.Fields(prompt)) + 1, "completion_tokens": len(toks), "total_tokens": len(strings.Fields(prompt)) + 1 + len(toks)}
	created := 1764460800
	var lp any
	if want {
		if chat || s.Flavor == LlamaCPP {
			lp = map[string]any{"content": contentLogprobs(toks, top, s.Flavor)}
		} else {
			lp = legacyLogprobs(toks, top)
		}
	}
	var choice map[string]any
	var resp map[string]any
	if chat {
		msg := map[string]any{"role": "assistant", "content": text}
		switch s.Flavor {
		case VLLM:
			msg["reasoning_content"] = nil
			msg["tool_calls"] = []any{}
		case OpenAI:
			msg["refusal"] = nil
			msg["annotations"] = []any{}
		}
		choice = map[string]any{"index": 0, "message": msg, "logprobs": lp, "finish_reason": finish}
		resp = map[string]any{"id": "chatcmpl-fake", "object": "chat.completion", "created": created, "model": b.Model, "choices": []any{choice}}
	} else {
		choice = map[string]any{"index": 0, "text": text, "logprobs": lp, "finish_reason": finish}
		resp = map[string]any{"id": "cmpl-fake", "object": "text_completion", "created": created, "model": b.Model, "choices": []any{choice}}
	}
	switch s.Flavor {
	case VLLM:
		choice["stop_reason"] = nil
		if !chat {
			choice["prompt_logprobs"] = nil
		}
		usage["prompt_tokens_details"] = nil
	case LlamaCPP:
		resp["system_fingerprint"] = "b6000-fake"
		resp["timings"] = map[string]any{"prompt_n": usage["prompt_tokens"], "predicted_n": len(toks), "prompt_ms": 1.5, "predicted_ms": 3.0}
	case OpenAI:
		resp["system_fingerprint"] = "fp_fake"
		usage["prompt_tokens_details"] = map[string]any{"cached_tokens": 0, "audio_tokens": 0}
		usage["completion_tokens_details"] = map[string]any{"reasoning_tokens": 0, "audio_tokens": 0, "accepted_prediction_tokens": 0, "rejected_prediction_tokens": 0}
	}
	if !s.NoUsage {
		resp["usage"] = usage
	}
	out, _ := json.Marshal(resp)
	return out
}

func bytesOf(s string) []int {
	b := make([]int, len(s))
	for i := range len(s) {
		b[i] = int(s[i])
	}
	return b
}

// contentLogprobs is the chat layout (OpenAI and vLLM chat; llama.cpp on both endpoints, which adds
// token ids).
func contentLogprobs(toks []string, top int, f Flavor) []any {
	out := make([]any, len(toks))
	for i, t := range toks {
		alts := []any{}
		for j := 0; j < top; j++ {
			at := t
			if j > 0 {
				at = fmt.Sprintf("%s~%d", t, j)
			}
			a := map[string]any{"token": at, "logprob": AltLogprob(i, j), "bytes": bytesOf(at)}
			if f == LlamaCPP {
				a["id"] = 1000 + j
			}
			alts = append(alts, a)
		}
		e := map[string]any{"token": t, "logprob": Logprob(i), "bytes": bytesOf(t), "top_logprobs": alts}
		if f == LlamaCPP {
			e["id"] = 1000
		}
		out[i] = e
	}
	return out
}

// legacyLogprobs is the completions layout of OpenAI and vLLM: parallel arrays, top_logprobs as one
// object per position holding the chosen token and the top alternatives.
func legacyLogprobs(toks []string, top int) map[string]any {
	lps := make([]float64, len(toks))
	tops := make([]any, len(toks))
	offs := make([]int, len(toks))
	off := 0
	for i, t := range toks {
		lps[i] = Logprob(i)
		offs[i] = off
		off += len(t)
		m := map[string]float64{t: Logprob(i)}
		for j := 1; j < top; j++ {
			m[fmt.Sprintf("%s~%d", t, j)] = AltLogprob(i, j)
		}
		tops[i] = m
	}
	out := map[string]any{"tokens": toks, "token_logprobs": lps, "text_offset": offs, "top_logprobs": tops}
	if top <= 0 {
		out["top_logprobs"] = nil
	}
	return out
}
