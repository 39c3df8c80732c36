package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ragbench/ragbench/internal/testenv"
	"github.com/ragbench/ragbench/metrics"
)

func writeFile(t *testing.T, name, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

const tinyCorpus = "id\ttext\ttitle\n" +
	"d1\tThe Eiffel Tower is in Paris. It was built in 1889.\tEiffel Tower\n" +
	"d2\tBerlin is the capital of Germany. It has many museums.\tBerlin\n" +
	"d3\tParis is the capital of France.\tParis\n"

func TestIndexBuildAndSearch(t *testing.T) {
	corpus := writeFile(t, "c.tsv", tinyCorpus)
	out := filepath.Join(t.TempDir(), "ix")
	stdout, stderr, code := runCLI(t, "index", "build", "--corpus", corpus, "--out", out)
	if code != 0 || !strings.Contains(stdout, "bm25 index of 3 documents") {
		t.Fatalf("build: code %d\n%s\n%s", code, stdout, stderr)
	}
	stdout, stderr, code = runCLI(t, "search", "--index", out, "--query", "capital of France", "--k", "2", "--tag", "t")
	lines := strings.Split(strings.TrimSpace(stdout), "\n")
	if code != 0 || len(lines) != 2 || !strings.HasPrefix(lines[0], "1 Q0 d3 1 ") || !strings.HasSuffix(lines[0], " t") {
		t.Fatalf("search: code %d\n%s\n%s", code, stdout, stderr)
	}
	if strings.Contains(stderr, "spill") || strings.Contains(stderr, "merge") {
		t.Errorf("the default build output shows internals:\n%s", stderr)
	}
	if _, verbose, _ := runCLI(t, "index", "build", "--verbose", "--force", "--corpus", corpus, "--out", out); !strings.Contains(verbose, "bm25: spilled run") {
		t.Errorf("--verbose must show the builder's internals:\n%s", verbose)
	}
	stdout, _, code = runCLI(t, "search", "--index", out, "--query", "capital of France", "--k", "1", "--show", "text")
	if got := strings.Split(stdout, "\n"); code != 0 || len(got) != 4 || got[0] != "# 1: capital of France" || !strings.HasPrefix(got[1], "1. d3  0.") ||
		!strings.HasSuffix(got[1], "  Paris") || got[2] != "   Paris is the capital of France." {
		t.Fatalf("--show text: code %d\n%q", code, stdout)
	}
	qs := writeFile(t, "q.tsv", "q1\tEiffel tower\nq2\tthe of and\n")
	stdout, _, code = runCLI(t, "search", "--index", out, "--queries", qs, "--k", "1")
	if code != 0 || strings.TrimSpace(stdout) == "" || !strings.HasPrefix(stdout, "q1 Q0 d1 1 ") || strings.Contains(stdout, "q2") {
		t.Fatalf("queries file (a stopword-only query has no hits): code %d\n%s", code, stdout)
	}
	// Units: one index per size with a sidecar.
	uout := filepath.Join(t.TempDir(), "units")
	stdout, stderr, code = runCLI(t, "index", "build", "--corpus", corpus, "--out", uout, "--units", "1,2")
	if code != 0 {
		t.Fatalf("units build: code %d\n%s\n%s", code, stdout, stderr)
	}
	side, err := os.ReadFile(filepath.Join(uout, "g1", "units.jsonl"))
	if err != nil || strings.Count(string(side), "\n") != 5 || !strings.Contains(string(side), `"id":"d1#g1:1-2"`) {
		t.Fatalf("sidecar: %v\n%s", err, side)
	}
	stdout, _, code = runCLI(t, "search", "--index", filepath.Join(uout, "g1"), "--query", "built 1889", "--k", "1")
	if code != 0 || !strings.HasPrefix(stdout, "1 Q0 d1#g1:1-2 1 ") {
		t.Fatalf("unit search: %s", stdout)
	}
}

func TestIndexUsageErrors(t *testing.T) {
	corpus := writeFile(t, "c.tsv", tinyCorpus)
	unitsOut := t.TempDir()
	for _, g := range []string{"g2", "g4"} {
		if err := os.Mkdir(filepath.Join(unitsOut, g), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	cases := []struct {
		name string
		args []string
		code int
		msg  string
	}{
		{"no source", []string{"index", "build", "--out", t.TempDir()}, 2, "--corpus"},
		{"bad kind", []string{"index", "build", "--kind", "x", "--corpus", corpus, "--out", t.TempDir()}, 2, "bm25 or dense"},
		{"bad units", []string{"index", "build", "--corpus", corpus, "--out", t.TempDir(), "--units", "2,x"}, 2, "--units"},
		{"search without a query", []string{"search", "--index", t.TempDir()}, 2, "--query"},
		{"search of a missing index", []string{"search", "--index", t.TempDir(), "--query", "x"}, 1, "not an index directory"},
		{"search of a unit build's parent names OUT/gN", []string{"search", "--index", unitsOut, "--query", "x"}, 1, "for unit indexes pass OUT/gN (here: g2, g4)"},
		{"--show takes ids or text", []string{"search", "--index", unitsOut, "--query", "x", "--show", "all"}, 2, "--show"},
		{"the old --format name of --corpus-format still works", []string{"index", "build", "--format", "nope", "--corpus", corpus, "--out", t.TempDir()}, 1, "unknown format \"nope\""},
		{"dense without a model", []string{"index", "build", "--kind", "dense", "--embedder", "openai", "--corpus", corpus, "--out", t.TempDir()}, 2, "--embed-model"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, stderr, code := runCLI(t, tc.args...)
			if code != tc.code || !strings.Contains(stderr, tc.msg) {
				t.Fatalf("code %d (want %d), stderr %q (want %q)", code, tc.code, stderr, tc.msg)
			}
		})
	}
}

func TestIndexDenseLSA(t *testing.T) {
	corpus := writeFile(t, "c.tsv", tinyCorpus+
		"d4\tMadrid is a city in Spain with museums.\tMadrid\n"+
		"d5\tRome is a city in Italy.\tRome\n"+
		"d6\tLisbon is a city in Portugal by the sea.\tLisbon\n")
	out := filepath.Join(t.TempDir(), "dense")
	stdout, stderr, code := runCLI(t, "index", "build", "--kind", "dense", "--embedder", "lsa", "--dim", "2", "--corpus", corpus, "--out", out)
	if code != 0 {
		t.Fatalf("dense build: code %d\n%s\n%s", code, stdout, stderr)
	}
	stdout, stderr, code = runCLI(t, "search", "--index", out, "--query", "capital", "--k", "3")
	if code != 0 || strings.Count(stdout, "\n") == 0 {
		t.Fatalf("dense search: code %d\n%s\n%s", code, stdout, stderr)
	}
}

// TestRetrievalEvalReal runs BM25 over the HotpotQA distractor pool and checks the figures reported in
// docs/retrieval.md.
func TestRetrievalEvalReal(t *testing.T) {
	testenv.Data(t, "hotpotqa/distractor/validation-00000-of-00001.parquet")
	out := filepath.Join(t.TempDir(), "hp")
	_, stderr, code := runCLI(t, "index", "build", "--dataset", "hotpotqa", "--out", out)
	if code != 0 || !strings.Contains(stderr, "dataset hotpotqa-distractor: 100 rows from ") {
		t.Fatalf("exit %d; the build must say which dataset file it pooled: %s", code, stderr)
	}
	stdout, stderr, code := runCLI(t, "retrieval-eval", "--dataset", "hotpotqa", "--index", out, "--k", "5")
	if code != 0 || !strings.Contains(stderr, "dataset hotpotqa-distractor: 100 rows from ") {
		t.Fatalf("exit %d; retrieval-eval must say which dataset file it read: %s", code, stderr)
	}
	// k, AR substring, AR tokens, gold recall, gold all, n
	want := "   5        0.6900      0.6200       0.7600     0.5800  100"
	if !strings.Contains(stdout, want) {
		t.Fatalf("got\n%s\nwant a row %q", stdout, want)
	}
}

func TestIndexBench(t *testing.T) {
	cases := []struct {
		name string
		args []string
		code int
		want []string // substrings of stdout (code 0) or stderr
		not  []string // substrings that must not be in stdout
	}{
		{"synthetic corpus, queries and peer", []string{"--n", "2000", "--queries", "30", "--peer-queries", "5"}, 0,
			[]string{"corpus ", "2000 documents", "build ", "passages/s wall", "index size", "query       30 queries, top 10", "query set", "peer        exhaustive scoring of the same 5 queries"}, []string{"NaN"}},
		{"no queries: the query part is skipped, not printed as NaN", []string{"--n", "500", "--queries", "0", "--peer-queries", "0"}, 0,
			[]string{"build ", "query       skipped"}, []string{"NaN", "q/s"}},
		{"huge postings asked for: a postings file under 4 MiB stays mapped, and the bench says so", []string{"--n", "500", "--queries", "10", "--peer-queries", "0", "--huge-postings"}, 0,
			[]string{"postings    --huge-postings: postings.bin mapped", "query       10 queries"}, []string{"NaN"}},
		{"negative query count", []string{"--n", "500", "--queries", "-1"}, 2, []string{"must not be negative"}, nil},
		{"no passages", []string{"--n", "0"}, 2, []string{"passages (n) must be positive"}, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			stdout, stderr, code := runCLI(t, append([]string{"index", "bench", "--dir", t.TempDir()}, tc.args...)...)
			if code != tc.code {
				t.Fatalf("code %d, want %d; stderr %s", code, tc.code, stderr)
			}
			got := stdout
			if tc.code != 0 {
				got = stderr
			}
			for _, w := range tc.want {
				if !strings.Contains(got, w) {
					t.Errorf("missing %q in:\n%s", w, got)
				}
			}
			for _, n := range tc.not {
				if strings.Contains(stdout, n) {
					t.Errorf("unexpected %q in:\n%s", n, stdout)
				}
			}
		})
	}
}

// TestRetrievalEvalNQOracle: gold recall on NQ-open comes from the isgold passages of --nq-oracle,
// matched by text with white space collapsed. Question 0's gold passage is in the index (with its white
// space changed), question 1's is not, and question 1's non-gold oracle passage does not count.
func TestRetrievalEvalNQOracle(t *testing.T) {
	nq := testenv.Data(t, "nq_open/validation-00000-of-00001.parquet")
	corpus := writeFile(t, "c.tsv", "id\ttext\ttitle\n"+
		"p1\tThe last time anyone was on the moon was December 1972, with Apollo 17.\tApollo 17\n"+
		"p2\tHe Ain't Heavy is a ballad.\tSong\n")
	oracle := writeFile(t, "o.jsonl",
		`{"question": "when was the last time anyone was on the moon", "ctxs": [{"title": "Apollo 17", "text": "The last time anyone was on the moon  was December 1972,\nwith Apollo 17.", "isgold": true}]}`+"\n"+
			`{"question": "who wrote he ain't heavy he's my brother lyrics", "ctxs": [{"text": "not in the index", "isgold": true}, {"text": "He Ain't Heavy is a ballad.", "isgold": false}]}`+"\n")
	out := filepath.Join(t.TempDir(), "ix")
	if _, stderr, code := runCLI(t, "index", "build", "--corpus", corpus, "--out", out); code != 0 {
		t.Fatal(stderr)
	}
	stdout, stderr, code := runCLI(t, "retrieval-eval", "--dataset", nq, "--limit", "2", "--index", out, "--nq-oracle", oracle, "--k", "2", "--json")
	if code != 0 {
		t.Fatalf("code %d: %s", code, stderr)
	}
	var rep struct {
		Examples int                    `json:"examples"`
		Rows     []metrics.RetrievalRow `json:"rows"`
	}
	if err := json.Unmarshal([]byte(stdout), &rep); err != nil {
		t.Fatal(err)
	}
	r := rep.Rows[0]
	// AR@2: question 0's answer "December 1972" is in p1; question 1's answers are nowhere.
	if rep.Examples != 2 || r.K != 2 || r.GoldExamples != 2 || r.GoldRecall != 0.5 || r.GoldAll != 0.5 || r.ARSubstring != 0.5 {
		t.Fatalf("got %d examples, %+v", rep.Examples, r)
	}
	if !strings.Contains(stderr, "gold passages from "+oracle+" (2 questions)") {
		t.Errorf("stderr does not name the oracle file: %s", stderr)
	}
}

// TestIndexBenchSaysWhatItDoes: with stderr not a terminal (a log, CI), index bench still says what
// it is doing (the 21M-passage line printed nothing for over 5 minutes).
func TestIndexBenchSaysWhatItDoes(t *testing.T) {
	_, stderr, code := runCLI(t, "index", "bench", "--n", "2000", "--queries", "5", "--peer-queries", "0", "--dir", t.TempDir())
	if code != 0 || !strings.Contains(stderr, "synthetic passages") {
		t.Fatalf("exit %d, stderr %q; want progress on stderr", code, stderr)
	}
}
