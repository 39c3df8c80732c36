package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestNgramCLI(t *testing.T) {
	dir := t.TempDir()
	tsv := filepath.Join(dir, "c.tsv")
	os.WriteFile(tsv, []byte("id\ttext\ttitle\n1\tBarack Obama was born in Honolulu .\tObama\n2\tHonolulu is in Hawaii .\tHonolulu\n"), 0o644)
	idx := filepath.Join(dir, "idx")
	if out, errs, code := runCLI(t, "ngram", "build", "--corpus", tsv, "--out", idx); code != 0 {
		t.Fatalf("build: exit %d\n%s\n%s", code, out, errs)
	}
	if _, errs, code := runCLI(t, "ngram", "build", "--corpus", tsv, "--out", idx); code != 1 || !strings.Contains(errs, "exists") {
		t.Fatalf("rebuild without --force: exit %d %s", code, errs)
	}
	cases := []struct {
		name string
		args []string
		code int
		want string
	}{
		{"count", []string{"ngram", "count", "--index", idx, "Honolulu", "Barack Obama", "nosuch"}, 0, `"count":2`},
		{"count AND", []string{"ngram", "count", "--index", idx, "Obama AND Honolulu"}, 0, `"count":1`},
		{"count ids", []string{"ngram", "count", "--index", idx, "--ids", "0 1"}, 0, `"count":1`},
		{"cooc", []string{"ngram", "cooc", "--index", idx, "--window", "4", "Obama", "Honolulu"}, 0, `"count":1`},
		{"cooc too narrow", []string{"ngram", "cooc", "--index", idx, "--window", "3", "Obama", "Honolulu"}, 0, `"count":0`},
		{"ntd", []string{"ngram", "ntd", "--index", idx, "Honolulu"}, 0, `"prompt_cnt":2`},
		{"unigrams", []string{"ngram", "unigrams", "--index", idx, "--top", "1"}, 0, `"count":`},
		{"cooc needs two args", []string{"ngram", "cooc", "--index", idx, "a"}, 2, ""},
		{"count needs a source", []string{"ngram", "count", "x"}, 2, ""},
		{"bad mode", []string{"ngram", "count", "--index", idx, "--mode", "fuzzy", "x"}, 2, ""},
		{"missing index", []string{"ngram", "count", "--index", filepath.Join(dir, "none"), "x"}, 1, ""},
	}
	for _, tc := range cases {
		out, errs, code := runCLI(t, tc.args...)
		if code != tc.code || !strings.Contains(out, tc.want) {
			t.Errorf("%s: exit %d, stdout %q, stderr %q; want exit %d and %q", tc.name, code, out, errs, tc.code, tc.want)
		}
	}
	// The cache records answers and replays them offline through the QuCo-RAG key layout.
	cache := filepath.Join(dir, "cache.jsonl")
	runCLI(t, "ngram", "count", "--index", idx, "--cache", cache, "Honolulu")
	data, _ := os.ReadFile(cache)
	var rec struct{ Key string }
	if err := json.Unmarshal([]byte(strings.SplitN(string(data), "\n", 2)[0]), &rec); err != nil || !strings.Contains(rec.Key, `"args":["Honolulu"]`) {
		t.Fatalf("cache line %q (%v)", data, err)
	}
}

func TestNgramBenchSmall(t *testing.T) {
	out, errs, code := runCLI(t, "ngram", "bench", "--tokens", "20000", "--vocab", "500", "--queries", "20", "--json")
	if code != 0 {
		t.Fatalf("bench: exit %d: %s", code, errs)
	}
	var rep map[string]any
	if err := json.Unmarshal([]byte(out), &rep); err != nil || rep["tokens"].(float64) < 20000 {
		t.Fatalf("bench report %q (%v)", out, err)
	}
}

// TestNgramBenchSaysWhatItDoes: ngram bench says its phases on stderr without --verbose (at 100M
// tokens it printed nothing for minutes while writing the corpus and building).
func TestNgramBenchSaysWhatItDoes(t *testing.T) {
	_, stderr, code := runCLI(t, "ngram", "bench", "--tokens", "20000", "--vocab", "1000", "--queries", "5", "--no-peer")
	if code != 0 || !strings.Contains(stderr, "bench: writing") || !strings.Contains(stderr, "bench: building") {
		t.Fatalf("exit %d, stderr %q; want its phases on stderr", code, stderr)
	}
}
