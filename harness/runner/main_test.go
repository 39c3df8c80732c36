package runner

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ragbench/ragbench/datasets"
	"github.com/ragbench/ragbench/harness/llm"
	_ "github.com/ragbench/ragbench/harness/llm/offline"
	"github.com/ragbench/ragbench/methods"
)

// rtMethod is the runner tests' method: it retrieves for the question (when asked), asks the generator
// once with the passages and the question, and records its setting tau in the trace. Its prompt does
// not depend on tau, so a tau sweep asks the same prompts.
type rtMethod struct {
	Tau      float64 `json:"tau"`
	Retrieve bool    `json:"retrieve"`
	SleepMS  int     `json:"sleep_ms"`
	Label    string  `json:"label"`
}

func (m *rtMethod) Name() string { return "rt-echo" }

func (m *rtMethod) Answer(ctx context.Context, env methods.Env, ex datasets.Example) (methods.Prediction, error) {
	var p methods.Prediction
	var b strings.Builder
	if m.Retrieve {
		if err := env.Need("rt-echo", "retriever"); err != nil {
			return p, err
		}
		hits, err := env.Retriever.Retrieve(ctx, ex.Question, 3)
		if err != nil {
			return p, err
		}
		for i, h := range hits {
			fmt.Fprintf(&b, "[%d] %s\n", i+1, h.Text)
		}
	}
	fmt.Fprintf(&b, "Question: %s\nAnswer:", ex.Question)
	if m.SleepMS > 0 {
		select {
		case <-time.After(time.Duration(m.SleepMS) * time.Millisecond):
		case <-ctx.Done():
			return p, ctx.Err()
		}
	}
	resp, err := env.Generator.Generate(ctx, llm.Request{Endpoint: llm.Completions, Prompt: b.String(), MaxTokens: 32})
	if err != nil {
		return p, err
	}
	p.Raw = resp.Text
	p.Answer = strings.TrimSpace(resp.Text)
	p.Trace = []methods.Event{{Kind: "answer", Decision: "accept", Threshold: methods.Threshold(m.Tau), Text: m.Label}}
	return p, nil
}

func init() {
	methods.Register("rt-echo", func() rtMethod { return rtMethod{} }, func(m rtMethod) (methods.Method, error) { return &m, nil })
}

// indexCache is shared by the tests of the package so that the BM25 index over the 2Wiki corpus is
// built once.
var indexCache string

func TestMain(m *testing.M) {
	if cfg := os.Getenv("RUNNER_TEST_CHILD"); cfg != "" {
		os.Exit(childMain(cfg))
	}
	dir, err := os.MkdirTemp("", "runner-index-cache-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	indexCache = dir
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// childMain runs the config at path into $RUNNER_TEST_OUT (the kill tests' subprocess).
func childMain(path string) int {
	c, err := Load(path, nil)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	k, n, err := ParseShard(os.Getenv("RUNNER_TEST_SHARD"), 0, func(string) string { return "" })
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	res, err := Execute(context.Background(), c, Options{Out: os.Getenv("RUNNER_TEST_OUT"), Shard: k, Shards: n})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if res.Errors > 0 {
		return 3
	}
	return 0
}

// needData skips (or, under CI, fails) when the shared data is missing.
func needData(t *testing.T) {
	t.Helper()
	if len(datasets.DataDirs()) == 0 {
		if os.Getenv("CI") == "true" {
			t.Fatal("shared data is missing (CI=true makes this a failure)")
		}
		t.Skip("shared data is missing")
	}
	if _, _, ok := datasets.LocalDirOf("2wikimultihopqa"); !ok {
		if os.Getenv("CI") == "true" {
			t.Fatal("2wikimultihopqa is missing from the shared data")
		}
		t.Skip("2wikimultihopqa is missing from the shared data")
	}
}

// testConfig returns a config of the rt-echo method over the first n 2Wiki questions, retrieving from
// the 2Wiki corpus; method is the YAML of the method entry after its name (settings, sweep).
func testConfig(t *testing.T, n int, method string, llmYAML string) Config {
	t.Helper()
	if llmYAML == "" {
		llmYAML = "  backend: offline\n"
	}
	y := fmt.Sprintf(`name: rt
concurrency: 8
index_cache: %s
datasets:
  - name: 2wikimultihopqa
    limit: %d
    corpus: wiki
corpora:
  wiki: {path: corpus/2wiki-paragraphs.jsonl}
methods:
  - method: rt-echo
%s
llm:
%s`, indexCache, n, method, llmYAML)
	c, err := Parse("test.yaml", []byte(y), nil)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// writeConfig writes c as YAML into dir and returns its path.
func writeConfig(t *testing.T, dir string, c Config) string {
	t.Helper()
	b, _, err := ResolvedConfig(c)
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, "config.in.yaml")
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// runFiles returns the record files (and summary) of a run directory: relative path → bytes.
func runFiles(t *testing.T, dir string, timings bool) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	err := filepath.Walk(dir, func(p string, info os.FileInfo, err error) error {
		if err != nil || info.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		switch {
		case strings.HasSuffix(rel, ".timings.jsonl"):
			if !timings {
				return nil
			}
		case strings.HasSuffix(rel, ".jsonl"), rel == "summary.md", rel == "summary.json", rel == "config.yaml":
		default:
			return nil
		}
		b, err := os.ReadFile(p)
		out[rel] = b
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// sameFiles fails the test unless two runs' files are byte-identical.
func sameFiles(t *testing.T, want, got map[string][]byte, what string) {
	t.Helper()
	for k, w := range want {
		g, ok := got[k]
		if !ok {
			t.Errorf("%s: %s missing", what, k)
			continue
		}
		if !bytes.Equal(w, g) {
			t.Errorf("%s: %s differs (%d vs %d bytes)\nwant: %.300s\ngot:  %.300s", what, k, len(w), len(g), firstDiff(w, g), firstDiff(g, w))
		}
	}
	for k := range got {
		if _, ok := want[k]; !ok {
			t.Errorf("%s: unexpected file %s", what, k)
		}
	}
}

func firstDiff(a, b []byte) []byte {
	i := 0
	for i < len(a) && i < len(b) && a[i] == b[i] {
		i++
	}
	start := max(i-80, 0)
	return a[start:min(len(a), i+200)]
}
