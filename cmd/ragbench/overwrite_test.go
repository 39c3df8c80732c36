package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ragbench/ragbench/internal/testenv"
)

// TestNoCommandWritesOverItsInput: an output path that is one of the inputs is a usage error, and
// the input is left as it was.
func TestNoCommandWritesOverItsInput(t *testing.T) {
	data := testenv.Data(t, "hotpotqa/distractor/validation-00000-of-00001.parquet")
	dir := t.TempDir()
	preds := filepath.Join(dir, "preds.jsonl")
	os.WriteFile(preds, []byte(`{"id":"x","prediction":"y"}`+"\n"), 0o644)
	raw := filepath.Join(dir, "nq.jsonl")
	os.WriteFile(raw, []byte(`{"question":"who?","answer":["a"]}`+"\n"), 0o644)
	cases := []struct {
		name  string
		args  []string
		input string
	}{
		{"score --out is --predictions", []string{"score", "--dataset", data, "--predictions", preds, "--out", preds}, preds},
		{"datasets import IN IN", []string{"datasets", "import", "--format", "nq-open", raw, raw}, raw},
		{"predict --out is the dataset", append([]string{"predict", "--backend", "offline", "--dataset", data, "--out", data}, templatesFlag(t)...), data},
	}
	for _, c := range cases {
		before, _ := os.ReadFile(c.input)
		_, stderr, code := runCLI(t, c.args...)
		if code != 2 || !strings.Contains(stderr, "also an input") {
			t.Errorf("%s: exit %d, stderr %q; want 2 and 'also an input'", c.name, code, stderr)
		}
		if after, _ := os.ReadFile(c.input); string(after) != string(before) {
			t.Errorf("%s: the input changed", c.name)
		}
	}
}

// TestPredictResumeWithOtherSettings: resuming a predictions file with another --shots is refused,
// naming the difference; --force appends.
func TestPredictResumeWithOtherSettings(t *testing.T) {
	data := testenv.Data(t, "hotpotqa/distractor/validation-00000-of-00001.parquet")
	out := filepath.Join(t.TempDir(), "preds.jsonl")
	args := append([]string{"predict", "--backend", "offline", "--dataset", data, "--out", out}, templatesFlag(t)...)
	if _, stderr, code := runCLI(t, append(args, "--limit", "2")...); code != 0 {
		t.Fatalf("first run: %d %s", code, stderr)
	}
	before, _ := os.ReadFile(out)
	_, stderr, code := runCLI(t, append(args, "--shots", "2", "--limit", "3")...)
	if code != 1 || !strings.Contains(stderr, `shots: "8" then, "2" now`) {
		t.Fatalf("resume with other shots: exit %d, %s", code, stderr)
	}
	if after, _ := os.ReadFile(out); string(after) != string(before) {
		t.Error("the refused resume changed the file")
	}
	if _, stderr, code := runCLI(t, append(args, "--shots", "2", "--limit", "3", "--force")...); code != 0 {
		t.Fatalf("--force: %d %s", code, stderr)
	}
}
