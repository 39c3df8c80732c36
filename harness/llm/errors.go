package llm

import (
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"
)

// ErrCacheMiss is returned in replay-only cache mode when a request is not in the cache.
var ErrCacheMiss = errors.New("llm cache miss in replay-only mode")

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
}

// Error implements error.
func (e *StatusError) Error() string {
	msg := e.Message
	if msg == "" {
		msg = "body " + quoteExcerpt(e.Excerpt)
	}
	return fmt.Sprintf("server answered HTTP %d: %s", e.Code, msg)
}

// Retryable reports whether the status is worth retrying (429 and 5xx).
func (e *StatusError) Retryable() bool { return e.Code == 429 || e.Code >= 500 }

// MalformedError is a response that could not be understood; it quotes an excerpt of the body.
type MalformedError struct {
	// Reason says what was wrong.
	Reason string
	// Excerpt is the start of the response body.
	Excerpt string
}

// Error implements error.
func (e *MalformedError) Error() string {
	return fmt.Sprintf("malformed response: %s; body %s", e.Reason, quoteExcerpt(e.Excerpt))
}

// excerptLen bounds the body excerpts quoted in errors.
const excerptLen = 300

// excerpt returns at most excerptLen bytes of b, cut at a rune boundary, with "…" when cut.
func excerpt(b []byte) string {
	if len(b) <= excerptLen {
		return strings.ToValidUTF8(string(b), "\uFFFD")
	}
	cut := excerptLen
	for cut > 0 && !utf8.RuneStart(b[cut]) {
		cut--
	}
	return strings.ToValidUTF8(string(b[:cut]), "\uFFFD") + "…"
}

func quoteExcerpt(s string) string {
	if s == "" {
		return "(empty)"
	}
	return fmt.Sprintf("%q", s)
}

// redactor removes a secret from error messages. It is a defence in depth: the client never puts the
// key into an error, but a server may echo it back in an error body.
type redactor struct{ secret string }

func (r redactor) string(s string) string {
	if len(r.secret) < 4 {
		return s
	}
	return strings.ReplaceAll(s, r.secret, "[redacted]")
}

// err wraps err so that its message has the secret removed; errors.Is/As still see the original.
func (r redactor) err(err error) error {
	if err == nil || len(r.secret) < 4 || !strings.Contains(err.Error(), r.secret) {
		return err
	}
	return &redactedError{msg: r.string(err.Error()), err: err}
}

type redactedError struct {
	msg string
	err error
}

func (e *redactedError) Error() string { return e.msg }
func (e *redactedError) Unwrap() error { return e.err }
