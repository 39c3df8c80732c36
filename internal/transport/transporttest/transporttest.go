// Package transporttest is a recording server for the tests of the transport's clients: it answers
// every request with one fixed body and keeps what it was sent, so that a test can pin the exact bytes,
// path and headers of a client's requests.
package transporttest

import (
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
)

// Request is what the server received.
type Request struct {
	Path   string
	Header http.Header
	Body   []byte
}

// Recorder is the server.
type Recorder struct {
	URL string
	mu  sync.Mutex
	got []Request
}

// New starts a server that answers every request with answer (JSON, status 200); it stops with t.
func New(t testing.TB, answer string) *Recorder {
	rec := &Recorder{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		rec.mu.Lock()
		rec.got = append(rec.got, Request{Path: r.URL.Path, Header: r.Header.Clone(), Body: b})
		rec.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, answer)
	}))
	t.Cleanup(srv.Close)
	rec.URL = srv.URL
	return rec
}

// Last returns the last request received (the zero Request before any).
func (r *Recorder) Last() Request {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.got) == 0 {
		return Request{}
	}
	return r.got[len(r.got)-1]
}
