package transport

import (
	"fmt"
	"strings"
	"time"
	"unicode/utf8"
)

// StatusError is an HTTP error answer from the server.
type StatusError struct {
	// Code is the HTTP status code.
	Code int
	// Message is the server's error message when its body could be parsed.
	Message string
	// Excerpt is the start of the response body.
	Excerpt string
	// RetryAfter is the server's Retry-After (zero when absent).
	RetryAfter time.Duration
	// Body is the whole response body (not printed), for clients that read their server's own
	// error format.
	Body []byte
}

// Error implements error.
func (e *StatusError) Error() string {
	msg := e.Message
	if msg == "" {
		msg = "body " + QuoteExcerpt(e.Excerpt)
	}
	return fmt.Sprintf("server answered HTTP %d: %s", e.Code, msg)
}

// Retryable reports whether the status is worth retrying (429 and 5xx).
func (e *StatusError) Retryable() bool { return e.Code == 429 || e.Code >= 500 }

// TransportError is a failed HTTP exchange: a connection error, a reset, a body cut short, or an
// attempt that ran past its timeout. It is retried unless it cannot succeed (retry.Permanent).
type TransportError struct {
	Err     error
	Timeout bool
}

// Error implements error.
func (e *TransportError) Error() string {
	if e.Timeout {
		return "attempt timed out: " + e.Err.Error()
	}
	return "transport: " + e.Err.Error()
}

// Unwrap returns the underlying error.
func (e *TransportError) Unwrap() error { return e.Err }

// MalformedError is a response that could not be understood; it quotes an excerpt of the body. It is
// not retried.
type MalformedError struct {
	// Reason says what was wrong.
	Reason string
	// Excerpt is the start of the response body.
	Excerpt string
}

// Error implements error.
func (e *MalformedError) Error() string {
	return fmt.Sprintf("malformed response: %s; body %s", e.Reason, QuoteExcerpt(e.Excerpt))
}

// ExcerptLen bounds the body excerpts quoted in errors.
const ExcerptLen = 300

// Excerpt returns at most ExcerptLen bytes of b, cut at a rune boundary, with "…" when cut.
func Excerpt(b []byte) string {
	if len(b) <= ExcerptLen {
		return strings.ToValidUTF8(string(b), "\uFFFD")
	}
	cut := ExcerptLen
	for cut > 0 && !utf8.RuneStart(b[cut]) {
		cut--
	}
	return strings.ToValidUTF8(string(b[:cut]), "\uFFFD") + "…"
}

// QuoteExcerpt quotes an excerpt for an error message ("(empty)" for none).
func QuoteExcerpt(s string) string {
	if s == "" {
		return "(empty)"
	}
	return fmt.Sprintf("%q", s)
}
