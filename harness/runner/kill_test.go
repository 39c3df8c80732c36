package runner

import (
	"bytes"
	"context"
	"errors"
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
	t.Helper()
	var progress []int
	defer func() { t.Logf("records on disk after each kill: %v", progress) }()
	deadline := time.Now().Add(90 * time.Second)
	for {
		if time.Now().After(deadline) {
			t.Fatalf("no clean run after %d runs and %d kills", runs, landed)
		}
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), "RUNNER_TEST_CHILD="+cfgPath, "RUNNER_TEST_OUT="+out)
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
// recorded once and files identical to an undisturbed run's.
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
