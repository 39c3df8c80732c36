package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ragbench/ragbench/internal/testenv"
)

// TestRunCommand: ragbench run with flags after the config writes the run directory and prints the
// table; --dry-run plans; a rerun answers nothing; merge joins two shards; bad input exits 1 or 2.
func TestRunCommand(t *testing.T) {
	testenv.Data(t, "nq_open")
	dir := t.TempDir()
	cfg := filepath.Join(dir, "c.yaml")
	os.WriteFile(cfg, []byte("name: cmdtest\ndatasets:\n  - {name: nq_open}\nmethods:\n  - {method: wo-rag}\nllm: {backend: offline}\n"), 0o644)
	out := filepath.Join(dir, "run")
	stdout, stderr, code := runCLI(t, "run", cfg, "--limit", "4", "--out", out)
	if code != 0 || !strings.Contains(stdout, "| nq_open | wo-rag | offline reader (no LLM) | 4 |") {
		t.Fatalf("run: code %d\nstdout %s\nstderr %s", code, stdout, stderr)
	}
	for _, f := range []string{"config.yaml", "summary.md", "summary.json", "nq_open/wo-rag.jsonl", "nq_open/wo-rag.timings.jsonl"} {
		if _, err := os.Stat(filepath.Join(out, f)); err != nil {
			t.Errorf("run directory lacks %s", f)
		}
	}
	if _, stderr, code := runCLI(t, "run", "--limit", "4", "--out", out, cfg); code != 0 || !strings.Contains(stderr, "answered 0, already recorded 4") {
		t.Errorf("rerun: code %d, stderr %s: want nothing answered", code, stderr)
	}
	if _, stderr, code := runCLI(t, "run", cfg, "--limit", "5", "--out", out); code != 1 || !strings.Contains(stderr, "limit: 4 → 5") {
		t.Errorf("rerun with another limit: code %d, stderr %s: want a refusal naming the limit", code, stderr)
	}
	if stdout, _, code := runCLI(t, "run", cfg, "--dry-run", "--limit", "4"); code != 0 || !strings.Contains(stdout, "question × cell pairs: 4") {
		t.Errorf("dry run: code %d, stdout %s", code, stdout)
	}
	var shards []string
	for _, k := range []string{"0/2", "1/2"} {
		d := filepath.Join(dir, "s"+k[:1])
		shards = append(shards, d)
		if _, stderr, code := runCLI(t, "run", cfg, "--limit", "4", "--shard", k, "--out", d); code != 0 {
			t.Fatalf("shard %s: code %d %s", k, code, stderr)
		}
	}
	if stdout, stderr, code := runCLI(t, "merge", "--out", filepath.Join(dir, "merged"), shards[0], shards[1]); code != 0 || !strings.Contains(stdout, "| nq_open | wo-rag | offline reader (no LLM) | 4 |") {
		t.Fatalf("merge: code %d\n%s\n%s", code, stdout, stderr)
	}
	a, _ := os.ReadFile(filepath.Join(out, "nq_open/wo-rag.jsonl"))
	b, _ := os.ReadFile(filepath.Join(dir, "merged", "nq_open/wo-rag.jsonl"))
	if string(a) != string(b) {
		t.Errorf("merged records differ from the whole run's")
	}
	bad := filepath.Join(dir, "bad.yaml")
	os.WriteFile(bad, []byte("name: x\nlimt: 3\n"), 0o644)
	if _, stderr, code := runCLI(t, "run", bad); code != 1 || !strings.Contains(stderr, "line 2: unknown key limt") {
		t.Errorf("bad config: code %d, stderr %s", code, stderr)
	}
	if _, _, code := runCLI(t, "run"); code != 2 {
		t.Errorf("run without a config: code %d, want 2", code)
	}
	if _, stderr, code := runCLI(t, "run", cfg, "--limit", "-1", "--dry-run"); code != 2 || !strings.Contains(stderr, "--limit -1") {
		t.Errorf("--limit -1: code %d, stderr %q; want a usage error (it ran everything)", code, stderr)
	}
	if _, stderr, code := runCLI(t, "run", cfg, "--shards", "3", "--dry-run"); code != 2 || !strings.Contains(stderr, "JOB_COMPLETION_INDEX") {
		t.Errorf("--shards 3 without a job index: code %d, stderr %q; want a usage error (it ran everything)", code, stderr)
	}
	if _, _, code := runCLI(t, "run", cfg, "--shard", "3/2"); code != 2 {
		t.Errorf("bad shard: code %d, want 2", code)
	}
}

// TestRunSetKeepsCommas: a --set value is one YAML value, commas included (urfave/cli split
// "models=[a,b]" into "models=[a" and "b]"), and an error in an override names the override.
func TestRunSetKeepsCommas(t *testing.T) {
	testenv.Data(t, "nq_open")
	cfg := filepath.Join(t.TempDir(), "c.yaml")
	os.WriteFile(cfg, []byte("name: cmdtest\ndatasets:\n  - {name: nq_open}\nmethods:\n  - {method: wo-rag}\nllm: {backend: offline}\n"), 0o644)
	stdout, stderr, code := runCLI(t, "run", cfg, "--dry-run", "--limit", "4", "--set", "models=[a,b]")
	if code != 0 || !strings.Contains(stdout, "question × cell pairs: 8") {
		t.Errorf("--set models=[a,b]: code %d, stdout %s, stderr %s; want two model cells", code, stdout, stderr)
	}
	_, stderr, code = runCLI(t, "run", cfg, "--dry-run", "--set", "concurrency=a,b")
	if code != 1 || !strings.Contains(stderr, "--set concurrency=a,b: ") || strings.Contains(stderr, "want KEY=VALUE") || strings.Contains(stderr, "c.yaml") {
		t.Errorf("--set concurrency=a,b: code %d, stderr %q; want the override named whole", code, stderr)
	}
}

// TestRunDryRunJSONAndOffline: --dry-run --format json prints {"cells": [...]} with each cell's paper
// rows; --offline runs a paper config with no server into NAME-offline; --format json without
// --dry-run and an unknown format are usage errors.
func TestRunDryRunJSONAndOffline(t *testing.T) {
	testenv.Data(t, "2wikimultihopqa")
	t.Setenv("RAGBENCH_CACHE", t.TempDir()) // the offline run builds its indexes here
	root, err := testenv.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(root, "configs", "quco-ablation.yaml")
	stdout, stderr, code := runCLI(t, "run", cfg, "--dry-run", "--format", "json", "--limit", "3")
	if code != 0 {
		t.Fatalf("dry run: code %d, %s", code, stderr)
	}
	var plan struct {
		Cells []struct {
			Cell, Recipe string
			Paper        []map[string]string
		}
	}
	if err := json.Unmarshal([]byte(stdout), &plan); err != nil || len(plan.Cells) != 5 {
		t.Fatalf("dry run JSON: %v, %d cells\n%s", err, len(plan.Cells), stdout)
	}
	if c := plan.Cells[1]; c.Cell != "quco-no-stage1@OLMo-2-1124-7B-Instruct" || !strings.HasSuffix(c.Recipe, "QuCo-RAG_remove_stage_1.json") || len(c.Paper) != 1 || c.Paper[0]["method"] != "QuCo-RAG w/o initial check" {
		t.Errorf("second cell %+v, want the stage-1 ablation from its file with its Table 3 row", c)
	}
	out := filepath.Join(t.TempDir(), "run")
	stdout, stderr, code = runCLI(t, "run", cfg, "--offline", "--limit", "2", "--out", out)
	if code != 0 || !strings.Contains(stdout, "| 2wikimultihopqa | quco-no-stage2@OLMo-2-1124-7B-Instruct | offline reader (no LLM) | 2 |") {
		t.Fatalf("--offline: code %d\n%s\n%s", code, stdout, stderr)
	}
	if b, _ := os.ReadFile(filepath.Join(out, "config.yaml")); !strings.Contains(string(b), "name: quco-ablation-offline") {
		t.Errorf("the offline run is not named quco-ablation-offline:\n%.400s", b)
	}
	if _, stderr, code := runCLI(t, "run", cfg, "--format", "json"); code != 2 || !strings.Contains(stderr, "--format json goes with --dry-run") {
		t.Errorf("--format json without --dry-run: code %d, %s", code, stderr)
	}
	if _, _, code := runCLI(t, "run", cfg, "--dry-run", "--format", "yaml"); code != 2 {
		t.Errorf("--format yaml: code %d, want 2", code)
	}
}
