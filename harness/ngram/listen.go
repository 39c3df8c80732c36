package ngram

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"time"
)

// ListenAndServe serves s on addr until ctx is done, then shuts down gracefully (at most 5 s). It
// writes to log the address it listens on and, when that address reaches beyond this machine, a
// warning without a bearer token (s.Token) or a note that requests need it. The HTTP server bounds
// header, read, write and idle times and header size, so that a slow or hostile client cannot hold a
// connection.
func ListenAndServe(ctx context.Context, s *Server, addr string, log io.Writer) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	if ta, ok := ln.Addr().(*net.TCPAddr); ok && !ta.IP.IsLoopback() {
		if s.Token == "" {
			fmt.Fprintf(log, "ngram serve: warning: listening on %s, beyond this machine, with no bearer token; pass --token-env VAR to require one\n", ln.Addr())
		} else {
			fmt.Fprintf(log, "ngram serve: listening on %s, beyond this machine; requests need the bearer token\n", ln.Addr())
		}
	}
	hs := &http.Server{Handler: s.Handler(), ReadHeaderTimeout: 5 * time.Second, ReadTimeout: 30 * time.Second,
		WriteTimeout: 30 * time.Second, IdleTimeout: 60 * time.Second, MaxHeaderBytes: 16 << 10}
	fmt.Fprintf(log, "ngram serve: %s (%s mode) on http://%s/\n", s.Index, s.Mode, ln.Addr())
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		return hs.Shutdown(sctx)
	}
}
