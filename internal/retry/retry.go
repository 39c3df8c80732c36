// Package retry holds the pieces the HTTP clients (LLM, embeddings, Elasticsearch, Infini-gram API) share
// when they retry: reading a server's Retry-After, waiting in a way that cancellation interrupts, and a
// jittered exponential backoff.
//
// It decides nothing about which failures are retryable; each client does.
package retry

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// ParseAfter reads retry-after-ms (OpenAI's extension, milliseconds) or Retry-After (seconds, possibly
// fractional, or an HTTP date) from h. It returns 0 when neither is present or usable.
func ParseAfter(h http.Header, now time.Time) time.Duration {
	if h == nil {
		return 0
	}
	if v := strings.TrimSpace(h.Get("Retry-After-Ms")); v != "" {
		if ms, err := strconv.ParseFloat(v, 64); err == nil && ms > 0 && ms < 1e9 {
			return time.Duration(ms * float64(time.Millisecond))
		}
	}
	v := strings.TrimSpace(h.Get("Retry-After"))
	if v == "" {
		return 0
	}
	if s, err := strconv.ParseFloat(v, 64); err == nil {
		if s > 0 && s < 1e6 {
			return time.Duration(s * float64(time.Second))
		}
		return 0
	}
	if t, err := http.ParseTime(v); err == nil && t.After(now) {
		return t.Sub(now)
	}
	return 0
}

// Sleep waits for d or until ctx is done, whichever comes first, and returns ctx's error in the latter
// case. A non-positive d only checks ctx.
func Sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// Backoff is an exponential backoff with jitter: each Next is drawn uniformly from [d/2, 3d/2), where
// d starts at the base delay and doubles after every call, up to a cap.
type Backoff struct {
	d, max time.Duration
}

// NewBackoff returns a backoff starting at base (which must be positive) and doubling up to max.
func NewBackoff(base, max time.Duration) *Backoff { return &Backoff{d: base, max: max} }

// Next returns the next wait and doubles the delay.
func (b *Backoff) Next() time.Duration {
	w := b.d/2 + time.Duration(rand.Int64N(int64(b.d)))
	b.d = min(2*b.d, b.max)
	return w
}

// Permanent reports whether a network error cannot succeed on a retry: a DNS name that does not
// resolve (or no resolver to ask), and a connection refused by a loopback address (nothing listens on
// this machine's port, which no wait changes). Timeouts, resets and refusals by remote hosts (which may
// be restarting) are not permanent.
func Permanent(err error) bool {
	if err == nil {
		return false
	}
	var dns *net.DNSError
	if errors.As(err, &dns) {
		return !dns.IsTimeout
	}
	if errors.Is(err, syscall.ECONNREFUSED) {
		var op *net.OpError
		if errors.As(err, &op) && op.Addr != nil {
			if ta, ok := op.Addr.(*net.TCPAddr); ok {
				return ta.IP.IsLoopback()
			}
		}
	}
	return false
}

// Notifier is told about each retry before its wait: which attempt failed, why, and how long the
// client waits before the next. Clients print it on stderr so that no retry is silent.
type Notifier func(what string, attempt int, err error, wait time.Duration)

// Printer returns a Notifier that writes one line per retry to w ("" prefix allowed); nil w gives nil.
func Printer(w io.Writer) Notifier {
	if w == nil {
		return nil
	}
	return func(what string, attempt int, err error, wait time.Duration) {
		fmt.Fprintf(w, "%s: attempt %d failed (%v); retrying in %s\n", what, attempt, err, wait.Round(time.Millisecond))
	}
}
