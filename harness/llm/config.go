package llm

import (
	"errors"
	"fmt"
	"net/url"
	"time"

	"github.com/ragbench/ragbench/internal/retry"
	"github.com/ragbench/ragbench/internal/transport"
)

// Config says which backend to use and how to talk to it. It is plain data with defaults (see
// Defaults) and a Validate method; YAML and JSON tags make it part of a run's resolved config. The API
// key is deliberately not a field: it is read from the environment variable named by APIKeyEnv when a
// client is built, so it can never be written to a config file, a cache or a run directory.
type Config struct {
	// Backend names a registered backend: "openai" (any OpenAI-compatible server) or "offline".
	Backend string `yaml:"backend" json:"backend"`
	// BaseURL is the server's API root, for example http://127.0.0.1:8000/v1. Empty: $OPENAI_BASE_URL,
	// then the OpenAI default.
	BaseURL string `yaml:"base_url,omitempty" json:"base_url,omitempty"`
	// Model is the model name sent with every request. Empty: $OPENAI_MODEL.
	Model string `yaml:"model,omitempty" json:"model,omitempty"`
	// APIKeyEnv names the environment variable holding the API key (default OPENAI_API_KEY).
	APIKeyEnv string `yaml:"api_key_env,omitempty" json:"api_key_env,omitempty"`
	// Seed is sent with requests that carry no seed of their own (greedy decoding plus a fixed seed
	// makes servers as repeatable as they can be).
	Seed int `yaml:"seed" json:"seed"`
	// MaxTokens is used for requests with MaxTokens 0 (0: leave it to the server).
	MaxTokens int `yaml:"max_tokens,omitempty" json:"max_tokens,omitempty"`

	// Timeout bounds each HTTP attempt (default 120s).
	Timeout time.Duration `yaml:"timeout,omitempty" json:"timeout,omitempty"`
	// MaxRetries is the number of retries after the first attempt (default 6; negative: none).
	MaxRetries int `yaml:"max_retries,omitempty" json:"max_retries,omitempty"`
	// MaxWait bounds the whole of one request, its attempts and the waits between them included
	// (default DefaultMaxWait): a server that never answers fails the question within it.
	MaxWait time.Duration `yaml:"max_wait,omitempty" json:"max_wait,omitempty"`
	// BackoffBase and BackoffMax shape the exponential backoff (defaults 500ms and 30s).
	BackoffBase time.Duration `yaml:"backoff_base,omitempty" json:"backoff_base,omitempty"`
	BackoffMax  time.Duration `yaml:"backoff_max,omitempty" json:"backoff_max,omitempty"`
	// MaxRetryAfter caps how long a server's Retry-After may make us wait (default 2m).
	MaxRetryAfter time.Duration `yaml:"max_retry_after,omitempty" json:"max_retry_after,omitempty"`
	// OnRetry, when set, is told about every retry before its wait (see retry.Printer), so that no
	// retry is silent. A DNS failure or a connection refused by a loopback address is never retried.
	OnRetry retry.Notifier `yaml:"-" json:"-"`
	// Concurrency bounds the requests in flight (default 8).
	Concurrency int `yaml:"concurrency,omitempty" json:"concurrency,omitempty"`
	// RPM and TPM limit requests and tokens per minute (0: unlimited). Tokens are the estimated prompt
	// tokens plus max_tokens, corrected by the usage the server reports.
	RPM int `yaml:"rpm,omitempty" json:"rpm,omitempty"`
	TPM int `yaml:"tpm,omitempty" json:"tpm,omitempty"`
	// MaxResponseBytes bounds a response body (default 16 MiB).
	MaxResponseBytes int64 `yaml:"max_response_bytes,omitempty" json:"max_response_bytes,omitempty"`

	// Cache is the response cache (off when Path is empty or Mode is off).
	Cache CacheConfig `yaml:"cache,omitempty" json:"cache,omitempty"`
}

// CacheConfig configures the response cache.
type CacheConfig struct {
	// Path is the SQLite file.
	Path string `yaml:"path,omitempty" json:"path,omitempty"`
	// Mode is off, read, readwrite or replay-only (default readwrite when Path is set).
	Mode CacheMode `yaml:"mode,omitempty" json:"mode,omitempty"`
}

// Environment variables read by Resolve.
const (
	EnvBaseURL = transport.EnvBaseURL
	EnvAPIKey  = transport.EnvAPIKey
	EnvModel   = transport.EnvModel
)

// DefaultBaseURL is OpenAI's API root, used when neither the config nor the environment names one.
const DefaultBaseURL = transport.DefaultBaseURL

// DefaultMaxWait is the default bound on one request's total time, retries included.
const DefaultMaxWait = 3 * time.Minute

// Defaults returns the config with every unset field given its default. It does not read the
// environment (Resolve does).
func (c Config) Defaults() Config {
	if c.Backend == "" {
		c.Backend = "openai"
	}
	if c.APIKeyEnv == "" {
		c.APIKeyEnv = EnvAPIKey
	}
	if c.Timeout == 0 {
		c.Timeout = 120 * time.Second
	}
	if c.MaxRetries == 0 {
		c.MaxRetries = 6
	}
	if c.MaxWait == 0 {
		c.MaxWait = DefaultMaxWait
	}
	if c.BackoffBase == 0 {
		c.BackoffBase = 500 * time.Millisecond
	}
	if c.BackoffMax == 0 {
		c.BackoffMax = 30 * time.Second
	}
	if c.MaxRetryAfter == 0 {
		c.MaxRetryAfter = transport.DefaultMaxRetryAfter
	}
	if c.Concurrency == 0 {
		c.Concurrency = 8
	}
	if c.MaxResponseBytes == 0 {
		c.MaxResponseBytes = 16 << 20
	}
	if c.Cache.Path != "" && c.Cache.Mode == "" {
		c.Cache.Mode = CacheReadWrite
	}
	if c.Cache.Mode == "" {
		c.Cache.Mode = CacheOff
	}
	return c
}

// Resolve applies Defaults and fills BaseURL and Model from the environment when they are empty
// (getenv is os.Getenv when nil), through transport.Resolve, the one resolution of an endpoint. The API
// key is not part of the result.
func (c Config) Resolve(getenv func(string) string) Config {
	c = c.Defaults()
	f := transport.Fallbacks{BaseURL: true, Model: true}
	if c.Backend == "openai" {
		f.DefaultBaseURL = DefaultBaseURL
	}
	e := transport.Resolve(transport.Endpoint{BaseURL: c.BaseURL, Model: c.Model}, f, getenv)
	c.BaseURL, c.Model = e.BaseURL, e.Model
	return c
}

// endpoint is the endpoint of a resolved config: its base URL and model, and the key from the
// variable APIKeyEnv (which is never part of a config).
func (c Config) endpoint(getenv func(string) string) transport.Endpoint {
	return transport.Resolve(transport.Endpoint{BaseURL: c.BaseURL, Model: c.Model}, transport.Fallbacks{KeyEnv: c.APIKeyEnv}, getenv)
}

// Validate reports the first invalid field.
func (c Config) Validate() error {
	var errs []error
	if c.Backend == "" {
		errs = append(errs, errors.New("llm.backend is empty"))
	}
	if c.Backend == "openai" {
		u, err := url.Parse(c.BaseURL)
		switch {
		case c.BaseURL == "":
			errs = append(errs, fmt.Errorf("llm.base_url is empty (set it or $%s)", EnvBaseURL))
		case err != nil:
			errs = append(errs, fmt.Errorf("llm.base_url %q: %w", transport.RedactURL(c.BaseURL), err))
		case u.Scheme != "http" && u.Scheme != "https":
			errs = append(errs, fmt.Errorf("llm.base_url %q: scheme must be http or https", transport.RedactURL(c.BaseURL)))
		}
		if c.Model == "" {
			errs = append(errs, fmt.Errorf("llm.model is empty (set it or $%s)", EnvModel))
		}
	}
	if c.Timeout < 0 || c.MaxWait < 0 || c.BackoffBase < 0 || c.BackoffMax < 0 || c.MaxRetryAfter < 0 {
		errs = append(errs, errors.New("llm durations must not be negative"))
	}
	if c.Concurrency < 0 || c.RPM < 0 || c.TPM < 0 || c.MaxTokens < 0 {
		errs = append(errs, errors.New("llm.concurrency, rpm, tpm and max_tokens must not be negative"))
	}
	if _, err := ParseCacheMode(string(c.Cache.Mode)); err != nil && c.Cache.Mode != "" {
		errs = append(errs, err)
	}
	if c.Cache.Mode != "" && c.Cache.Mode != CacheOff && c.Cache.Path == "" {
		errs = append(errs, fmt.Errorf("llm.cache.mode %s needs llm.cache.path", c.Cache.Mode))
	}
	return errors.Join(errs...)
}

// RedactURL returns raw without user information and with query values replaced, so that a URL that
// carries a credential can be printed (transport.RedactURL, the one redactor of URLs).
func RedactURL(raw string) string { return transport.RedactURL(raw) }
