package llm

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"modernc.org/sqlite" // pure-Go SQLite driver "sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/ragbench/ragbench/internal/transport"
)

// CacheMode says how the response cache is used.
type CacheMode string

// The cache modes.
const (
	// CacheOff passes every call through.
	CacheOff CacheMode = "off"
	// CacheRead answers hits from the cache and sends misses, without storing them.
	CacheRead CacheMode = "read"
	// CacheReadWrite answers hits from the cache and stores the answers to misses.
	CacheReadWrite CacheMode = "readwrite"
	// CacheReplayOnly answers hits from the cache and fails on a miss (ErrCacheMiss); it never
	// contacts the backend. Meant for CI.
	CacheReplayOnly CacheMode = "replay-only"
)

// ParseCacheMode parses a mode name.
func ParseCacheMode(s string) (CacheMode, error) {
	switch m := CacheMode(s); m {
	case CacheOff, CacheRead, CacheReadWrite, CacheReplayOnly:
		return m, nil
	}
	return "", fmt.Errorf("unknown cache mode %q (want off, read, readwrite or replay-only)", s)
}

// Key returns the cache key of a request to a backend: SHA-256 over a versioned JSON document of the
// backend, base URL, model, and the whole request (endpoint, prompt or messages, every sampling
// parameter, seed, logprobs and replicate index). The API key is never part of it.
func Key(id Identity, req Request) [32]byte {
	doc := struct {
		V       int      `json:"v"`
		ID      Identity `json:"id"`
		Request Request  `json:"request"`
	}{1, id, req}
	b, err := json.Marshal(doc)
	if err != nil {
		// Request holds only strings, numbers and slices of them; Marshal cannot fail on it. Fall back
		// to the formatted value rather than panic.
		b = fmt.Appendf(nil, "%#v", doc)
	}
	return sha256.Sum256(b)
}

// Store is a response store in one SQLite file (modernc.org/sqlite, pure Go, no cgo). It is safe for
// concurrent use by many goroutines and by many processes sharing the file: SQLite's own file
// locking, write-ahead logging and a busy timeout serialise writers while readers go on; opening
// retries the one-time set-up that SQLite refuses at once when another process holds the lock.
type Store struct {
	db   *sql.DB
	get  *sql.Stmt
	put  *sql.Stmt
	path string
}

// OpenStore opens (creating if needed) the store at path.
func OpenStore(path string) (*Store, error) {
	if path == "" {
		return nil, errors.New("llm cache: empty path")
	}
	if dir := filepath.Dir(path); dir != "" {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, fmt.Errorf("llm cache %s: %w", path, err)
		}
	}
	dsn := fmt.Sprintf("file:%s?_pragma=busy_timeout(%d)&_pragma=journal_mode(WAL)&_pragma=synchronous(NORMAL)", path, busyTimeout.Milliseconds())
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, fmt.Errorf("llm cache %s: %w", path, err)
	}
	db.SetMaxOpenConns(8)
	db.SetMaxIdleConns(8)
	db.SetConnMaxIdleTime(0)
	const schema = `CREATE TABLE IF NOT EXISTS responses (
		key      BLOB PRIMARY KEY,
		backend  TEXT NOT NULL,
		base_url TEXT NOT NULL,
		model    TEXT NOT NULL,
		request  TEXT NOT NULL,
		response TEXT NOT NULL,
		created  INTEGER NOT NULL
	) WITHOUT ROWID`
	if err := retryBusy(func() error { _, err := db.Exec(schema); return err }); err != nil {
		db.Close()
		return nil, fmt.Errorf("llm cache %s: create schema: %w", path, err)
	}
	s := &Store{db: db, path: path}
	if s.get, err = db.Prepare(`SELECT response FROM responses WHERE key = ?`); err == nil {
		s.put, err = db.Prepare(`INSERT OR IGNORE INTO responses (key, backend, base_url, model, request, response, created) VALUES (?, ?, ?, ?, ?, ?, ?)`)
	}
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("llm cache %s: prepare: %w", path, err)
	}
	return s, nil
}

// busyTimeout is how long a statement waits for another connection's lock before failing.
const busyTimeout = 30 * time.Second

// retryBusy runs setup until it does not fail with SQLITE_BUSY, for at most busyTimeout. The first
// statement on a connection turns on WAL (the DSN's journal_mode pragma), which on a file still in
// rollback mode rewrites its header in a read transaction upgraded to a write. SQLite answers that
// upgrade SQLITE_BUSY at once, not after the busy timeout (waiting while holding the read lock could
// deadlock), when another connection holds the write lock: as happens when several processes open a
// new cache file together. The failed connection is discarded and its locks released, so running the
// statement again on a new one succeeds once the other connection is done. The pragma and the schema
// are idempotent.
func retryBusy(setup func() error) error {
	deadline := time.Now().Add(busyTimeout)
	for wait := time.Millisecond; ; wait = min(2*wait, 50*time.Millisecond) {
		err := setup()
		var se *sqlite.Error
		if err == nil || !errors.As(err, &se) || se.Code()&0xff != sqlite3.SQLITE_BUSY || time.Now().After(deadline) {
			return err
		}
		time.Sleep(wait)
	}
}

// Path returns the file path.
func (s *Store) Path() string { return s.path }

// Get returns the stored response for key.
func (s *Store) Get(ctx context.Context, key [32]byte) (Response, bool, error) {
	var raw []byte
	err := s.get.QueryRowContext(ctx, key[:]).Scan(&raw)
	if errors.Is(err, sql.ErrNoRows) {
		return Response{}, false, nil
	}
	if err != nil {
		return Response{}, false, fmt.Errorf("llm cache %s: get: %w", s.path, err)
	}
	var r Response
	if err := json.Unmarshal(raw, &r); err != nil {
		return Response{}, false, fmt.Errorf("llm cache %s: stored response %x is corrupt: %w; body %s", s.path, key[:6], err, transport.QuoteExcerpt(transport.Excerpt(raw)))
	}
	return r, true, nil
}

// Put stores resp under key unless the key is already present (the first answer wins, so replays are
// stable).
func (s *Store) Put(ctx context.Context, key [32]byte, id Identity, req Request, resp Response) error {
	resp.Cached, resp.Latency, resp.Retries = false, 0, 0
	rb, err := json.Marshal(resp)
	if err != nil {
		return fmt.Errorf("llm cache %s: encode response: %w", s.path, err)
	}
	qb, err := json.Marshal(req)
	if err != nil {
		return fmt.Errorf("llm cache %s: encode request: %w", s.path, err)
	}
	if _, err := s.put.ExecContext(ctx, key[:], id.Backend, transport.RedactURL(id.BaseURL), id.Model, string(qb), string(rb), time.Now().Unix()); err != nil {
		return fmt.Errorf("llm cache %s: put: %w", s.path, err)
	}
	return nil
}

// Entry is one stored response, for PutMany.
type Entry struct {
	Key      [32]byte
	ID       Identity
	Request  Request
	Response Response
}

// PutMany stores entries in one transaction (keys already present are kept). It is for importing and
// for building large stores; Cache uses Put.
func (s *Store) PutMany(ctx context.Context, entries []Entry) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("llm cache %s: begin: %w", s.path, err)
	}
	defer tx.Rollback()
	st := tx.StmtContext(ctx, s.put)
	now := time.Now().Unix()
	for _, e := range entries {
		e.Response.Cached, e.Response.Latency, e.Response.Retries = false, 0, 0
		rb, err := json.Marshal(e.Response)
		if err != nil {
			return fmt.Errorf("llm cache %s: encode response: %w", s.path, err)
		}
		qb, err := json.Marshal(e.Request)
		if err != nil {
			return fmt.Errorf("llm cache %s: encode request: %w", s.path, err)
		}
		if _, err := st.ExecContext(ctx, e.Key[:], e.ID.Backend, transport.RedactURL(e.ID.BaseURL), e.ID.Model, string(qb), string(rb), now); err != nil {
			return fmt.Errorf("llm cache %s: put: %w", s.path, err)
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("llm cache %s: commit: %w", s.path, err)
	}
	return nil
}

// Len returns the number of stored responses.
func (s *Store) Len(ctx context.Context) (int64, error) {
	var n int64
	err := s.db.QueryRowContext(ctx, `SELECT count(*) FROM responses`).Scan(&n)
	return n, err
}

// Close closes the database.
func (s *Store) Close() error {
	s.get.Close()
	s.put.Close()
	return s.db.Close()
}

// CacheStats counts cache outcomes.
type CacheStats struct {
	// Hits were answered from the store.
	Hits int64 `json:"hits"`
	// Misses were not in the store (in replay-only mode they failed).
	Misses int64 `json:"misses"`
	// Shared were identical requests made while the same request was in flight; they waited for it
	// instead of calling the backend again.
	Shared int64 `json:"shared"`
	// Writes were stored.
	Writes int64 `json:"writes"`
	// WriteErrors failed to be stored (the response was still returned; see Cache.LastWriteError).
	WriteErrors int64 `json:"write_errors,omitempty"`
}

// Cache is a Generator decorator that answers repeated requests from a Store, so that a sweep never
// pays twice for the same call. Identical requests in flight at the same time are sent once.
type Cache struct {
	inner Generator
	store *Store
	mode  CacheMode
	id    Identity

	hits, misses, shared, writes, writeErrors atomic.Int64
	lastWriteErr                              atomic.Pointer[error]

	mu     sync.Mutex
	flight map[[32]byte]*flightCall
}

type flightCall struct {
	done chan struct{}
	resp Response
	err  error
}

// NewCache wraps inner. id names the backend for the key; when inner implements Identifier its
// Identity is used instead.
func NewCache(inner Generator, store *Store, mode CacheMode, id Identity) *Cache {
	if i, ok := inner.(Identifier); ok {
		id = i.Identity()
	}
	return &Cache{inner: inner, store: store, mode: mode, id: id, flight: map[[32]byte]*flightCall{}}
}

// Stats returns the counters.
func (c *Cache) Stats() CacheStats {
	return CacheStats{Hits: c.hits.Load(), Misses: c.misses.Load(), Shared: c.shared.Load(), Writes: c.writes.Load(), WriteErrors: c.writeErrors.Load()}
}

// LastWriteError returns the last error met while storing a response, or nil.
func (c *Cache) LastWriteError() error {
	if p := c.lastWriteErr.Load(); p != nil {
		return *p
	}
	return nil
}

// Mode returns the cache mode.
func (c *Cache) Mode() CacheMode { return c.mode }

// Generate implements Generator.
func (c *Cache) Generate(ctx context.Context, req Request) (Response, error) {
	if c.mode == CacheOff || c.store == nil {
		return c.inner.Generate(ctx, req)
	}
	if n, ok := c.inner.(Normalizer); ok {
		req = n.Normalize(req)
	}
	key := Key(c.id, req)
	if resp, ok, err := c.store.Get(ctx, key); err != nil {
		return Response{}, err
	} else if ok {
		c.hits.Add(1)
		resp.Cached = true
		return resp, nil
	}
	c.misses.Add(1)
	if c.mode == CacheReplayOnly {
		return Response{}, fmt.Errorf("%w: %s request for model %q (key %x)", ErrCacheMiss, req.Endpoint, c.id.Model, key[:6])
	}

	c.mu.Lock()
	if f, ok := c.flight[key]; ok {
		c.mu.Unlock()
		c.shared.Add(1)
		select {
		case <-f.done:
		case <-ctx.Done():
			return Response{}, ctx.Err()
		}
		if f.err != nil {
			if ctx.Err() == nil && (errors.Is(f.err, context.Canceled) || errors.Is(f.err, context.DeadlineExceeded)) {
				// The leader's context ended, not ours: ask again (this caller may lead now).
				return c.Generate(ctx, req)
			}
			return Response{}, f.err
		}
		r := f.resp
		r.Cached, r.Latency, r.Retries = true, 0, 0
		return r, nil
	}
	f := &flightCall{done: make(chan struct{})}
	c.flight[key] = f
	c.mu.Unlock()

	f.resp, f.err = c.inner.Generate(ctx, req)
	if f.err == nil && c.mode == CacheReadWrite {
		// Store even if ctx was cancelled after the answer arrived: it was paid for.
		if err := c.store.Put(context.WithoutCancel(ctx), key, c.id, req, f.resp); err != nil {
			c.writeErrors.Add(1)
			c.lastWriteErr.Store(&err)
		} else {
			c.writes.Add(1)
		}
	}
	c.mu.Lock()
	delete(c.flight, key)
	c.mu.Unlock()
	close(f.done)
	return f.resp, f.err
}

// tokenizeEndpoint and truncateEndpoint mark the cache entries of token counts and query cuts
// (never sent to a server as endpoints).
const (
	tokenizeEndpoint Endpoint = "tokenize"
	truncateEndpoint Endpoint = "truncate"
)

// CountTokens implements Tokenizer through the cache: a count is stored like a response (endpoint
// "tokenize", the count in Usage.PromptTokens), so that a run replayed from the cache (replay-only)
// measures lengths as the recorded run did. A miss asks the inner generator when it is a Tokenizer
// (ErrNoTokenizer otherwise; ErrCacheMiss in replay-only mode). Errors are not stored.
func (c *Cache) CountTokens(ctx context.Context, text string) (int, error) {
	t, ok := c.inner.(Tokenizer)
	resp, err := c.aux(ctx, Request{Endpoint: tokenizeEndpoint, Prompt: text}, ok, func() (Response, error) {
		n, err := t.CountTokens(ctx, text)
		return Response{Usage: Usage{PromptTokens: n}}, err
	})
	return resp.Usage.PromptTokens, err
}

// KeepLastTokens implements Truncator through the cache, as CountTokens does (endpoint "truncate",
// n in MaxTokens, the cut text in Text).
func (c *Cache) KeepLastTokens(ctx context.Context, text string, n int) (string, error) {
	t, ok := c.inner.(Truncator)
	resp, err := c.aux(ctx, Request{Endpoint: truncateEndpoint, Prompt: text, MaxTokens: n}, ok, func() (Response, error) {
		s, err := t.KeepLastTokens(ctx, text, n)
		return Response{Text: s}, err
	})
	return resp.Text, err
}

// aux answers a tokenizer request from the store, or asks (when can) and stores the answer.
func (c *Cache) aux(ctx context.Context, req Request, can bool, ask func() (Response, error)) (Response, error) {
	if c.mode == CacheOff || c.store == nil {
		if !can {
			return Response{}, ErrNoTokenizer
		}
		return ask()
	}
	key := Key(c.id, req)
	if resp, ok, err := c.store.Get(ctx, key); err != nil {
		return Response{}, err
	} else if ok {
		return resp, nil
	}
	if c.mode == CacheReplayOnly {
		return Response{}, fmt.Errorf("%w: %s request for model %q (key %x)", ErrCacheMiss, req.Endpoint, c.id.Model, key[:6])
	}
	if !can {
		return Response{}, ErrNoTokenizer
	}
	resp, err := ask()
	if err != nil {
		return Response{}, err
	}
	if c.mode == CacheReadWrite {
		if err := c.store.Put(context.WithoutCancel(ctx), key, c.id, req, resp); err != nil {
			c.writeErrors.Add(1)
			c.lastWriteErr.Store(&err)
		}
	}
	return resp, nil
}
