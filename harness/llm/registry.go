package llm

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sort"
	"sync"
)

// Factory builds a backend from a resolved config.
type Factory func(Config) (Generator, error)

var (
	backendsMu sync.RWMutex
	backends   = map[string]Factory{}
)

func init() {
	RegisterBackend("openai", func(c Config) (Generator, error) { return newOpenAI(c) })
}

// RegisterBackend makes a backend available to New under name. Backend packages call it from init
// (the offline reader registers "offline"); a program enables a backend by importing its package.
// Registering a name twice is a programming error and panics, as database/sql.Register does.
func RegisterBackend(name string, f Factory) {
	backendsMu.Lock()
	defer backendsMu.Unlock()
	if name == "" || f == nil {
		panic("llm: RegisterBackend with empty name or nil factory")
	}
	if _, dup := backends[name]; dup {
		panic("llm: RegisterBackend called twice for " + name)
	}
	backends[name] = f
}

// Backends returns the registered backend names, sorted.
func Backends() []string {
	backendsMu.RLock()
	defer backendsMu.RUnlock()
	names := make([]string, 0, len(backends))
	for n := range backends {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// NewBackend builds the bare backend named by cfg.Backend (cfg is resolved first).
func NewBackend(cfg Config) (Generator, error) {
	return newBackend(cfg.Resolve(os.Getenv))
}

// newBackend builds the backend of a resolved config.
func newBackend(cfg Config) (Generator, error) {
	backendsMu.RLock()
	f, ok := backends[cfg.Backend]
	backendsMu.RUnlock()
	if !ok {
		return nil, fmt.Errorf("llm: unknown backend %q (registered: %v; a backend registers itself when its package, e.g. harness/llm/offline, is linked into the program)", cfg.Backend, Backends())
	}
	g, err := f(cfg)
	if err != nil {
		return nil, fmt.Errorf("llm backend %s: %w", cfg.Backend, err)
	}
	return g, nil
}

// Client is the generator stack a run uses: Accounting over Cache over the backend. It implements
// Generator; Close closes the cache file.
type Client struct {
	*Accounting
	// Backend is the bare backend.
	Backend Generator
	// Cache is nil when the cache is off.
	Cache *Cache
	store *Store
	// tok is the backend's Tokenizer behind a TokenCache (nil when the backend has none).
	tok *TokenCache
}

// KeepLastTokens implements Truncator with the backend's tokenizer (the server's /tokenize and
// /detokenize), cached; ErrNoTokenizer when the backend has none.
func (c *Client) KeepLastTokens(ctx context.Context, text string, n int) (string, error) {
	if c.tok == nil {
		return "", ErrNoTokenizer
	}
	return c.tok.KeepLastTokens(ctx, text, n)
}

// CountTokens implements Tokenizer with the backend's tokenizer (the server's /tokenize), cached;
// ErrNoTokenizer when the backend has none.
func (c *Client) CountTokens(ctx context.Context, text string) (int, error) {
	if c.tok == nil {
		return 0, ErrNoTokenizer
	}
	return c.tok.CountTokens(ctx, text)
}

// New builds the stack for cfg: the backend from the registry, the cache when cfg.Cache says so, and
// the accounting decorator on top. cfg is resolved here, once (Resolve), and the resolved config is
// what the backend and the cache get.
func New(cfg Config) (*Client, error) {
	cfg = cfg.Resolve(os.Getenv)
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("llm config: %w", err)
	}
	b, err := newBackend(cfg)
	if err != nil {
		return nil, err
	}
	c := &Client{Backend: b}
	_, isTok := b.(Tokenizer)
	if isTok {
		c.tok = NewTokenCache(b.(Tokenizer))
	}
	g := b
	if cfg.Cache.Mode != CacheOff {
		st, err := OpenStore(cfg.Cache.Path)
		if err != nil {
			return nil, err
		}
		c.store = st
		c.Cache = NewCache(b, st, cfg.Cache.Mode, Identity{Backend: cfg.Backend, BaseURL: cfg.BaseURL, Model: cfg.Model})
		g = c.Cache
		if isTok {
			c.tok = NewTokenCache(c.Cache) // counts are stored with the responses, for replay
		}
	}
	c.Accounting = NewAccounting(g, nil)
	return c, nil
}

// Close closes the cache store, if any.
func (c *Client) Close() error {
	if c.store == nil {
		return nil
	}
	return errors.Join(c.store.Close())
}
