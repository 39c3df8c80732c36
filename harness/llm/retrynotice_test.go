package llm_test

import (
	"context"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/ragbench/ragbench/harness/llm"
	"github.com/ragbench/ragbench/harness/llm/llmtest"
)

// retryLog records the retries a client reports.
type retryLog struct {
	mu    sync.Mutex
	calls int
}

func (r *retryLog) note(string, int, error, time.Duration) { r.mu.Lock(); r.calls++; r.mu.Unlock() }

func TestRetriesAreReported(t *testing.T) {
	srv := llmtest.New(t, llmtest.Flavors[0])
	srv.RetryAfter, srv.RetryAfterMs = "", "5"
	var log retryLog
	c := newClient(t, srv, func(c *llm.Config) { c.OnRetry = log.note })
	srv.Enqueue(llmtest.RateLimit, llmtest.ServerError)
	if _, err := c.Generate(context.Background(), llm.Request{Prompt: "hello world"}); err != nil {
		t.Fatal(err)
	}
	if log.calls != 2 {
		t.Fatalf("OnRetry told of %d retries, want 2", log.calls)
	}
}

// TestRefusedLocalPortIsNotRetried: nothing listens on the local port, and no wait changes that, so
// the client must fail at the first attempt instead of retrying silently for seconds.
func TestRefusedLocalPortIsNotRetried(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	t.Setenv(llm.EnvAPIKey, testKey)
	var log retryLog
	c, err := llm.NewOpenAI(llm.Config{BaseURL: "http://" + addr + "/v1", Model: "m", BackoffBase: 200 * time.Millisecond, OnRetry: log.note})
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	_, err = c.Generate(context.Background(), llm.Request{Prompt: "hi"})
	if err == nil || log.calls != 0 || c.Attempts() != 1 || time.Since(start) > 2*time.Second {
		t.Fatalf("err %v after %d attempt(s), %d retries, %v; want one failed attempt", err, c.Attempts(), log.calls, time.Since(start))
	}
}
