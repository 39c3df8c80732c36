package transport

import (
	"net/url"
	"os"
	"strings"
)

// Environment variables that fill what a config leaves empty.
const (
	EnvBaseURL = "OPENAI_BASE_URL"
	EnvAPIKey  = "OPENAI_API_KEY"
	EnvModel   = "OPENAI_MODEL"
)

// DefaultBaseURL is OpenAI's API root, used when neither a config nor the environment names one.
const DefaultBaseURL = "https://api.openai.com/v1"

// Endpoint is where a client sends its requests. Key is sent as a bearer token and never printed.
type Endpoint struct {
	BaseURL string
	Model   string
	Key     string
}

// Fallbacks say which parts of an Endpoint the environment may fill, for Resolve.
type Fallbacks struct {
	// BaseURL: an empty base URL is $OPENAI_BASE_URL, else DefaultBaseURL when it is set.
	BaseURL        bool
	DefaultBaseURL string
	// Model: an empty model is $OPENAI_MODEL.
	Model bool
	// KeyEnv names the variable an empty key is read from ("": none).
	KeyEnv string
}

// OpenAI are the fallbacks of a client of OpenAI's API: base URL, then the OpenAI default; the key
// from $OPENAI_API_KEY. The model is not taken from the environment.
var OpenAI = Fallbacks{BaseURL: true, DefaultBaseURL: DefaultBaseURL, KeyEnv: EnvAPIKey}

// Resolve is the one place where an endpoint is resolved: it fills the empty parts of e as f says
// (getenv reads the environment) and trims the base URL's trailing slashes. A client resolves its
// endpoint once, when it is opened from its config, and passes the result down. A nil getenv is
// os.Getenv.
func Resolve(e Endpoint, f Fallbacks, getenv func(string) string) Endpoint {
	if getenv == nil {
		getenv = os.Getenv
	}
	if e.BaseURL == "" && f.BaseURL {
		e.BaseURL = getenv(EnvBaseURL)
		if e.BaseURL == "" {
			e.BaseURL = f.DefaultBaseURL
		}
	}
	if e.Model == "" && f.Model {
		e.Model = getenv(EnvModel)
	}
	if e.Key == "" && f.KeyEnv != "" {
		e.Key = getenv(f.KeyEnv)
	}
	e.BaseURL = strings.TrimRight(e.BaseURL, "/")
	return e
}

// RedactURL returns raw without user information and with query values replaced, so that a URL that
// carries a credential can be printed, logged or recorded.
func RedactURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "<unparsable URL>"
	}
	if u.User != nil {
		u.User = url.User("redacted")
	}
	if u.RawQuery != "" {
		q := u.Query()
		for k := range q {
			q.Set(k, "redacted")
		}
		u.RawQuery = q.Encode()
	}
	return u.String()
}

// Redactor removes a secret (the API key) from messages. It is a defence in depth: no client puts the
// key into an error, but a server may echo it back in an error body.
type Redactor struct{ secret string }

// NewRedactor returns a Redactor of secret (one shorter than 4 bytes is left alone).
func NewRedactor(secret string) Redactor { return Redactor{secret: secret} }

// String returns s with the secret replaced by [redacted].
func (r Redactor) String(s string) string {
	if len(r.secret) < 4 {
		return s
	}
	return strings.ReplaceAll(s, r.secret, "[redacted]")
}

// Err wraps err so that its message has the secret removed; errors.Is and errors.As still see the
// original.
func (r Redactor) Err(err error) error {
	if err == nil || len(r.secret) < 4 || !strings.Contains(err.Error(), r.secret) {
		return err
	}
	return &redactedError{msg: r.String(err.Error()), err: err}
}

type redactedError struct {
	msg string
	err error
}

func (e *redactedError) Error() string { return e.msg }
func (e *redactedError) Unwrap() error { return e.err }
