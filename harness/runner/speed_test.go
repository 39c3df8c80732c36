package runner

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ragbench/ragbench/datasets"
	"github.com/ragbench/ragbench/methods"
)

// nullMethod answers at once without any component: what is left of a run is the runner's own work
// (planning, instrumenting, scoring, records, timings, progress, the final ordering, the summary).
type nullMethod struct{}

func (nullMethod) Name() string { return "rt-null" }

func (nullMethod) Answer(ctx context.Context, env methods.Env, ex datasets.Example) (methods.Prediction, error) {
	return methods.Prediction{Answer: "December 1972", Raw: "It was in December 1972.", Trace: []methods.Event{{Kind: "answer", Decision: "accept"}}}, nil
}

func init() {
	methods.Register("rt-null", func() struct{} { return struct{}{} }, func(struct{}) (methods.Method, error) { return nullMethod{}, nil })
}

func nullConfig(t testing.TB, n int) Config {
	y := fmt.Sprintf("name: speed\nindex_cache: %s\ndatasets:\n  - {name: nq_open, limit: %d}\nmethods:\n  - {method: rt-null}\nllm: {backend: offline}\n", indexCache, n)
	c, err := Parse("speed.yaml", []byte(y), nil)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// peakHeap runs f while sampling the heap in use every millisecond and returns the peak.
func peakHeap(f func()) uint64 {
	runtime.GC()
	var peak atomic.Uint64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		var ms runtime.MemStats
		for {
			runtime.ReadMemStats(&ms)
			if ms.HeapInuse > peak.Load() {
				peak.Store(ms.HeapInuse)
			}
			select {
			case <-stop:
				return
			case <-time.After(time.Millisecond):
			}
		}
	}()
	f()
	close(stop)
	wg.Wait()
	return peak.Load()
}

// TestRunnerOverhead: the runner's own work per question is at most 1 ms, and its memory does not
// grow with the number of questions beyond the dataset itself.
func TestRunnerOverhead(t *testing.T) {
	needData(t)
	if testing.Short() {
		t.Skip("measures time")
	}
	var perQ [2]time.Duration
	var peaks [2]uint64
	for i, n := range []int{1000, 3610} {
		c := nullConfig(t, n)
		dir := t.TempDir()
		var elapsed time.Duration
		peaks[i] = peakHeap(func() {
			start := time.Now()
			res, err := Execute(context.Background(), c, Options{Out: dir})
			elapsed = time.Since(start)
			if err != nil {
				t.Fatal(err)
			}
			if res.Done != n {
				t.Fatalf("answered %d of %d", res.Done, n)
			}
		})
		perQ[i] = elapsed / time.Duration(n)
		t.Logf("%d questions: %v wall, %v per question, peak heap %.1f MiB", n, elapsed.Round(time.Millisecond), perQ[i], float64(peaks[i])/(1<<20))
	}
	if perQ[1] > time.Millisecond {
		t.Errorf("runner overhead %v per question, want ≤ 1 ms", perQ[1])
	}
	// 3.6x the questions: the heap may grow by the dataset's own examples (a few hundred bytes each),
	// not by the records.
	if grow := int64(peaks[1]) - int64(peaks[0]); grow > 4<<20 {
		t.Errorf("peak heap grew by %.1f MiB from 1000 to 3610 questions: the run is held in memory", float64(grow)/(1<<20))
	}
}
