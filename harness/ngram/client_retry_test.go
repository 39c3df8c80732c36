package ngram

import (
	"bytes"
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/ragbench/ragbench/internal/retry"
)

// TestClientDoesNotRetryTheHopeless: a refused loopback port fails at once, not after the backoff
// schedule; a flaky server's retries are each printed, and the total wait is capped.
func TestClientDoesNotRetryTheHopeless(t *testing.T) {
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	addr := ln.Addr().String()
	ln.Close()
	var log bytes.Buffer
	// A retry would wait at least the backoff, 10 s: far beyond the 2 s bound below.
	c := &Client{URL: "http://" + addr + "/", Backoff: 10 * time.Second, OnRetry: retry.Printer(&log)}
	start := time.Now()
	_, err := c.Count(context.Background(), "a")
	if err == nil || !strings.Contains(err.Error(), "not retried") {
		t.Fatalf("refused loopback: %v", err)
	}
	if d := time.Since(start); d > 2*time.Second || log.Len() != 0 {
		t.Errorf("refused loopback took %s with retries %q", d, log.String())
	}

	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusServiceUnavailable)
		w.Write([]byte(`{"error":"busy"}`))
	}))
	defer ts.Close()
	log.Reset()
	c = &Client{URL: ts.URL, Backoff: 20 * time.Millisecond, MaxRetries: 10, MaxWait: 100 * time.Millisecond, OnRetry: retry.Printer(&log)}
	start = time.Now()
	_, err = c.Count(context.Background(), "a")
	if err == nil || !strings.Contains(err.Error(), "the cap") {
		t.Fatalf("capped retries: %v", err)
	}
	// Uncapped, ten retries from 20 ms would wait 10 s or more; 3 s leaves a loaded machine room.
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("the 100 ms cap let it wait %s", d)
	}
	if n := strings.Count(log.String(), "retrying in"); n < 1 || !strings.Contains(log.String(), "503") {
		t.Errorf("retries not printed with their reason: %q", log.String())
	}
}
