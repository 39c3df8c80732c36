package llm_test

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ragbench/ragbench/harness/llm"
	"github.com/ragbench/ragbench/harness/llm/llmtest"
)

const testKey = "sk-test-DO-NOT-LEAK-0123456789abcdef"

// newClient builds a client against srv with fast backoff.
func newClient(t *testing.T, srv *llmtest.Server, mod func(*llm.Config)) *llm.OpenAI {
	t.Helper()
	t.Setenv(llm.EnvAPIKey, testKey)
	cfg := llm.Config{BaseURL: srv.BaseURL(), Model: "test-model", BackoffBase: 5 * time.Millisecond, BackoffMax: 50 * time.Millisecond, Timeout: 5 * time.Second}
	if mod != nil {
		mod(&cfg)
	}
	c, err := llm.NewOpenAI(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestGenerateShapes(t *testing.T) {
	for _, fl := range llmtest.Flavors {
		for _, ep := range []llm.Endpoint{llm.Completions, llm.Chat} {
			for _, top := range []int{0, 1, 3} {
				name := string(fl) + "/" + string(ep) + "/top" + string(rune('0'+top))
				t.Run(name, func(t *testing.T) {
					srv := llmtest.New(t, fl)
					c := newClient(t, srv, nil)
					req := llm.Request{Endpoint: ep, Prompt: "Q: capital of France", Logprobs: top}
					if ep == llm.Chat {
						req = llm.Request{Endpoint: ep, Messages: []llm.Message{{Role: "user", Content: "capital of France"}}, Logprobs: top}
					}
					resp, err := c.Generate(context.Background(), req)
					if err != nil {
						t.Fatal(err)
					}
					if resp.Text != " answer to France" {
						t.Fatalf("text %q", resp.Text)
					}
					if resp.FinishReason != "stop" || resp.Usage.CompletionTokens != 3 || resp.Usage.PromptTokens == 0 || resp.Usage.Estimated {
						t.Fatalf("finish %q usage %+v", resp.FinishReason, resp.Usage)
					}
					if top == 0 {
						if len(resp.Tokens) != 0 {
							t.Fatalf("tokens without logprobs asked: %+v", resp.Tokens)
						}
						return
					}
					want := llmtest.Tokens(resp.Text)
					if len(resp.Tokens) != len(want) {
						t.Fatalf("%d tokens, want %d: %+v", len(resp.Tokens), len(want), resp.Tokens)
					}
					var joined strings.Builder
					for i, tok := range resp.Tokens {
						joined.WriteString(tok.Text)
						if tok.Text != want[i] || tok.Logprob != llmtest.Logprob(i) {
							t.Fatalf("token %d = %+v, want %q %v", i, tok, want[i], llmtest.Logprob(i))
						}
						if len(tok.Top) != top {
							t.Fatalf("token %d has %d alternatives, want %d", i, len(tok.Top), top)
						}
						for j := 1; j < len(tok.Top); j++ {
							if tok.Top[j].Logprob > tok.Top[j-1].Logprob {
								t.Fatalf("alternatives not sorted: %+v", tok.Top)
							}
						}
						if tok.Top[0].Text != tok.Text {
							t.Fatalf("best alternative %q is not the greedy token %q", tok.Top[0].Text, tok.Text)
						}
					}
					if joined.String() != resp.Text {
						t.Fatalf("tokens join to %q, text %q", joined.String(), resp.Text)
					}
				})
			}
		}
	}
}

func TestRequestBody(t *testing.T) {
	seed := 7
	cases := []struct {
		name string
		req  llm.Request
		want map[string]any // members the body must have (nil value: must be absent)
	}{
		{"greedy default sends temperature 0 and the config seed", llm.Request{Prompt: "x"},
			map[string]any{"temperature": 0.0, "seed": 42.0, "model": "test-model", "prompt": "x"}},
		{"explicit seed, stop and max tokens are sent", llm.Request{Prompt: "x", Seed: &seed, Stop: []string{"\n"}, MaxTokens: 5},
			map[string]any{"seed": 7.0, "max_tokens": 5.0, "stop": []any{"\n"}}},
		{"completions logprobs is the alternative count", llm.Request{Prompt: "x", Logprobs: 4},
			map[string]any{"logprobs": 4.0}},
		{"logprobs -1 asks for the chosen token only", llm.Request{Prompt: "x", Logprobs: -1},
			map[string]any{"logprobs": 0.0}},
		{"non-zero temperature is sent as is", llm.Request{Prompt: "x", Temperature: 0.5},
			map[string]any{"temperature": 0.5}},
		{"chat logprobs is a flag plus top_logprobs", llm.Request{Endpoint: llm.Chat, Messages: []llm.Message{{Role: "user", Content: "hi"}}, Logprobs: 2},
			map[string]any{"logprobs": true, "top_logprobs": 2.0, "temperature": 0.0}},
		{"no logprobs asked: none sent", llm.Request{Prompt: "x"},
			map[string]any{"logprobs": nil, "top_logprobs": nil}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv := llmtest.New(t, llmtest.VLLM)
			c := newClient(t, srv, func(c *llm.Config) { c.Seed = 42 })
			if _, err := c.Generate(context.Background(), tc.req); err != nil {
				t.Fatal(err)
			}
			reqs := srv.Requests()
			var body map[string]any
			if err := json.Unmarshal(reqs[0].Body, &body); err != nil {
				t.Fatalf("body %s: %v", reqs[0].Body, err)
			}
			for k, v := range tc.want {
				got, ok := body[k]
				if v == nil {
					if ok {
						t.Fatalf("%s present (%v) in %s", k, got, reqs[0].Body)
					}
					continue
				}
				gb, _ := json.Marshal(got)
				wb, _ := json.Marshal(v)
				if !ok || string(gb) != string(wb) {
					t.Fatalf("%s = %s, want %s (body %s)", k, gb, wb, reqs[0].Body)
				}
			}
			if got := reqs[0].Header.Get("Authorization"); got != "Bearer "+testKey {
				t.Fatalf("authorization header %q", got)
			}
		})
	}
}

func TestRetriesRecover(t *testing.T) {
	cases := []struct {
		name   string
		faults []llmtest.Fault
	}{
		{"429", []llmtest.Fault{llmtest.RateLimit}},
		{"500", []llmtest.Fault{llmtest.ServerError, llmtest.ServerError}},
		{"connection reset", []llmtest.Fault{llmtest.Reset}},
		{"body cut short", []llmtest.Fault{llmtest.CutBody}},
		{"slow reply past the attempt timeout", []llmtest.Fault{llmtest.Slow}},
		{"all of them in a row", []llmtest.Fault{llmtest.RateLimit, llmtest.ServerError, llmtest.Reset, llmtest.CutBody, llmtest.Slow}},
	}
	for _, tc := range cases {
		for _, fl := range llmtest.Flavors {
			t.Run(tc.name+"/"+string(fl), func(t *testing.T) {
				srv := llmtest.New(t, fl)
				srv.RetryAfter, srv.RetryAfterMs = "", "20"
				c := newClient(t, srv, func(c *llm.Config) { c.Timeout = 150 * time.Millisecond })
				srv.Enqueue(tc.faults...)
				resp, err := c.Generate(context.Background(), llm.Request{Prompt: "hello world"})
				if err != nil {
					t.Fatalf("did not recover: %v", err)
				}
				if resp.Retries != len(tc.faults) || srv.Count() != int64(len(tc.faults)+1) {
					t.Fatalf("retries %d, server saw %d requests; want %d and %d", resp.Retries, srv.Count(), len(tc.faults), len(tc.faults)+1)
				}
				if resp.Text != " answer to world" {
					t.Fatalf("text %q", resp.Text)
				}
			})
		}
	}
}

func TestRetryAfterIsHonoured(t *testing.T) {
	cases := []struct {
		name           string
		after, afterMs string
		min            time.Duration
	}{
		{"Retry-After seconds", "1", "", time.Second},
		{"retry-after-ms", "", "300", 300 * time.Millisecond},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv := llmtest.New(t, llmtest.OpenAI)
			srv.RetryAfter, srv.RetryAfterMs = tc.after, tc.afterMs
			c := newClient(t, srv, nil) // backoff without Retry-After would be ≤ 5 ms
			srv.Enqueue(llmtest.RateLimit)
			start := time.Now()
			if _, err := c.Generate(context.Background(), llm.Request{Prompt: "x"}); err != nil {
				t.Fatal(err)
			}
			if el := time.Since(start); el < tc.min {
				t.Fatalf("retried after %v, server asked for %v", el, tc.min)
			}
		})
	}
}

func TestErrorsAreNotRetriedAndQuoteTheBody(t *testing.T) {
	cases := []struct {
		name   string
		fault  llmtest.Fault
		check  func(error) bool
		quoted string
	}{
		{"400 is final", llmtest.BadRequest, func(err error) bool {
			var se *llm.StatusError
			return errors.As(err, &se) && se.Code == 400 && !se.Retryable()
		}, "maximum context length"},
		{"truncated JSON is a malformed response", llmtest.Truncated, func(err error) bool {
			var me *llm.MalformedError
			return errors.As(err, &me) && me.Excerpt != ""
		}, `{\"`},
	}
	for _, tc := range cases {
		for _, fl := range llmtest.Flavors {
			t.Run(tc.name+"/"+string(fl), func(t *testing.T) {
				srv := llmtest.New(t, fl)
				c := newClient(t, srv, nil)
				srv.Enqueue(tc.fault)
				_, err := c.Generate(context.Background(), llm.Request{Prompt: "x"})
				if err == nil || !tc.check(err) {
					t.Fatalf("error %v", err)
				}
				if !strings.Contains(err.Error(), tc.quoted) {
					t.Fatalf("error does not quote the body (%q): %v", tc.quoted, err)
				}
				if srv.Count() != 1 {
					t.Fatalf("server saw %d requests, want 1", srv.Count())
				}
			})
		}
	}
}

func TestGivesUpAfterMaxRetries(t *testing.T) {
	srv := llmtest.New(t, llmtest.VLLM)
	c := newClient(t, srv, func(c *llm.Config) { c.MaxRetries = 2 })
	srv.Enqueue(llmtest.ServerError, llmtest.ServerError, llmtest.ServerError, llmtest.ServerError)
	_, err := c.Generate(context.Background(), llm.Request{Prompt: "x"})
	var se *llm.StatusError
	if !errors.As(err, &se) || se.Code != 500 || !strings.Contains(err.Error(), "gave up after 3 attempts") {
		t.Fatalf("error %v", err)
	}
	if srv.Count() != 3 {
		t.Fatalf("server saw %d requests, want 3", srv.Count())
	}
}

func TestConcurrencyIsBounded(t *testing.T) {
	srv := llmtest.New(t, llmtest.VLLM)
	srv.Delay = 30 * time.Millisecond
	c := newClient(t, srv, func(c *llm.Config) { c.Concurrency = 3 })
	var wg sync.WaitGroup
	for i := 0; i < 24; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := c.Generate(context.Background(), llm.Request{Prompt: "x"}); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	if m := srv.MaxInFlight(); m > 3 || m < 2 {
		t.Fatalf("max in flight %d, want 3 (bound) and more than 1", m)
	}
}

// drive runs workers calling Generate until d has passed and returns the number of calls made.
func drive(t *testing.T, g llm.Generator, workers int, d time.Duration, req llm.Request) (int, time.Duration) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	var mu sync.Mutex
	n := 0
	start := time.Now()
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				if _, err := g.Generate(ctx, req); err == nil {
					mu.Lock()
					n++
					mu.Unlock()
				}
			}
		}()
	}
	wg.Wait()
	return n, time.Since(start)
}

func TestRateLimitsHold(t *testing.T) {
	if testing.Short() {
		t.Skip("measures rates over seconds")
	}
	cases := []struct {
		name     string
		rpm, tpm int
		req      llm.Request
		perCall  float64 // units per call
		perMin   float64
	}{
		// 1200 RPM = 20/s with a 20-request burst.
		{"requests per minute", 1200, 0, llm.Request{Prompt: "x", MaxTokens: 4}, 1, 1200},
		// 6000 TPM = 100 tokens/s; each call is estimated at 1 prompt token + max(4,16) = 17 (the
		// server reports no usage, so nothing is corrected afterwards).
		{"tokens per minute", 0, 6000, llm.Request{Prompt: "x", MaxTokens: 4}, 17, 6000},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv := llmtest.New(t, llmtest.VLLM)
			srv.NoUsage = true
			srv.Record = false
			c := newClient(t, srv, func(c *llm.Config) { c.RPM, c.TPM, c.Concurrency = tc.rpm, tc.tpm, 64 })
			n, el := drive(t, c, 32, 1500*time.Millisecond, tc.req)
			rate := tc.perMin / 60 // units per second
			burst := math.Ceil(rate)
			maxCalls := (burst+rate*el.Seconds())/tc.perCall + 1
			t.Logf("%d calls (%d attempts) in %v = %.1f calls/s; limit allows at most %.1f calls (%.1f/s sustained)", n, c.Attempts(), el, float64(n)/el.Seconds(), maxCalls, rate/tc.perCall)
			if float64(n) > maxCalls {
				t.Fatalf("%d calls exceed the limit's %.1f", n, maxCalls)
			}
			if float64(n) < 0.7*(rate*el.Seconds())/tc.perCall {
				t.Fatalf("%d calls: the limiter starves callers (want about %.0f)", n, rate*el.Seconds()/tc.perCall)
			}
		})
	}
}

func TestCancellationStopsPromptly(t *testing.T) {
	cases := []struct {
		name  string
		setup func(*llmtest.Server) llm.Config
	}{
		{"during a slow reply", func(s *llmtest.Server) llm.Config {
			s.Enqueue(llmtest.Slow)
			return llm.Config{}
		}},
		{"during a Retry-After wait", func(s *llmtest.Server) llm.Config {
			s.RetryAfter = "30"
			s.Enqueue(llmtest.RateLimit)
			return llm.Config{}
		}},
		{"while waiting for a concurrency slot", func(s *llmtest.Server) llm.Config {
			s.Delay = 5 * time.Second
			return llm.Config{Concurrency: 1}
		}},
		{"while waiting for the rate limit", func(s *llmtest.Server) llm.Config {
			return llm.Config{RPM: 1}
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv := llmtest.New(t, llmtest.VLLM)
			cfg := tc.setup(srv)
			c := newClient(t, srv, func(c *llm.Config) { c.Concurrency, c.RPM = cfg.Concurrency, cfg.RPM })
			if cfg.Concurrency == 1 || cfg.RPM == 1 {
				// Occupy the slot or use up the rate.
				bg, stop := context.WithCancel(context.Background())
				defer stop()
				done := make(chan struct{})
				go func() { c.Generate(bg, llm.Request{Prompt: "first"}); close(done) }()
				defer func() { stop(); <-done }()
				time.Sleep(50 * time.Millisecond)
			}
			ctx, cancel := context.WithCancel(context.Background())
			errc := make(chan error, 1)
			go func() {
				_, err := c.Generate(ctx, llm.Request{Prompt: "x"})
				errc <- err
			}()
			time.Sleep(80 * time.Millisecond)
			cancel()
			start := time.Now()
			select {
			case err := <-errc:
				// Every wait here is 5 s or more (slow reply, Retry-After 30, a 5 s slot holder, one
				// request a minute): 1 s tells a cancelled wait from a waited-out one with room for a
				// loaded machine (it was 100 ms).
				if el := time.Since(start); el > time.Second {
					t.Fatalf("returned %v after cancel", el)
				}
				if !errors.Is(err, context.Canceled) {
					t.Fatalf("error %v, want context.Canceled", err)
				}
			case <-time.After(4 * time.Second):
				t.Fatal("Generate did not return within 4s of cancel")
			}
		})
	}
}

func TestInvalidRequests(t *testing.T) {
	srv := llmtest.New(t, llmtest.VLLM)
	c := newClient(t, srv, nil)
	cases := []struct {
		name string
		req  llm.Request
	}{
		{"empty prompt", llm.Request{Endpoint: llm.Completions}},
		{"chat without messages", llm.Request{Endpoint: llm.Chat}},
		{"unknown endpoint", llm.Request{Endpoint: "embeddings", Prompt: "x"}},
		{"negative max tokens", llm.Request{Prompt: "x", MaxTokens: -1}},
		{"temperature above 2", llm.Request{Prompt: "x", Temperature: 3}},
		{"too many alternatives", llm.Request{Prompt: "x", Logprobs: 50}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := c.Generate(context.Background(), tc.req); err == nil {
				t.Fatal("no error")
			}
		})
	}
	if srv.Count() != 0 {
		t.Fatalf("invalid requests reached the server %d times", srv.Count())
	}
}

func TestConfigValidate(t *testing.T) {
	cases := []struct {
		name string
		cfg  llm.Config
		ok   bool
	}{
		{"resolved defaults with a model are valid", llm.Config{Model: "m"}, true},
		{"missing model", llm.Config{}, false},
		{"bad scheme", llm.Config{Model: "m", BaseURL: "ftp://x"}, false},
		{"negative rpm", llm.Config{Model: "m", RPM: -1}, false},
		{"cache mode without path", llm.Config{Model: "m", Cache: llm.CacheConfig{Mode: llm.CacheReadWrite}}, false},
		{"unknown cache mode", llm.Config{Model: "m", Cache: llm.CacheConfig{Path: "x", Mode: "sometimes"}}, false},
		{"offline needs no URL or model", llm.Config{Backend: "offline"}, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.cfg.Resolve(func(string) string { return "" }).Validate()
			if (err == nil) != tc.ok {
				t.Fatalf("Validate = %v, want ok=%v", err, tc.ok)
			}
		})
	}
}

// TestMaxWaitBoundsARequest: against a server that never answers, a request gives up after
// max_wait, attempts and retries included, with an error saying so (120 s × 7 attempts was about
// 15 minutes of silence per question).
func TestMaxWaitBoundsARequest(t *testing.T) {
	srv := llmtest.New(t, llmtest.VLLM)
	srv.SlowDelay = time.Minute
	srv.Enqueue(llmtest.Slow, llmtest.Slow, llmtest.Slow, llmtest.Slow, llmtest.Slow)
	c := newClient(t, srv, func(c *llm.Config) {
		c.Timeout = 150 * time.Millisecond
		c.MaxRetries = 6
		c.BackoffBase, c.BackoffMax = time.Millisecond, time.Millisecond
		c.MaxWait = 400 * time.Millisecond
	})
	start := time.Now()
	_, err := c.Generate(context.Background(), llm.Request{Prompt: "x"})
	if el := time.Since(start); el > 2*time.Second {
		t.Errorf("gave up after %v, want about max_wait 400ms", el)
	}
	if err == nil || !strings.Contains(err.Error(), "no answer within llm.max_wait 400ms") {
		t.Fatalf("error %v; want one naming max_wait", err)
	}
	if d := (llm.Config{}).Defaults().MaxWait; d <= 0 || d > 5*time.Minute {
		t.Errorf("default max_wait %v; want a few minutes at most", d)
	}
}
