package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ragbench/ragbench/internal/testenv"
)

// TestContextEval builds BM25 and LSA unit indexes of a small corpus through the command line and
// evaluates every method's context on three HotpotQA questions.
func TestContextEval(t *testing.T) {
	data := testenv.Data(t, "hotpotqa/distractor/validation-00000-of-00001.parquet")
	dir := t.TempDir()
	corpusFile := filepath.Join(dir, "c.jsonl")
	var b strings.Builder
	topics := []string{"volcano", "river", "castle", "violin", "harbour", "glacier", "orchard", "comet", "desert", "forest"}
	for i, tp := range topics {
		var sents []string
		for j := 0; j < 12; j++ {
			sents = append(sents, fmt.Sprintf("The %s story number %d mentions the %s again.", tp, j, topics[(i+1)%len(topics)]))
		}
		line, _ := json.Marshal(map[string]string{"_id": tp, "title": tp, "text": strings.Join(sents, " ")})
		b.Write(line)
		b.WriteByte('\n')
	}
	if err := os.WriteFile(corpusFile, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, kind := range []string{"bm25", "dense"} {
		if _, stderr, code := runCLI(t, "index", "build", "--kind", kind, "--corpus", corpusFile, "--units", "2,4,8,16,32,long", "--long-tokens", "60", "--out", filepath.Join(dir, kind)); code != 0 {
			t.Fatalf("index build %s: %s", kind, stderr)
		}
	}
	out, stderr, code := runCLI(t, "context-eval", "--dataset", data, "--limit", "3", "--bm25-units", filepath.Join(dir, "bm25"),
		"--dense-units", filepath.Join(dir, "dense"), "--settings", `{"umgp": {"max_overlap": 0.5}}`)
	if code != 0 {
		t.Fatalf("context-eval: %s", stderr)
	}
	for _, m := range []string{"umg on", "umgp on", "standard-rag on", "hybrid on", "longrag on"} {
		if !strings.Contains(out, m) {
			t.Errorf("no %q in\n%s", m, out)
		}
	}
	out, _, code = runCLI(t, "context-eval", "--dataset", data, "--limit", "2", "--methods", "umg", "--json", "--bm25-units", filepath.Join(dir, "bm25"), "--dense-units", filepath.Join(dir, "dense"))
	var rep struct {
		Method    string `json:"method"`
		Questions int    `json:"questions"`
	}
	if code != 0 || json.Unmarshal([]byte(out), &rep) != nil || rep.Method != "umg" || rep.Questions != 2 {
		t.Errorf("json: code %d, %q", code, out)
	}
	// A granularity the index lacks, a misspelt setting: errors that say so.
	_, stderr, code = runCLI(t, "context-eval", "--dataset", data, "--granularities", "2,64", "--bm25-units", filepath.Join(dir, "bm25"), "--dense-units", filepath.Join(dir, "dense"))
	if code != 1 || !strings.Contains(stderr, "no granularity 64") {
		t.Errorf("missing granularity: code %d, %s", code, stderr)
	}
	_, stderr, code = runCLI(t, "context-eval", "--dataset", data, "--settings", `{"umg": {"normalisation": "sum"}}`, "--bm25-units", filepath.Join(dir, "bm25"), "--dense-units", filepath.Join(dir, "dense"))
	if code != 2 || !strings.Contains(stderr, "normalisation") {
		t.Errorf("bad setting: code %d, %s", code, stderr)
	}
	// The two indexes swapped, a misspelt method in --settings: refused, not other numbers.
	_, stderr, code = runCLI(t, "context-eval", "--dataset", data, "--limit", "2", "--bm25-units", filepath.Join(dir, "dense"), "--dense-units", filepath.Join(dir, "bm25"))
	if code != 1 || !strings.Contains(stderr, "is a dense unit index, not a BM25 one") {
		t.Errorf("swapped indexes: code %d, %s", code, stderr)
	}
	_, stderr, code = runCLI(t, "context-eval", "--dataset", data, "--limit", "2", "--bm25-units", filepath.Join(dir, "bm25"), "--dense-units", filepath.Join(dir, "bm25"))
	if code != 1 || !strings.Contains(stderr, "is a BM25 unit index, not a dense one") {
		t.Errorf("BM25 as --dense-units: code %d, %s", code, stderr)
	}
	_, stderr, code = runCLI(t, "context-eval", "--dataset", data, "--settings", `{"umpg": {"max_overlap": 0.5}}`, "--bm25-units", filepath.Join(dir, "bm25"), "--dense-units", filepath.Join(dir, "dense"))
	if code != 2 || !strings.Contains(stderr, `"umpg"`) {
		t.Errorf("misspelt method in --settings: code %d, %s", code, stderr)
	}
	// Scope document: the question's own pages must be in the index (here they are not), and a
	// dataset whose questions ship no document is refused, never given an empty context.
	_, stderr, code = runCLI(t, "context-eval", "--dataset", data, "--limit", "1", "--scope", "document", "--bm25-units", filepath.Join(dir, "bm25"), "--dense-units", filepath.Join(dir, "dense"))
	if code != 1 || !strings.Contains(stderr, "no unit of document") {
		t.Errorf("scope document, pages not indexed: code %d, %s", code, stderr)
	}
	nq := testenv.Data(t, "nq_open/validation-00000-of-00001.parquet")
	_, stderr, code = runCLI(t, "context-eval", "--dataset", nq, "--limit", "1", "--scope", "document", "--bm25-units", filepath.Join(dir, "bm25"), "--dense-units", filepath.Join(dir, "dense"))
	if code != 1 || !strings.Contains(stderr, "ships no document") {
		t.Errorf("scope document on nq_open: code %d, %s", code, stderr)
	}
	if _, stderr, code = runCLI(t, "context-eval", "--dataset", data, "--scope", "page", "--bm25-units", filepath.Join(dir, "bm25"), "--dense-units", filepath.Join(dir, "dense")); code != 2 {
		t.Errorf("bad scope: code %d, %s", code, stderr)
	}
}
