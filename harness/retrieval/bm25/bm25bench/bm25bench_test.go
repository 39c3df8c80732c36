package bm25bench

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestValidate(t *testing.T) {
	cases := []struct {
		name   string
		change func(c *Config)
		ok     bool
	}{
		{"defaults", func(c *Config) {}, true},
		{"no passages", func(c *Config) { c.N = 0 }, false},
		{"no passages but a corpus", func(c *Config) { c.N, c.Corpus = 0, "x.tsv" }, true},
		{"negative queries", func(c *Config) { c.Queries = -1 }, false},
		{"negative peer queries", func(c *Config) { c.PeerQueries = -1 }, false},
		{"no queries: the query part is skipped", func(c *Config) { c.Queries = 0 }, true},
		{"k 0", func(c *Config) { c.K = 0 }, false},
		{"no postings buffer", func(c *Config) { c.MemoryMB = 0 }, false},
		{"negative workers", func(c *Config) { c.Workers = -1 }, false},
	}
	for _, tc := range cases {
		c := DefaultConfig()
		tc.change(&c)
		if err := c.Validate(); (err == nil) != tc.ok {
			t.Errorf("%s: Validate() = %v, want ok %v", tc.name, err, tc.ok)
		}
	}
}

// TestRun runs a small synthetic benchmark and checks that every part of the report is measured, and a
// run from a query file on a real-format corpus.
func TestRun(t *testing.T) {
	c := DefaultConfig()
	c.N, c.Queries, c.PeerQueries, c.Dir = 2000, 30, 5, t.TempDir()
	rep, err := Run(context.Background(), c)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Docs != 2000 || rep.Queries != 30 || rep.PeerQueries != 5 || rep.K != 10 || rep.Terms == 0 || rep.Postings == 0 ||
		rep.IndexBytes <= rep.InvertedBytes || rep.StoredText == 0 || rep.BuildWall <= 0 || rep.QueryWall <= 0 || rep.P99 < rep.P50 ||
		rep.PeerWall <= 0 || rep.TermsPerQuery <= 0 {
		t.Fatalf("incomplete report: %+v", rep)
	}
	var out bytes.Buffer
	rep.Print(&out)
	for _, want := range []string{"corpus ", "2000 documents", "passages/s wall", "index size", "query       30 queries, top 10", "query set", "peer        exhaustive scoring of the same 5 queries"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("missing %q in:\n%s", want, out.String())
		}
	}
	if strings.Contains(out.String(), "NaN") || strings.Count("\n"+out.String(), "\ncorpus ") != 1 {
		t.Errorf("NaN or a repeated report in:\n%s", out.String())
	}

	qf := filepath.Join(t.TempDir(), "q.txt")
	if err := os.WriteFile(qf, []byte("alpha beta\n\n  gamma  \n"), 0o644); err != nil {
		t.Fatal(err)
	}
	c2 := DefaultConfig()
	c2.Corpus, c2.QueryFile, c2.Queries, c2.PeerQueries = filepath.Join(c.Dir, "synthetic.tsv"), qf, 10, 0
	rep2, err := Run(context.Background(), c2)
	if err != nil {
		t.Fatal(err)
	}
	if rep2.Queries != 2 || rep2.PeerQueries != 0 || rep2.Docs != 2000 {
		t.Fatalf("query file run: %d queries (want the file's 2), %d peer, %d docs", rep2.Queries, rep2.PeerQueries, rep2.Docs)
	}
}
