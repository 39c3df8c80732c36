package ngram

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strconv"
	"sync"

	"github.com/ragbench/ragbench/internal/atomicfile"
)

// ErrNotCached is returned by an offline Cache (one without an inner Counter) on a miss.
var ErrNotCached = errors.New("ngram cache: query not in the cache and no counter to ask")

// QuCoDefaultWindow is the max_diff_tokens QuCo-RAG's code sends with AND queries; keys in its cache
// that name no window mean this one.
const QuCoDefaultWindow = 1000

// CacheKey is the key of one query: Infini-gram's query string, the index, and for CNF queries the
// window; Engine tells results of different semantics apart ("" for Infini-gram's own).
type CacheKey struct {
	Query  string
	Index  string
	Window int // 0 for simple queries
	Engine string
	// Build is the identity of the local index that answered (Index.Identity), so that a rebuilt
	// index at the same path never gets the old index's answers; "" for the API and the authors' cache.
	Build string
}

func (k CacheKey) id() string {
	return k.Engine + "\x00" + k.Build + "\x00" + k.Index + "\x00" + strconv.Itoa(k.Window) + "\x00" + k.Query
}

// String renders the key in the QuCo-RAG authors' layout: {"args":[query],"kwargs":{"index":...}},
// with max_diff_tokens (and engine) added to kwargs when set.
func (k CacheKey) String() string {
	kw := map[string]any{"index": k.Index}
	if k.Window != 0 {
		kw["max_diff_tokens"] = k.Window
	}
	if k.Engine != "" {
		kw["engine"] = k.Engine
	}
	if k.Build != "" {
		kw["build"] = k.Build
	}
	b, _ := json.Marshal(map[string]any{"args": []string{k.Query}, "kwargs": kw})
	return string(b)
}

// parseCacheKey reads a key in the QuCo-RAG layout.
func parseCacheKey(s string) (CacheKey, error) {
	var raw struct {
		Args   []json.RawMessage          `json:"args"`
		Kwargs map[string]json.RawMessage `json:"kwargs"`
	}
	if err := json.Unmarshal([]byte(s), &raw); err != nil {
		return CacheKey{}, fmt.Errorf("key %.80q: %w", s, err)
	}
	if len(raw.Args) < 1 {
		return CacheKey{}, fmt.Errorf("key %.80q: args has no query", s)
	}
	var k CacheKey
	if err := json.Unmarshal(raw.Args[0], &k.Query); err != nil {
		return CacheKey{}, fmt.Errorf("key %.80q: query: %w", s, err)
	}
	for name, v := range raw.Kwargs {
		var err error
		switch name {
		case "index":
			err = json.Unmarshal(v, &k.Index)
		case "max_diff_tokens":
			err = json.Unmarshal(v, &k.Window)
		case "engine":
			err = json.Unmarshal(v, &k.Engine)
		case "build":
			err = json.Unmarshal(v, &k.Build)
		}
		if err != nil {
			return CacheKey{}, fmt.Errorf("key %.80q: kwargs %s: %w", s, name, err)
		}
	}
	if IsCNF(k.Query) && k.Window == 0 {
		k.Window = QuCoDefaultWindow
	}
	if len(raw.Args) > 1 { // positional index, as in get_infini_gram_count(query, index)
		if err := json.Unmarshal(raw.Args[1], &k.Index); err != nil {
			return CacheKey{}, fmt.Errorf("key %.80q: positional index: %w", s, err)
		}
	}
	return k, nil
}

// parseCachedValue reads a cached API result: an object with count (and approx), a [count, latency]
// pair, or a bare count. ok is false for null (a failed query the authors cached as None).
func parseCachedValue(v json.RawMessage) (Result, bool, error) {
	v = bytes.TrimSpace(v)
	if len(v) == 0 || string(v) == "null" {
		return Result{}, false, nil
	}
	switch v[0] {
	case '{':
		var o struct {
			Count  *float64 `json:"count"`
			Approx bool     `json:"approx"`
			Error  string   `json:"error"`
		}
		if err := json.Unmarshal(v, &o); err != nil {
			return Result{}, false, err
		}
		if o.Count == nil {
			return Result{}, false, nil
		}
		return Result{Count: uint64(*o.Count), Approx: o.Approx}, true, nil
	case '[':
		var a []json.RawMessage
		if err := json.Unmarshal(v, &a); err != nil {
			return Result{}, false, err
		}
		if len(a) == 0 {
			return Result{}, false, nil
		}
		return parseCachedValue(a[0])
	default:
		var f float64
		if err := json.Unmarshal(v, &f); err != nil {
			return Result{}, false, err
		}
		return Result{Count: uint64(f)}, true, nil
	}
}

// Cache is a persistent Counter cache: an append-only JSONL file of {"key": ..., "value": ...} lines,
// keys in the QuCo-RAG layout. With an inner Counter it asks on a miss and records the answer; without
// one it replays (ErrNotCached on a miss). It is safe for concurrent use.
type Cache struct {
	Inner  Counter
	Index  string // the index name put in keys
	Engine string // tells semantics apart in keys ("" for Infini-gram's)
	// Build is put in keys: the inner counter's identity when it has one (see Identifier).
	Build string

	mu      sync.Mutex
	m       map[string]Result
	f       *os.File
	path    string
	Skipped int // cached failures (null values) seen while loading; they are asked again
	Hits    int
	Misses  int
}

// Identifier is implemented by counters whose answers depend on content that can change under the same
// name (a local index rebuilt at the same path); caches key their answers by the identity.
type Identifier interface {
	Identity() string
}

// NewCache returns an in-memory cache; use OpenCache for a persistent one. When inner is an
// Identifier, its identity is part of every key.
func NewCache(inner Counter, index, engine string) *Cache {
	c := &Cache{Inner: inner, Index: index, Engine: engine, m: map[string]Result{}}
	if id, ok := inner.(Identifier); ok {
		c.Build = id.Identity()
	}
	return c
}

// OpenCache loads (or creates) the JSONL cache at path and appends new answers to it. A torn last line
// (a crash during a write) is cut off the file, so the file holds complete records only, and counted
// in Skipped; any other bad line is an error.
func OpenCache(path string, inner Counter, index, engine string) (*Cache, error) {
	c := NewCache(inner, index, engine)
	data, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("cache %s: %w", path, err)
	}
	lines := bytes.Split(data, []byte("\n"))
	keep := int64(len(data)) // bytes of complete records
	for i, line := range lines {
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		var rec struct {
			Key   string          `json:"key"`
			Value json.RawMessage `json:"value"`
		}
		err := json.Unmarshal(line, &rec)
		var k CacheKey
		if err == nil {
			k, err = parseCacheKey(rec.Key)
		}
		var r Result
		var ok bool
		if err == nil {
			r, ok, err = parseCachedValue(rec.Value)
		}
		if err != nil {
			if i == len(lines)-1 { // torn final write: cut it off
				c.Skipped++
				keep = int64(len(data) - len(line))
				continue
			}
			return nil, fmt.Errorf("cache %s:%d: %w", path, i+1, err)
		}
		if !ok {
			c.Skipped++
			continue
		}
		c.m[k.id()] = r
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("cache %s: %w", path, err)
	}
	if keep < int64(len(data)) {
		if err := f.Truncate(keep); err != nil {
			f.Close()
			return nil, fmt.Errorf("cache %s: cut the torn last line: %w", path, err)
		}
	} else if len(data) > 0 && data[len(data)-1] != '\n' {
		if _, err := f.Write([]byte("\n")); err != nil { // a complete last record without its newline
			f.Close()
			return nil, fmt.Errorf("cache %s: %w", path, err)
		}
	}
	c.f, c.path = f, path
	return c, nil
}

// LoadQuCoCache reads the QuCo-RAG authors' cache file: one JSON object whose keys are
// {"args":[query],"kwargs":{"index":...}} strings and whose values are API results. The returned
// Cache replays them offline (set Inner to ask on misses). Null values are counted in Skipped.
func LoadQuCoCache(path string) (*Cache, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("quco cache %s: %w", path, err)
	}
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(data, &raw); err != nil {
		return nil, fmt.Errorf("quco cache %s: want a JSON object of key → result: %w", path, err)
	}
	c := NewCache(nil, "", "")
	for ks, v := range raw {
		k, err := parseCacheKey(ks)
		if err != nil {
			return nil, fmt.Errorf("quco cache %s: %w", path, err)
		}
		r, ok, err := parseCachedValue(v)
		if err != nil {
			return nil, fmt.Errorf("quco cache %s: value of %s: %w", path, ks, err)
		}
		if !ok {
			c.Skipped++
			continue
		}
		if c.Index == "" {
			c.Index = k.Index
		}
		c.m[k.id()] = r
	}
	return c, nil
}

// Len returns the number of cached answers.
func (c *Cache) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.m)
}

// Close closes the cache file.
func (c *Cache) Close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.f == nil {
		return nil
	}
	err := c.f.Close()
	c.f = nil
	return err
}

// Count implements Counter.
func (c *Cache) Count(ctx context.Context, query string) (Result, error) {
	k := CacheKey{Query: query, Index: c.Index, Engine: c.Engine, Build: c.Build}
	if IsCNF(query) {
		// The window the inner counter uses: Infini-gram's own (the API client, the authors' cache)
		// sends the QuCo-RAG authors' 1000; the local index uses the server default.
		k.Window = DefaultMaxDiffTokens
		if c.Engine == "" {
			k.Window = QuCoDefaultWindow
		}
	}
	return c.get(k, func() (Result, error) { return c.Inner.Count(ctx, query) })
}

// CoOccur implements Counter; the key is that of the query "a AND b" with the window.
func (c *Cache) CoOccur(ctx context.Context, a, b string, window int) (Result, error) {
	k := CacheKey{Query: a + " AND " + b, Index: c.Index, Window: window, Engine: c.Engine, Build: c.Build}
	return c.get(k, func() (Result, error) { return c.Inner.CoOccur(ctx, a, b, window) })
}

func (c *Cache) get(k CacheKey, ask func() (Result, error)) (Result, error) {
	id := k.id()
	c.mu.Lock()
	r, ok := c.m[id]
	if ok {
		c.Hits++
	} else {
		c.Misses++
	}
	c.mu.Unlock()
	if ok {
		return r, nil
	}
	if c.Inner == nil {
		return Result{}, fmt.Errorf("%w: %s", ErrNotCached, k.String())
	}
	r, err := ask()
	if err != nil {
		return Result{}, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.m[id] = r
	if c.f != nil {
		line, _ := json.Marshal(map[string]any{"key": k.String(), "value": r})
		if _, err := c.f.Write(append(line, '\n')); err != nil {
			return r, fmt.Errorf("cache %s: append: %w", c.path, err)
		}
	}
	return r, nil
}

// Export writes the cache as one JSON object in the QuCo-RAG layout (key string → result).
func (c *Cache) Export(path string) error {
	c.mu.Lock()
	out := map[string]Result{}
	for id, r := range c.m {
		out[idToKey(id).String()] = r
	}
	c.mu.Unlock()
	data, err := json.MarshalIndent(out, "", " ")
	if err != nil {
		return err
	}
	if err := atomicfile.WriteFile(path, data, 0o644); err != nil {
		return fmt.Errorf("cache export: %w", err)
	}
	return nil
}

func idToKey(id string) CacheKey {
	parts := bytes.SplitN([]byte(id), []byte{0}, 5)
	w, _ := strconv.Atoi(string(parts[3]))
	return CacheKey{Engine: string(parts[0]), Build: string(parts[1]), Index: string(parts[2]), Window: w, Query: string(parts[4])}
}
