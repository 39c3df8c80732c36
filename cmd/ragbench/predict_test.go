package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ragbench/ragbench/datasets"
	"github.com/ragbench/ragbench/harness/llm/llmtest"
	"github.com/ragbench/ragbench/harness/runner"
	"github.com/ragbench/ragbench/internal/testenv"
)

func hotpotData(t *testing.T) string {
	return testenv.Data(t, "hotpotqa/distractor/validation-00000-of-00001.parquet")
}

func templatesFlag(t *testing.T) []string {
	return []string{"--templates", testenv.Reference(t, "quco-rag")}
}

// readRecords parses a predictions file.
func readRecords(t *testing.T, data []byte) []runner.PredictionLine {
	t.Helper()
	var out []runner.PredictionLine
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		var r runner.PredictionLine
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatalf("record %q: %v", sc.Text(), err)
		}
		out = append(out, r)
	}
	return out
}

// stable zeroes the wall-clock field so that records compare across runs.
func stable(t *testing.T, recs []runner.PredictionLine) []byte {
	t.Helper()
	var b bytes.Buffer
	for _, r := range recs {
		r.LatencyMS = 0
		line, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		b.Write(append(line, '\n'))
	}
	return b.Bytes()
}

func TestPredictUsage(t *testing.T) {
	data := hotpotData(t)
	tmpl := templatesFlag(t)
	base := append([]string{"predict", "--backend", "offline", "--dataset", data, "--limit", "2"}, tmpl...)
	cases := []struct {
		name string
		args []string
		code int
		err  string // substring of stderr
	}{
		{"no dataset is a usage error", []string{"predict", "--backend", "offline"}, 2, "needs --dataset"},
		{"stray argument", append(append([]string{}, base...), "extra"), 2, "no arguments"},
		{"negative limit", append([]string{"predict", "--backend", "offline", "--dataset", data, "--limit", "-1"}, tmpl...), 2, "must not be negative"},
		{"a repeated single-value flag is an error, not last-one-wins", append(append([]string{}, base...), "--limit", "3"), 2, "--limit is given more than once"},
		{"limit and sample", append(append([]string{}, base...), "--sample", "3"), 2, "not both"},
		{"no workers", append(append([]string{}, base...), "--workers", "0"), 2, "--workers"},
		{"shots below -1", append(append([]string{}, base...), "--shots", "-2"), 2, "--shots"},
		{"more shots than exemplars", append(append([]string{}, base...), "--shots", "50"), 2, "exemplar set \"hotpotqa\" has"},
		{"unknown exemplar set", append(append([]string{}, base...), "--exemplars", "trivia"), 2, "no exemplar set \"trivia\""},
		{"unknown extractor", append(append([]string{}, base...), "--extract", "magic"), 2, "--extract"},
		{"missing templates", []string{"predict", "--backend", "offline", "--dataset", data, "--templates", t.TempDir()}, 1, "--templates or $RAGBENCH_REFERENCE"},
		{"openai without a model", []string{"predict", "--backend", "openai", "--base-url", "http://127.0.0.1:9/v1", "--dataset", data}, 2, "model"},
		{"zero shots works", append(append([]string{}, base...), "--shots", "0"), 0, "0 shot(s)"},
		{"offline is labelled", base, 0, "offline reader (no LLM)"},
	}
	t.Setenv("OPENAI_MODEL", "")
	t.Setenv("OPENAI_API_KEY", "")
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, stderr, code := runCLI(t, tc.args...)
			if code != tc.code || !strings.Contains(stderr, tc.err) {
				t.Fatalf("exit %d, want %d; stderr lacks %q?\n%s", code, tc.code, tc.err, stderr)
			}
		})
	}
}

// TestPredictGolden pins the first records of HotpotQA distractor with the offline reader (latency
// zeroed). Refresh with: go test ./cmd/ragbench -run TestPredictGolden -update
func TestPredictGolden(t *testing.T) {
	stdout, stderr, code := runCLI(t, append([]string{"predict", "--backend", "offline", "--dataset", hotpotData(t), "--limit", "5", "--workers", "3"}, templatesFlag(t)...)...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	recs := readRecords(t, []byte(stdout))
	for _, r := range recs {
		if r.Model != "offline reader (no LLM)" || r.Backend != "offline" {
			t.Fatalf("record %s labelled %q/%q", r.ID, r.Backend, r.Model)
		}
	}
	got := stable(t, recs)
	golden := filepath.Join("testdata", "predict", "hotpotqa-distractor-offline.jsonl")
	if *update {
		if err := os.MkdirAll(filepath.Dir(golden), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(golden, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("records differ from %s:\ngot\n%s\nwant\n%s", golden, got, want)
	}
	if !strings.Contains(stderr, "5/5") {
		t.Fatalf("no progress on stderr: %s", stderr)
	}
}

// TestPredictResume: a second run with a larger --limit skips the done ids, appends, and ends with
// the same records as one run; a cut-short last line is dropped first.
func TestPredictResume(t *testing.T) {
	data := hotpotData(t)
	dir := t.TempDir()
	out := filepath.Join(dir, "p.jsonl")
	args := func(limit string) []string {
		return append([]string{"predict", "--backend", "offline", "--dataset", data, "--limit", limit, "--out", out, "--workers", "2"}, templatesFlag(t)...)
	}
	if _, stderr, code := runCLI(t, args("3")...); code != 0 {
		t.Fatalf("first run: exit %d: %s", code, stderr)
	}
	// Simulate a kill in the middle of writing a fourth record.
	f, err := os.OpenFile(out, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(`{"id":"5a8c7595554299585d9e36b6","predi`)
	f.Close()
	_, stderr, code := runCLI(t, args("6")...)
	if code != 0 {
		t.Fatalf("resumed run: exit %d: %s", code, stderr)
	}
	if !strings.Contains(stderr, "resuming") || !strings.Contains(stderr, "3 of 6 selected examples done, 3 to go") {
		t.Fatalf("resume not reported: %s", stderr)
	}
	resumed, _ := os.ReadFile(out)
	fresh, stderr, code := runCLI(t, append([]string{"predict", "--backend", "offline", "--dataset", data, "--limit", "6"}, templatesFlag(t)...)...)
	if code != 0 {
		t.Fatalf("fresh run: exit %d: %s", code, stderr)
	}
	if a, b := stable(t, readRecords(t, resumed)), stable(t, readRecords(t, []byte(fresh))); !bytes.Equal(a, b) {
		t.Fatalf("resumed file differs from one run:\n%s\nvs\n%s", a, b)
	}
	// A third run has nothing to do.
	if _, stderr, code := runCLI(t, args("6")...); code != 0 || !strings.Contains(stderr, "0 to go") || !strings.Contains(stderr, "wrote 0 record(s)") {
		t.Fatalf("third run: exit %d: %s", code, stderr)
	}
	// Another dataset's file is refused.
	other := filepath.Join(dir, "other.jsonl")
	os.WriteFile(other, []byte(`{"id":"not-a-hotpot-id","prediction":"x"}`+"\n"), 0o644)
	if _, stderr, code := runCLI(t, append([]string{"predict", "--backend", "offline", "--dataset", data, "--limit", "2", "--out", other}, templatesFlag(t)...)...); code != 1 || !strings.Contains(stderr, "another dataset") {
		t.Fatalf("foreign file: exit %d: %s", code, stderr)
	}
}

// TestPredictErrorRecorded: against the fake OpenAI server, a request answered 400 is recorded with
// its error, the run goes on and exits 1; a rerun retries only that example; score reads the file.
func TestPredictErrorRecorded(t *testing.T) {
	srv := llmtest.New(t, llmtest.VLLM)
	t.Setenv("OPENAI_API_KEY", cliTestKey)
	t.Setenv("OPENAI_BASE_URL", "")
	t.Setenv("OPENAI_MODEL", "")
	data := hotpotData(t)
	out := filepath.Join(t.TempDir(), "p.jsonl")
	args := append([]string{"predict", "--base-url", srv.BaseURL(), "--model", "fake-model", "--max-retries", "-1",
		"--dataset", data, "--limit", "4", "--workers", "1", "--out", out}, templatesFlag(t)...)
	srv.Enqueue(llmtest.None, llmtest.BadRequest)
	_, stderr, code := runCLI(t, args...)
	if code != 1 || !strings.Contains(stderr, "1 of 4 example(s) failed") {
		t.Fatalf("exit %d, want 1 with the failure counted:\n%s", code, stderr)
	}
	data1, _ := os.ReadFile(out)
	recs := readRecords(t, data1)
	if len(recs) != 4 {
		t.Fatalf("%d records, want 4 (the run goes on after a failure)", len(recs))
	}
	for i, r := range recs {
		if (i == 1) != (r.Error != "") {
			t.Fatalf("record %d: error %q; want only the second to fail", i, r.Error)
		}
		if r.Backend != "openai" || r.Model == "" {
			t.Fatalf("record %d labelled %q/%q", i, r.Backend, r.Model)
		}
	}
	if !strings.Contains(recs[1].Error, "maximum context length") || strings.Contains(string(data1)+stderr, cliTestKey) {
		t.Fatalf("error %q should quote the server and never the key", recs[1].Error)
	}
	// Scoring now: the errored example counts as missing.
	sout, serr, code := runCLI(t, "score", "--dataset", data, "--limit", "4", "--predictions", out, "--format", "json", "--resamples", "0")
	if code != 0 || !strings.Contains(serr, "1 record(s) carry an error") || !strings.Contains(sout, `"n_missing": 1`) {
		t.Fatalf("score: exit %d\n%s\n%s", code, sout, serr)
	}
	before := srv.Count()
	if _, stderr, code := runCLI(t, args...); code != 0 || !strings.Contains(stderr, "1 failed, to be retried") {
		t.Fatalf("retry: exit %d: %s", code, stderr)
	}
	if n := srv.Count() - before; n != 1 {
		t.Fatalf("retry made %d requests, want 1", n)
	}
	sout, serr, code = runCLI(t, "score", "--dataset", data, "--limit", "4", "--predictions", out, "--format", "json", "--resamples", "0")
	if code != 0 || !strings.Contains(sout, `"n_missing": 0`) {
		t.Fatalf("score after retry: exit %d\n%s\n%s", code, sout, serr)
	}
}

// TestPredictCancel: cancelling a run against a slow server stops it promptly, keeps the records
// written (a prefix in dataset order, none failed by the cut), and a rerun finishes the rest.
func TestPredictCancel(t *testing.T) {
	srv := llmtest.New(t, llmtest.OpenAI)
	// 200 ms a call on 2 workers: the 38 questions left at the cancel would take 3.8 s, well above the
	// 2 s bound below, which leaves a loaded machine room (it was 500 ms over 40 ms calls).
	srv.Delay = 200 * time.Millisecond
	t.Setenv("OPENAI_API_KEY", cliTestKey)
	t.Setenv("OPENAI_BASE_URL", "")
	t.Setenv("OPENAI_MODEL", "")
	data := hotpotData(t)
	out := filepath.Join(t.TempDir(), "p.jsonl")
	argsFor := func(s *llmtest.Server) []string {
		return append([]string{"ragbench", "predict", "--base-url", s.BaseURL(), "--model", "fake-model",
			"--dataset", data, "--limit", "40", "--workers", "2", "--out", out}, templatesFlag(t)...)
	}
	args := argsFor(srv)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	// Cancel once two records are on disk (loading time varies with the machine's load).
	var cancelled atomic.Int64 // unix nanoseconds of the cancel
	go func() {
		for ctx.Err() == nil {
			if b, _ := os.ReadFile(out); bytes.Count(b, []byte("\n")) >= 2 {
				cancelled.Store(time.Now().UnixNano())
				cancel()
				return
			}
			time.Sleep(2 * time.Millisecond)
		}
	}()
	var stdout, stderr bytes.Buffer
	err := run(ctx, args, &stdout, &stderr)
	if c := cancelled.Load(); c == 0 {
		t.Fatalf("the run ended before it was cancelled: %v", err)
	} else if el := time.Since(time.Unix(0, c)); el > 2*time.Second {
		t.Fatalf("the run stopped %v after the cancel", el)
	}
	if err == nil || !strings.Contains(stderr.String()+err.Error(), "resume") {
		t.Fatalf("err %v, want a stop that says how to resume; stderr %s", err, stderr.String())
	}
	written, _ := os.ReadFile(out)
	recs := readRecords(t, written)
	if len(recs) == 0 || len(recs) >= 40 {
		t.Fatalf("%d records kept, want some but not all", len(recs))
	}
	for _, r := range recs {
		if r.Error != "" {
			t.Fatalf("record %s failed by the cancellation: %s", r.ID, r.Error)
		}
	}
	// The rerun goes to a fast server (the slow one may still be finishing cancelled replies).
	if _, stderr, code := runCLI(t, argsFor(llmtest.New(t, llmtest.OpenAI))[1:]...); code != 0 || !strings.Contains(stderr, "resuming") {
		t.Fatalf("rerun: exit %d: %s", code, stderr)
	}
	all, _ := os.ReadFile(out)
	if got := readRecords(t, all); len(got) != 40 || !bytes.HasPrefix(all, written) {
		t.Fatalf("after the rerun %d records (want 40), earlier records kept: %v", len(got), bytes.HasPrefix(all, written))
	}
}

// TestPredictThenScore is the end-to-end pipeline on real data: the offline reader's predictions
// for the first 100 HotpotQA distractor questions, scored by `ragbench score`, give the figures of
// harness/llm/offline's TestGoldContextAccuracy (EM 26.0, F1 31.8).
func TestPredictThenScore(t *testing.T) {
	data := hotpotData(t)
	out := filepath.Join(t.TempDir(), "p.jsonl")
	if _, stderr, code := runCLI(t, append([]string{"predict", "--backend", "offline", "--dataset", data, "--limit", "100", "--out", out}, templatesFlag(t)...)...); code != 0 {
		t.Fatalf("predict: exit %d: %s", code, stderr)
	}
	sout, serr, code := runCLI(t, "score", "--dataset", data, "--limit", "100", "--predictions", out, "--format", "json", "--resamples", "0")
	if code != 0 {
		t.Fatalf("score: exit %d: %s", code, serr)
	}
	var rep struct {
		Summary struct {
			N       int `json:"n"`
			Missing int `json:"n_missing"`
			EM, F1  struct {
				Mean float64 `json:"mean"`
			}
		} `json:"summary"`
	}
	if err := json.Unmarshal([]byte(sout), &rep); err != nil {
		t.Fatalf("score output: %v\n%s", err, sout)
	}
	s := rep.Summary
	if s.N != 100 || s.Missing != 0 || math.Abs(s.EM.Mean-0.26) > 1e-9 || math.Abs(s.F1.Mean-0.318) > 0.0005 {
		t.Fatalf("n %d missing %d EM %.4f F1 %.4f; want 100, 0, 0.26, 0.318", s.N, s.Missing, s.EM.Mean, s.F1.Mean)
	}
}

// TestPredictOracle: NQ-open is closed-book unless --oracle gives passages by question text; the
// counts are on stderr and the oracle passage reaches the reader.
func TestPredictOracle(t *testing.T) {
	data := testenv.Data(t, "nq_open/validation-00000-of-00001.parquet")
	ds, err := datasets.Load(context.Background(), data, datasets.LoadOptions{Limit: 2})
	if err != nil {
		t.Fatal(err)
	}
	q, gold := ds.Examples[0].Question, ds.Examples[0].Answers[0]
	line, _ := json.Marshal(map[string]any{"question": q, "ctxs": []map[string]string{{"title": "T", "text": "The answer to this is " + gold + " as recorded."}}})
	oracle := filepath.Join(t.TempDir(), "oracle.jsonl")
	if err := os.WriteFile(oracle, append(line, '\n'), 0o644); err != nil {
		t.Fatal(err)
	}
	base := append([]string{"predict", "--backend", "offline", "--dataset", data, "--limit", "2", "--out", "-"}, templatesFlag(t)...)
	cases := []struct {
		name, reason string
		extra        []string
		stderr       string
	}{
		{"closed-book", "NQ-open ships no context", nil, "2 examples (2 with no context)"},
		{"oracle", "one of the two questions is in the oracle file", []string{"--oracle", oracle}, "2 examples (1 with no context; 1 given oracle passages"},
	}
	for _, c := range cases {
		stdout, stderr, code := runCLI(t, append(append([]string{}, base...), c.extra...)...)
		if code != 0 || !strings.Contains(stderr, c.stderr) {
			t.Fatalf("%s: exit %d; stderr lacks %q (%s):\n%s", c.name, code, c.stderr, c.reason, stderr)
		}
		recs := readRecords(t, []byte(stdout))
		if len(recs) != 2 {
			t.Fatalf("%s: %d records", c.name, len(recs))
		}
		if c.name == "oracle" && !strings.Contains(recs[0].RawOutput, gold) {
			t.Fatalf("the oracle passage did not reach the reader: %q (gold %q)", recs[0].RawOutput, gold)
		}
	}
}
