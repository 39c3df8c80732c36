package runner

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ragbench/ragbench/harness/llm/llmtest"
)

// killLoop runs the config at cfgPath in subprocesses into out, killing each with SIGKILL at a random
// moment within [minDelay, maxDelay) until kills kills happened, then reruns without killing until a
// run ends cleanly (every question answered without error). It returns the number of kills that
// landed and the number of runs.
func killLoop(t *testing.T, cfgPath, out string, kills int, minDelay, maxDelay time.Duration, rng *rand.Rand) (landed, runs int) {
	return killLoopShard(t, cfgPath, out, "", kills, minDelay, maxDelay, rng)
}

// killLoopShard is killLoop running shard ("K/N"; "" for the whole run).
func killLoopShard(t *testing.T, cfgPath, out, shard string, kills int, minDelay, maxDelay time.Duration, rng *rand.Rand) (landed, runs int) {
	t.Helper()
	var progress []int
	defer func() { t.Logf("records on disk after each kill: %v", progress) }()
	deadline := time.Now().Add(90 * time.Second)
	for {
		if time.Now().After(deadline) {
			t.Fatalf("no clean run after %d runs and %d kills", runs, landed)
		}
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), "RUNNER_TEST_CHILD="+cfgPath, "RUNNER_TEST_OUT="+out, "RUNNER_TEST_SHARD="+shard)
		cmd.Stderr = nil
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		runs++
		exited := make(chan error, 1)
		go func() { exited <- cmd.Wait() }()
		if landed < kills {
			delay := minDelay + time.Duration(rng.Int64N(int64(maxDelay-minDelay)))
			select {
			case err := <-exited:
				if err == nil {
					return landed, runs
				}
				continue // failed questions (exit 3): rerun
			case <-time.After(delay):
				cmd.Process.Signal(syscall.SIGKILL)
				<-exited
				landed++
				progress = append(progress, countLines(t, out))
				continue
			}
		}
		err := <-exited
		if err == nil {
			return landed, runs
		}
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != 3 {
			t.Fatalf("run %d: %v", runs, err)
		}
	}
}

// TestKillResume: a run killed with SIGKILL at 20 random moments and resumed ends with record files
// (and summary) byte-identical to an uninterrupted run's, with every question recorded once per cell.
func TestKillResume(t *testing.T) {
	needData(t)
	if testing.Short() {
		t.Skip("spawns subprocesses")
	}
	c := testConfig(t, 300, "    sweep:\n      tau: [1, 5]\n    settings:\n      retrieve: true\n      sleep_ms: 25", "")
	// About 3.75 s of work (600 question-cells × 25 ms / 4 in flight): more than 20 kills leave.
	c.Concurrency = 4
	ref := t.TempDir()
	if _, err := Execute(context.Background(), c, Options{Out: ref}); err != nil {
		t.Fatal(err)
	}
	work := t.TempDir()
	cfgPath := writeConfig(t, work, c)
	out := filepath.Join(work, "run")
	rng := rand.New(rand.NewPCG(1, 2))
	landed, runs := killLoop(t, cfgPath, out, 20, 60*time.Millisecond, 300*time.Millisecond, rng)
	t.Logf("%d kills, %d runs", landed, runs)
	if landed < 20 {
		t.Fatalf("only %d kills landed", landed)
	}
	sameFiles(t, runFiles(t, ref, false), runFiles(t, out, false), "killed and resumed run")
}

// TestChaos: the LLM server answers with faults (5xx, 429, 400, truncated and cut bodies, resets)
// and the process is killed at random moments; resumed until done, the run ends with every question
// recorded once and files identical to an undisturbed run's. Two shards run the same way and merged
// are identical too; a rerun or a shard with another model is refused and changes nothing.
func TestChaos(t *testing.T) {
	needData(t)
	if testing.Short() {
		t.Skip("spawns subprocesses")
	}
	srv := llmtest.New(t, llmtest.VLLM)
	srv.RetryAfter = "0"
	srv.Record = false
	work := t.TempDir()
	llmYAML := "  backend: openai\n  base_url: " + srv.BaseURL() + "\n  model: sim\n  max_retries: 1\n  backoff_base: 1ms\n  backoff_max: 5ms\n  concurrency: 4\n"
	c := testConfig(t, 150, "    sweep:\n      tau: [1, 5]\n    settings:\n      retrieve: true\n      sleep_ms: 10", llmYAML+"  cache:\n    path: "+filepath.Join(work, "llm.sqlite")+"\n")
	c.Concurrency = 6
	ref := t.TempDir()
	undisturbed := c
	undisturbed.LLM.Cache.Path = ""
	undisturbed.LLM.Cache.Mode = ""
	if _, err := Execute(context.Background(), undisturbed, Options{Out: ref}); err != nil {
		t.Fatal(err)
	}
	faults := []llmtest.Fault{llmtest.ServerError, llmtest.RateLimit, llmtest.BadRequest, llmtest.Truncated, llmtest.CutBody, llmtest.Reset}
	rng := rand.New(rand.NewPCG(3, 4))
	var q []llmtest.Fault
	for i := 0; i < 400; i++ {
		if rng.IntN(3) == 0 {
			q = append(q, faults[rng.IntN(len(faults))])
		} else {
			q = append(q, llmtest.None)
		}
	}
	srv.Enqueue(q...)
	cfgPath := writeConfig(t, work, c)
	out := filepath.Join(work, "run")
	landed, runs := killLoop(t, cfgPath, out, 10, 20*time.Millisecond, 250*time.Millisecond, rng)
	t.Logf("%d kills, %d runs, %d requests", landed, runs, srv.Count())
	if landed < 5 {
		t.Fatalf("only %d kills landed before the run finished", landed)
	}
	// The resolved configs differ in the cache path only: compare records and summaries.
	want, got := runFiles(t, ref, false), runFiles(t, out, false)
	delete(want, "config.yaml")
	delete(got, "config.yaml")
	sameFiles(t, want, got, "chaos run")

	// A change of model: the rerun is refused and the run's files stay as they are.
	other := c
	other.LLM.Model = "sim2"
	otherPath := filepath.Join(work, "other")
	os.MkdirAll(otherPath, 0o755)
	otherCfg := writeConfig(t, otherPath, other)
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "RUNNER_TEST_CHILD="+otherCfg, "RUNNER_TEST_OUT="+out)
	msg, err := cmd.CombinedOutput()
	if err == nil || !strings.Contains(string(msg), "llm.model: sim → sim2") {
		t.Errorf("rerun with another model: %v %s; want a refusal naming the model", err, msg)
	}
	sameFiles(t, got, func() map[string][]byte { m := runFiles(t, out, false); delete(m, "config.yaml"); return m }(), "run after a refused change of model")

	// Merge: two shards under faults and kills, merged, equal the undisturbed run.
	srv.Enqueue(q...)
	var shards []string
	for k := 0; k < 2; k++ {
		d := filepath.Join(work, fmt.Sprintf("shard%d", k))
		shards = append(shards, d)
		sl, sr := killLoopShard(t, cfgPath, d, fmt.Sprintf("%d/2", k), 3, 20*time.Millisecond, 200*time.Millisecond, rng)
		t.Logf("shard %d/2: %d kills, %d runs", k, sl, sr)
	}
	merged := filepath.Join(work, "merged")
	if _, err := Merge(merged, shards); err != nil {
		t.Fatal(err)
	}
	mg := runFiles(t, merged, false)
	delete(mg, "config.yaml")
	sameFiles(t, want, mg, "chaos shards merged")
	// A shard of another model does not merge.
	od := filepath.Join(work, "shard1-sim2")
	if _, err := Execute(context.Background(), func() Config { o := undisturbed; o.LLM.Model = "sim2"; return o }(), Options{Out: od, Shard: 1, Shards: 2}); err != nil {
		t.Fatal(err)
	}
	if _, err := Merge(filepath.Join(work, "merged2"), []string{shards[0], od}); err == nil || !strings.Contains(err.Error(), "llm.model: sim → sim2") {
		t.Errorf("merge with a shard of another model: %v; want a refusal naming the model", err)
	}
}

// countLines counts the record lines of a run directory.
func countLines(t *testing.T, dir string) int {
	n := 0
	files, _ := filepath.Glob(filepath.Join(dir, "*", "*.jsonl"))
	for _, f := range files {
		if strings.HasSuffix(f, ".timings.jsonl") {
			continue
		}
		b, _ := os.ReadFile(f)
		n += bytes.Count(b, []byte("\n"))
	}
	return n
}
