package ngram

import (
	"context"
	"io"
	"math/rand"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"
)

// lockedBuffer is a log the server goroutine writes while the test reads it.
type lockedBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func TestListenAndServe(t *testing.T) {
	ix, _ := buildDocs(t, joinDocs(randomDocs(rand.New(rand.NewSource(1)), 10, 20, 3)), BuildOptions{ShardTokens: 200})
	srv := &Server{Index: ix, Mode: Exact}
	if err := ListenAndServe(context.Background(), srv, "256.0.0.1:bad", io.Discard); err == nil {
		t.Fatal("an address that cannot be listened on: want an error")
	}
	ctx, cancel := context.WithCancel(context.Background())
	var log lockedBuffer
	errc := make(chan error, 1)
	go func() { errc <- ListenAndServe(ctx, srv, "127.0.0.1:0", &log) }()
	var url string
	for i := 0; i < 200 && url == ""; i++ {
		if _, rest, ok := strings.Cut(log.String(), " on http://"); ok {
			url = "http://" + strings.TrimSpace(rest)
		}
		time.Sleep(10 * time.Millisecond)
	}
	if url == "" {
		t.Fatalf("no listening line in the log: %q", log.String())
	}
	if strings.Contains(log.String(), "warning") {
		t.Errorf("a loopback address got the beyond-this-machine warning: %q", log.String())
	}
	resp, err := http.Post(url, "application/json", strings.NewReader(`{"index":"any","query_type":"count","query":"a"}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Errorf("count request: HTTP %d, want 200", resp.StatusCode)
	}
	cancel()
	select {
	case err := <-errc:
		if err != nil {
			t.Errorf("shutdown on a cancelled context: %v, want nil", err)
		}
	case <-time.After(6 * time.Second):
		t.Fatal("ListenAndServe did not return after its context was cancelled")
	}
}
