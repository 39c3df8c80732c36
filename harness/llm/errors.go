package llm

import (
	"errors"

	"github.com/ragbench/ragbench/internal/transport"
)

// ErrCacheMiss is returned in replay-only cache mode when a request is not in the cache.
var ErrCacheMiss = errors.New("llm cache miss in replay-only mode")

// StatusError is an HTTP error answer from the server.
type StatusError = transport.StatusError

// MalformedError is a response that could not be understood; it quotes an excerpt of the body.
type MalformedError = transport.MalformedError

// TransportError is a failed HTTP exchange: a connection error, a reset, a body cut short, or an
// attempt that ran past its timeout. It is retried.
type TransportError = transport.TransportError
