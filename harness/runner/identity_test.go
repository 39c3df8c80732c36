package runner

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/ragbench/ragbench/harness/llm"
	"github.com/ragbench/ragbench/harness/llm/llmtest"
)

func storedConfig(t *testing.T, dir string) Config {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "config.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var c Config
	if err := yaml.Unmarshal(b, &c); err != nil || c.Provenance == nil {
		t.Fatalf("%s/config.yaml: %v", dir, err)
	}
	return c
}

// TestModelIsIdentity: the model and server a run takes from $OPENAI_MODEL / $OPENAI_BASE_URL are
// written into config.yaml and its hash; a resume with another model is refused naming it (it
// exited 0 with one cell holding records of two models), and shards of two models do not merge.
func TestModelIsIdentity(t *testing.T) {
	needData(t)
	srv := llmtest.New(t, llmtest.VLLM)
	srv.Record = false
	t.Setenv(llm.EnvBaseURL, srv.BaseURL())
	t.Setenv(llm.EnvModel, "model-a")
	c := testConfig(t, 4, "    settings:\n      tau: 1", "  backend: openai\n")
	dir := t.TempDir()
	if _, err := Execute(context.Background(), c, Options{Out: dir}); err != nil {
		t.Fatal(err)
	}
	sc := storedConfig(t, dir)
	if sc.LLM.Model != "model-a" || sc.LLM.BaseURL != srv.BaseURL() {
		t.Fatalf("config.yaml holds model %q at %q; want the environment's model-a at %s", sc.LLM.Model, sc.LLM.BaseURL, srv.BaseURL())
	}
	if sc.Provenance.Identity["templates/prompt_templates.json"] == "" && PromptsDir("") != "" {
		t.Errorf("identity %v lacks the templates' hash", sc.Provenance.Identity)
	}
	if sc.Provenance.Identity["index/bm25/wiki"] == "" {
		t.Errorf("identity %v lacks the BM25 index's key", sc.Provenance.Identity)
	}
	t.Setenv(llm.EnvModel, "model-b")
	_, err := Execute(context.Background(), testConfig(t, 4, "    settings:\n      tau: 1", "  backend: openai\n"), Options{Out: dir})
	if err == nil || !strings.Contains(err.Error(), "llm.model: model-a → model-b") {
		t.Fatalf("resume with another $OPENAI_MODEL: %v; want a refusal naming the model", err)
	}
	// Shards of two models.
	base := t.TempDir()
	var dirs []string
	for k, m := range []string{"model-a", "model-b"} {
		t.Setenv(llm.EnvModel, m)
		d := filepath.Join(base, m)
		dirs = append(dirs, d)
		if _, err := Execute(context.Background(), testConfig(t, 4, "    settings:\n      tau: 1", "  backend: openai\n"), Options{Out: d, Shard: k, Shards: 2}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := Merge(filepath.Join(base, "m"), dirs); err == nil || !strings.Contains(err.Error(), "llm.model: model-a → model-b") {
		t.Errorf("merge of shards of two models: %v; want a refusal naming the model", err)
	}
}

// TestRecordsOfUnknownOriginNotAdopted: records whose config.yaml was deleted are not adopted by a
// run of other settings (a tau=1 run rerun with tau=2 answered nothing and reported tau=1's
// records); each record file's origin says which run wrote it, so the same run may still continue.
func TestRecordsOfUnknownOriginNotAdopted(t *testing.T) {
	needData(t)
	dir := t.TempDir()
	tau1 := testConfig(t, 3, "    settings:\n      tau: 1", "")
	if _, err := Execute(context.Background(), tau1, Options{Out: dir}); err != nil {
		t.Fatal(err)
	}
	os.Remove(filepath.Join(dir, "config.yaml"))
	_, err := Execute(context.Background(), testConfig(t, 3, "    settings:\n      tau: 2", ""), Options{Out: dir})
	if err == nil || !strings.Contains(err.Error(), "never adopted") || !strings.Contains(err.Error(), "rt-echo.jsonl (written by config") {
		t.Fatalf("tau=2 over tau=1's records without config.yaml: %v; want a refusal naming the file and its origin", err)
	}
	res, err := Execute(context.Background(), tau1, Options{Out: dir})
	if err != nil || res.Done != 0 || res.Skipped != 3 {
		t.Fatalf("the same run without its config.yaml: %+v %v; want its own records kept", res, err)
	}
	// A record file without an origin and without config.yaml is of unknown origin.
	os.Remove(filepath.Join(dir, "config.yaml"))
	os.Remove(filepath.Join(dir, "2wikimultihopqa", "rt-echo.origin"))
	if _, err := Execute(context.Background(), tau1, Options{Out: dir}); err == nil || !strings.Contains(err.Error(), "origin unknown") {
		t.Fatalf("records of unknown origin: %v; want a refusal", err)
	}
}

// TestStartupFailureLeavesNoTrap: a run that fails at start-up leaves no record, so the corrected
// rerun into the same directory is a fresh run (it was refused as "a run with other settings").
func TestStartupFailureLeavesNoTrap(t *testing.T) {
	needData(t)
	dir := t.TempDir()
	bad := testConfig(t, 3, "    settings:\n      tau: 1", "")
	bad.Prompts = filepath.Join(t.TempDir(), "no-such-prompts")
	if _, err := Execute(context.Background(), bad, Options{Out: dir}); err == nil {
		t.Fatal("a missing prompts directory: want a start-up error")
	}
	if _, err := Execute(context.Background(), testConfig(t, 3, "    settings:\n      tau: 1", ""), Options{Out: dir}); err != nil {
		t.Fatalf("the corrected rerun: %v", err)
	}
}

// TestEditedConfigNamed: a run directory whose config.yaml checksum or settings were edited is
// refused with the difference named, never a panic ("slice bounds out of range [:12] with length
// 4") or a bare "config hash differs".
func TestEditedConfigNamed(t *testing.T) {
	needData(t)
	dir := t.TempDir()
	c := testConfig(t, 3, "    settings:\n      tau: 1", "")
	if _, err := Execute(context.Background(), c, Options{Out: dir}); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "config.yaml")
	orig, _ := os.ReadFile(path)
	sc := storedConfig(t, dir)
	for k, v := range sc.Provenance.Datasets {
		os.WriteFile(path, []byte(strings.Replace(string(orig), v, "0000", 1)), 0o644)
		_, err := Execute(context.Background(), c, Options{Out: dir})
		if err == nil || !strings.Contains(err.Error(), "dataset file "+k+" changed since the run started (sha256 0000,") {
			t.Fatalf("checksum edited to 0000: %v; want the file named", err)
		}
		break
	}
	os.WriteFile(path, []byte(strings.Replace(string(orig), "tau: 1", "tau: 2", 1)), 0o644)
	edited, err := Load(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	_, err = Execute(context.Background(), edited, Options{Out: dir})
	if err == nil || !strings.Contains(err.Error(), "config.yaml was edited after the run started") {
		t.Fatalf("rerun of an edited config.yaml: %v; want the edit named", err)
	}
}

// TestMergeRefusals: merge --out never replaces another run (it kept the old run's other cells
// under the new config.yaml), judges a shard complete against its planned questions and names the
// incomplete or missing shard.
func TestMergeRefusals(t *testing.T) {
	needData(t)
	c := testConfig(t, 25, "    settings:\n      tau: 1", "")
	base := t.TempDir()
	var dirs []string
	for k := 0; k < 3; k++ {
		d := filepath.Join(base, "shard"+string(rune('0'+k)))
		dirs = append(dirs, d)
		if _, err := Execute(context.Background(), c, Options{Out: d, Shard: k, Shards: 3}); err != nil {
			t.Fatal(err)
		}
	}
	other := filepath.Join(base, "other")
	if _, err := Execute(context.Background(), testConfig(t, 5, "    settings:\n      tau: 7", ""), Options{Out: other}); err != nil {
		t.Fatal(err)
	}
	before, _ := os.ReadFile(filepath.Join(other, "config.yaml"))
	if _, err := Merge(other, dirs); err == nil || !strings.Contains(err.Error(), "holds a run with other settings") {
		t.Errorf("merge --out over another run: %v; want a refusal", err)
	}
	if after, _ := os.ReadFile(filepath.Join(other, "config.yaml")); string(after) != string(before) {
		t.Error("the refused merge replaced the other run's config.yaml")
	}
	merged := filepath.Join(base, "merged")
	for i := 0; i < 2; i++ { // merging again into the same directory is fine
		if _, err := Merge(merged, dirs); err != nil {
			t.Fatalf("merge %d: %v", i, err)
		}
	}
	if _, err := Merge(filepath.Join(base, "m2"), dirs[:2]); err == nil || !strings.Contains(err.Error(), "missing shard 2/3") {
		t.Errorf("two of three shards: %v; want the missing shard named", err)
	}
	// Shard 1 loses its last record in every cell.
	rec := filepath.Join(dirs[1], "2wikimultihopqa", "rt-echo.jsonl")
	b, _ := os.ReadFile(rec)
	lines := strings.SplitAfter(strings.TrimSuffix(string(b), "\n"), "\n")
	os.WriteFile(rec, []byte(strings.Join(lines[:len(lines)-1], "")), 0o644)
	if _, err := Merge(filepath.Join(base, "m3"), dirs); err == nil || !strings.Contains(err.Error(), "of shard 1/3") || !strings.Contains(err.Error(), "want 8") {
		t.Errorf("shard 1 short of its last record: %v; want shard 1/3 named with its 8 planned questions", err)
	}
	os.Remove(filepath.Join(dirs[1], "summary.json"))
	if _, err := Merge(filepath.Join(base, "m4"), dirs); err == nil || !strings.Contains(err.Error(), "shard 1/3 in "+dirs[1]+" did not finish") {
		t.Errorf("shard 1 without its summary: %v; want it named unfinished", err)
	}
}

// TestLeftoversRemoved: what a kill during the final sort or a merge leaves (.X.jsonl.sort-N,
// .X.tmpN) is removed by the next run or merge of the directory.
func TestLeftoversRemoved(t *testing.T) {
	needData(t)
	dir := t.TempDir()
	c := testConfig(t, 3, "    settings:\n      tau: 1", "")
	if _, err := Execute(context.Background(), c, Options{Out: dir}); err != nil {
		t.Fatal(err)
	}
	left := []string{
		filepath.Join(dir, "2wikimultihopqa", ".rt-echo.jsonl.sort-123"),
		filepath.Join(dir, "2wikimultihopqa", ".rt-echo.jsonl.tmp456"),
		filepath.Join(dir, ".summary.json.tmp789"),
	}
	for _, f := range left {
		os.WriteFile(f, []byte("x"), 0o644)
	}
	if _, err := Execute(context.Background(), c, Options{Out: dir}); err != nil {
		t.Fatal(err)
	}
	for _, f := range left {
		if _, err := os.Stat(f); err == nil {
			t.Errorf("%s is still there", f)
		}
	}
}

// syncBuffer is a bytes.Buffer safe for the progress goroutine and the test.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestSilentServerSaysWhy: against a server that never answers, progress says what the run waits
// for and when a call gives up (it printed "0/6 … 0.0 calls/s" for minutes), and each question fails
// within llm.max_wait with an error saying so.
func TestSilentServerSaysWhy(t *testing.T) {
	needData(t)
	srv := llmtest.New(t, llmtest.VLLM)
	srv.Record = false
	srv.SlowDelay = time.Minute
	for i := 0; i < 50; i++ {
		srv.Enqueue(llmtest.Slow)
	}
	c := testConfig(t, 2, "    settings:\n      tau: 1", "  backend: openai\n  base_url: "+srv.BaseURL()+"\n  model: sim\n  timeout: 400ms\n  max_wait: 1s\n  backoff_base: 1ms\n  backoff_max: 2ms\n")
	var progress syncBuffer
	start := time.Now()
	res, err := Execute(context.Background(), c, Options{Out: t.TempDir(), Progress: &progress, ProgressEvery: 200 * time.Millisecond})
	if el := time.Since(start); el > 10*time.Second {
		t.Errorf("took %v; want each question to give up after max_wait 1s", el)
	}
	if err != nil || res.Errors != 2 {
		t.Fatalf("res %+v err %v; want 2 failed questions", res, err)
	}
	if !strings.Contains(res.FirstError, "rt-echo on 2wikimultihopqa question ") || !strings.Contains(res.FirstError, "no answer within llm.max_wait") {
		t.Errorf("FirstError %q: want the first failure's question and cause (said on stderr)", res.FirstError)
	}
	want := "waiting for 2 generator call(s) to sim at " + srv.BaseURL()
	if p := progress.String(); !strings.Contains(p, want) || !strings.Contains(p, "gives up after llm.max_wait 1s") {
		t.Errorf("progress does not say what it waits for (%q):\n%s", want, p)
	}
	b, _ := os.ReadFile(filepath.Join(res.Dir, "2wikimultihopqa", "rt-echo.jsonl"))
	if !strings.Contains(string(b), "no answer within llm.max_wait 1s") {
		t.Errorf("records lack the max_wait error:\n%.500s", b)
	}
}

// TestOperationalSettingsAreNotIdentity: how many questions and requests run at once, timeouts and
// the cache do not determine a record, so a resume may change them; the generator's requests in
// flight follow the run's concurrency unless set, and the plan shows both.
func TestOperationalSettingsAreNotIdentity(t *testing.T) {
	needData(t)
	c := testConfig(t, 3, "    settings:\n      tau: 1", "")
	if c.LLM.Concurrency != c.Concurrency {
		t.Errorf("llm.concurrency %d, want the run's concurrency %d when unset", c.LLM.Concurrency, c.Concurrency)
	}
	set := testConfig(t, 3, "    settings:\n      tau: 1", "  backend: offline\n  concurrency: 3\n")
	if set.LLM.Concurrency != 3 {
		t.Errorf("llm.concurrency set to 3 became %d", set.LLM.Concurrency)
	}
	dir := t.TempDir()
	if _, err := Execute(context.Background(), c, Options{Out: dir}); err != nil {
		t.Fatal(err)
	}
	c2 := c
	c2.Concurrency, c2.LLM.Concurrency, c2.LLM.Timeout = 2, 5, time.Minute
	res, err := Execute(context.Background(), c2, Options{Out: dir})
	if err != nil || res.Done != 0 {
		t.Fatalf("resume with other concurrency and timeout: %+v %v; want it allowed", res, err)
	}
	if sc := storedConfig(t, dir); sc.Concurrency != 2 || sc.LLM.Concurrency != 5 {
		t.Errorf("config.yaml holds concurrency %d/%d, want the resume's 2/5", sc.Concurrency, sc.LLM.Concurrency)
	}
	c64 := testConfig(t, 3, "    settings:\n      tau: 1", "")
	c64.Concurrency, c64.LLM.Concurrency = 64, 0
	c64 = c64.Defaults()
	var out bytes.Buffer
	if err := DryRun(context.Background(), c64, Options{}, &out); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "in flight: 64 questions (concurrency), 64 generator requests (llm.concurrency)") {
		t.Errorf("the plan does not show the effective in-flight bounds:\n%s", out.String())
	}
}

// TestLLMFollowsConcurrency: at a 200 ms server, a run of concurrency 64 without llm.concurrency
// reaches the server with more than llm's old default of 8 requests in flight (it was capped at 8:
// 9.5 s instead of 1.5 s for 300 questions).
func TestLLMFollowsConcurrency(t *testing.T) {
	needData(t)
	srv := llmtest.New(t, llmtest.VLLM)
	srv.Record = false
	srv.Delay = 200 * time.Millisecond
	c := testConfig(t, 128, "    settings:\n      tau: 1", "  backend: openai\n  base_url: "+srv.BaseURL()+"\n  model: sim\n")
	c.Concurrency, c.LLM.Concurrency = 64, 0
	c = c.Defaults()
	start := time.Now()
	if _, err := Execute(context.Background(), c, Options{Out: t.TempDir()}); err != nil {
		t.Fatal(err)
	}
	el := time.Since(start)
	t.Logf("128 questions at a 200 ms server, concurrency 64: %v, %d requests in flight at most (ideal 400ms)", el, srv.MaxInFlight())
	if m := srv.MaxInFlight(); m <= 8 {
		t.Errorf("at most %d requests in flight; want the run's 64 (llm's old default capped it at 8)", m)
	}
}
