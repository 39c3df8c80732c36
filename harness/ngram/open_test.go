package ngram

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ragbench/ragbench/harness/corpus"
	"github.com/ragbench/ragbench/internal/testenv"
)

func TestConfigValidate(t *testing.T) {
	cases := []struct {
		name string
		cfg  Config
		want string // substring of the error; "" for valid
	}{
		{"an index directory selects the local backend", Config{Index: "ix"}, ""},
		{"infinigram mode is a mode", Config{Index: "ix", Mode: "infinigram"}, ""},
		{"the API needs nothing else: the public endpoint is the default", Config{Backend: BackendAPI}, ""},
		{"a quco cache selects the replay backend", Config{QuCoCache: "c.json"}, ""},
		{"nothing given is an error, not a guess", Config{}, "ngram.backend is empty"},
		{"an unknown backend is named", Config{Backend: "sql"}, `ngram.backend "sql"`},
		{"local without an index", Config{Backend: BackendLocal}, "ngram.index is empty"},
		{"an unknown mode", Config{Index: "ix", Mode: "fuzzy"}, "ngram.mode"},
		{"token width 3 does not exist", Config{Index: "ix", TokenWidth: 3}, "ngram.token_width 3"},
		{"an API URL without a scheme", Config{Backend: BackendAPI, APIURL: "localhost:8765"}, "ngram.api_url"},
		{"quco replay without its file", Config{Backend: BackendQuCoCache}, "ngram.quco_cache is empty"},
		{"quco replay takes no JSONL cache (it would be ignored)", Config{QuCoCache: "c.json", Cache: "x.jsonl"}, "ngram.cache"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.cfg.Defaults().Validate()
			if tc.want == "" {
				if err != nil {
					t.Fatalf("valid config rejected: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want an error containing %q", err, tc.want)
			}
		})
	}
	if _, err := Open(context.Background(), Config{Index: "ix", Mode: "fuzzy"}); err == nil || !strings.Contains(err.Error(), "ngram config") {
		t.Fatalf("Open does not validate: %v", err)
	}
}

// limitReader yields the first n documents of r.
type limitReader struct {
	corpus.Reader
	n int
}

func (l *limitReader) Next() (corpus.Document, error) {
	if l.n <= 0 {
		return corpus.Document{}, io.EOF
	}
	l.n--
	return l.Reader.Next()
}

// TestOpenBackends opens each backend from its config over a small index of real NQ Wikipedia passages
// and checks that it answers as the index it stands for.
func TestOpenBackends(t *testing.T) {
	path := testenv.Data(t, "corpus/nq-wiki-passages.tsv")
	ctx := context.Background()
	r, err := corpus.Open(path, "")
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "nq")
	if _, err := BuildFrom(ctx, &limitReader{Reader: r, n: 1500}, dir, BuildOptions{}); err != nil {
		t.Fatal(err)
	}
	r.Close()
	ix, err := OpenIndex(dir, OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	srv := httptest.NewServer((&Server{Index: ix}).Handler())
	defer srv.Close()

	queries := []string{"United States", "the", "World War", "no such entity xyzzy"}
	pairs := [][2]string{{"United States", "war"}, {"the", "of"}, {"xyzzy", "the"}}
	compat := Compat{Index: ix, MaxClauseFreq: DefaultMaxClauseFreq}
	cases := []struct {
		name   string
		cfg    Config
		want   Counter // the counter the source must agree with
		engine string
		local  bool
	}{
		{"local index, exact mode", Config{Index: dir}, ix, "ragbench-exact", true},
		{"local index, infinigram mode", Config{Index: dir, Mode: "infinigram"}, compat, "ragbench-infinigram", true},
		{"API client against ngram serve", Config{Backend: BackendAPI, APIURL: srv.URL, APIIndex: "nq"}, ix, "", false},
		{"JSONL cache in front of the local index", Config{Index: dir, Cache: filepath.Join(t.TempDir(), "c.jsonl")}, ix, "ragbench-exact", true},
		{"JSONL cache in front of the API", Config{Backend: BackendAPI, APIURL: srv.URL, Cache: filepath.Join(t.TempDir(), "c.jsonl")}, ix, "", false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s, err := Open(ctx, tc.cfg)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			if (s.Index != nil) != tc.local || s.Engine != tc.engine || (s.Cache != nil) != (tc.cfg.Cache != "") {
				t.Fatalf("index %v, engine %q, cache %v; want local %v, engine %q, cache %v", s.Index != nil, s.Engine, s.Cache != nil, tc.local, tc.engine, tc.cfg.Cache != "")
			}
			for _, q := range queries {
				got, err := s.Count(ctx, q)
				want, werr := tc.want.Count(ctx, q)
				if err != nil || werr != nil || got != want {
					t.Errorf("Count(%q) = %+v, %v; want %+v, %v", q, got, err, want, werr)
				}
			}
			for _, p := range pairs {
				got, err := s.CoOccur(ctx, p[0], p[1], 50)
				want, werr := tc.want.CoOccur(ctx, p[0], p[1], 50)
				if err != nil || werr != nil || got != want {
					t.Errorf("CoOccur(%q, %q) = %+v, %v; want %+v, %v", p[0], p[1], got, err, want, werr)
				}
			}
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			if tc.cfg.Cache == "" {
				return
			}
			// Reopened, the cache answers every query without asking.
			s2, err := Open(ctx, tc.cfg)
			if err != nil {
				t.Fatal(err)
			}
			defer s2.Close()
			if s2.Cache.Len() != len(queries)+len(pairs) {
				t.Fatalf("cache holds %d answers, want %d", s2.Cache.Len(), len(queries)+len(pairs))
			}
			for _, q := range queries {
				s2.Count(ctx, q)
			}
			if s2.Cache.Misses != 0 || s2.Cache.Hits != len(queries) {
				t.Fatalf("reopened cache: %d hits, %d misses", s2.Cache.Hits, s2.Cache.Misses)
			}
		})
	}
}

func TestOpenQuCoCache(t *testing.T) {
	ctx := context.Background()
	s, err := Open(ctx, Config{QuCoCache: filepath.Join("testdata", "quco_cache.json")})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if s.Index != nil || s.Cache == nil || s.Engine != "" {
		t.Fatalf("replay source: index %v, cache %v, engine %q", s.Index, s.Cache, s.Engine)
	}
	if r, err := s.Count(ctx, "Barack Obama"); err != nil || r.Count != 123456 {
		t.Fatalf("Count = %+v, %v; want 123456 from the authors' cache", r, err)
	}
	if _, err := s.Count(ctx, "never asked"); !errors.Is(err, ErrNotCached) {
		t.Fatalf("a miss gives %v, want ErrNotCached", err)
	}
	if _, err := Open(ctx, Config{Index: filepath.Join(t.TempDir(), "none")}); err == nil {
		t.Fatal("a missing index opened")
	}
}

// TestConfigJSON checks that a config survives a run record: JSON out and back, nothing lost.
func TestConfigJSON(t *testing.T) {
	in := Config{Backend: BackendLocal, Index: "ix", Mode: "infinigram", TokenWidth: 4, Verify: true, MaxClauseFreq: 1000, Cache: "c.jsonl"}
	b, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	var out Config
	if err := json.Unmarshal(b, &out); err != nil || out != in {
		t.Fatalf("round trip: %+v, %v\n%s", out, err, b)
	}
}
