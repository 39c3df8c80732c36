package ngram

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"time"

	"github.com/ragbench/ragbench/internal/retry"
)

// The backends of Config.
const (
	// BackendLocal answers from a local index (OpenIndex) in Exact or InfiniGram mode.
	BackendLocal = "local"
	// BackendAPI asks an Infini-gram API server (Client): the public one or `ragbench ngram serve`.
	BackendAPI = "api"
	// BackendQuCoCache replays the QuCo-RAG authors' cache file (LoadQuCoCache), offline.
	BackendQuCoCache = "quco-cache"
)

// Config says where corpus statistics come from. It is plain data with defaults (Defaults) and a
// Validate method; Open builds the Counter it describes. YAML and JSON tags make it part of a run's
// resolved config.
type Config struct {
	// Backend is local, api or quco-cache. Empty: quco-cache when QuCoCache is set, else local when
	// Index is set.
	Backend string `yaml:"backend" json:"backend"`

	// Index is the local index directory (backend local).
	Index string `yaml:"index,omitempty" json:"index,omitempty"`
	// Mode is the AND semantics of the local index: exact (default) or infinigram (see Mode).
	Mode string `yaml:"mode,omitempty" json:"mode,omitempty"`
	// TokenWidth is the token width of an Infini-gram index without manifest.json (default 2).
	TokenWidth int `yaml:"token_width,omitempty" json:"token_width,omitempty"`
	// Verify checks the CRC-32C of every index file on open.
	Verify bool `yaml:"verify,omitempty" json:"verify,omitempty"`

	// MaxClauseFreq is the subsampling threshold of infinigram mode (default DefaultMaxClauseFreq)
	// and of the API (default AuthorsMaxClauseFreq, the QuCo-RAG authors' 500000).
	MaxClauseFreq uint64 `yaml:"max_clause_freq,omitempty" json:"max_clause_freq,omitempty"`

	// APIURL is the API endpoint (backend api; default DefaultAPIURL).
	APIURL string `yaml:"api_url,omitempty" json:"api_url,omitempty"`
	// APIIndex is the index the API is asked about (backend api; default DefaultAPIIndex).
	APIIndex string `yaml:"api_index,omitempty" json:"api_index,omitempty"`

	// Cache is a JSONL cache file in front of the local index or the API: answers are replayed from it
	// and new ones appended (OpenCache). Empty: no cache.
	Cache string `yaml:"cache,omitempty" json:"cache,omitempty"`
	// QuCoCache is the QuCo-RAG authors' cache JSON replayed by backend quco-cache.
	QuCoCache string `yaml:"quco_cache,omitempty" json:"quco_cache,omitempty"`

	// MaxRetries is the number of API retries after the first attempt (unset: 5; 0: none). 429, 5xx
	// and network errors are retried.
	MaxRetries *int `yaml:"max_retries,omitempty" json:"max_retries,omitempty"`
	// MaxRetryWait caps the total wait between retries of one API request (0: the client's retry
	// count alone bounds it). DNS failures and refused loopback connections are never retried.
	MaxRetryWait time.Duration `yaml:"max_retry_wait,omitempty" json:"max_retry_wait,omitempty"`
	// RetryLog, when set, gets a line for every API retry with its reason (typically stderr).
	RetryLog io.Writer `yaml:"-" json:"-"`
}

// Defaults returns the config with every unset field given its default.
func (c Config) Defaults() Config {
	if c.Backend == "" {
		switch {
		case c.QuCoCache != "":
			c.Backend = BackendQuCoCache
		case c.Index != "":
			c.Backend = BackendLocal
		}
	}
	if c.Mode == "" {
		c.Mode = Exact.String()
	}
	if c.TokenWidth == 0 {
		c.TokenWidth = 2
	}
	if c.MaxClauseFreq == 0 {
		c.MaxClauseFreq = DefaultMaxClauseFreq
		if c.Backend == BackendAPI {
			c.MaxClauseFreq = AuthorsMaxClauseFreq
		}
	}
	if c.Backend == BackendAPI {
		if c.APIURL == "" {
			c.APIURL = DefaultAPIURL
		}
		if c.APIIndex == "" {
			c.APIIndex = DefaultAPIIndex
		}
	}
	return c
}

// Validate reports every invalid field of a config after Defaults.
func (c Config) Validate() error {
	var errs []error
	switch c.Backend {
	case BackendLocal:
		if c.Index == "" {
			errs = append(errs, errors.New("ngram.index is empty (backend local needs an index directory)"))
		}
		if _, err := ParseMode(c.Mode); err != nil {
			errs = append(errs, fmt.Errorf("ngram.mode: %w", err))
		}
		if c.TokenWidth != 2 && c.TokenWidth != 4 {
			errs = append(errs, fmt.Errorf("ngram.token_width %d: want 2 or 4", c.TokenWidth))
		}
	case BackendAPI:
		if u, err := url.Parse(c.APIURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			errs = append(errs, fmt.Errorf("ngram.api_url %q: want an http(s) URL", c.APIURL))
		}
		if c.APIIndex == "" {
			errs = append(errs, errors.New("ngram.api_index is empty"))
		}
		if c.MaxRetries != nil && *c.MaxRetries < 0 {
			errs = append(errs, fmt.Errorf("ngram.max_retries %d: want 0 (none) or more", *c.MaxRetries))
		}
	case BackendQuCoCache:
		if c.QuCoCache == "" {
			errs = append(errs, errors.New("ngram.quco_cache is empty (backend quco-cache needs the authors' cache file)"))
		}
		if c.Cache != "" {
			errs = append(errs, errors.New("ngram.cache: backend quco-cache replays the authors' cache and takes no JSONL cache"))
		}
	case "":
		errs = append(errs, errors.New("ngram.backend is empty: give an index directory, the api backend or a quco cache"))
	default:
		errs = append(errs, fmt.Errorf("ngram.backend %q: want %s, %s or %s", c.Backend, BackendLocal, BackendAPI, BackendQuCoCache))
	}
	return errors.Join(errs...)
}

// Source is an opened source of corpus statistics: the Counter a Config describes, with the parts a
// caller may need beside it. Close releases it.
type Source struct {
	// Counter answers queries: the cache when there is one, else the index, Compat view or client.
	Counter
	// Index is the local index (nil for the API and the QuCo-RAG cache replay).
	Index *Index
	// Cache is the JSONL cache or the replayed QuCo-RAG cache (nil without either).
	Cache *Cache
	// Engine names the semantics recorded in cache keys: ragbench-exact, ragbench-infinigram, or ""
	// for Infini-gram's own (the API and the authors' cache).
	Engine string

	closers []io.Closer
}

// Close closes the cache file and the index.
func (s *Source) Close() error {
	var errs []error
	for i := len(s.closers) - 1; i >= 0; i-- {
		errs = append(errs, s.closers[i].Close())
	}
	s.closers = nil
	return errors.Join(errs...)
}

// Open builds the Counter cfg describes: a local index (in exact or infinigram mode), the API client,
// or the replayed QuCo-RAG cache, with the JSONL cache in front when cfg.Cache is set. Cache keys name
// the local index by its directory and the API index by its name. It applies Defaults and Validate;
// it does not contact the API.
func Open(ctx context.Context, cfg Config) (*Source, error) {
	cfg = cfg.Defaults()
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("ngram config: %w", err)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s := &Source{}
	var name string
	switch cfg.Backend {
	case BackendQuCoCache:
		qc, err := LoadQuCoCache(cfg.QuCoCache)
		if err != nil {
			return nil, err
		}
		s.Counter, s.Cache = qc, qc
		return s, nil
	case BackendAPI:
		cl := &Client{URL: cfg.APIURL, Index: cfg.APIIndex, MaxClauseFreq: cfg.MaxClauseFreq, MaxWait: cfg.MaxRetryWait, OnRetry: retry.Printer(cfg.RetryLog)}
		if cfg.MaxRetries != nil {
			cl.MaxRetries = *cfg.MaxRetries
			if cl.MaxRetries == 0 {
				cl.MaxRetries = -1 // none
			}
		}
		s.Counter = cl
		name = cfg.APIIndex
	case BackendLocal:
		ix, err := OpenIndex(cfg.Index, OpenOptions{Verify: cfg.Verify, TokenWidth: cfg.TokenWidth})
		if err != nil {
			return nil, err
		}
		s.Index = ix
		s.closers = append(s.closers, ix)
		mode, _ := ParseMode(cfg.Mode) // checked by Validate
		s.Counter, s.Engine = ix, "ragbench-exact"
		if mode == InfiniGram {
			s.Counter, s.Engine = Compat{Index: ix, MaxClauseFreq: cfg.MaxClauseFreq}, "ragbench-infinigram"
		}
		name = cfg.Index
	}
	if cfg.Cache != "" {
		c, err := OpenCache(cfg.Cache, s.Counter, name, s.Engine)
		if err != nil {
			s.Close()
			return nil, err
		}
		s.Counter, s.Cache = c, c
		s.closers = append(s.closers, c)
	}
	return s, nil
}
