package runner

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/ragbench/ragbench/harness/llm"
)

// waits tracks the generator calls in flight, so that the progress of a run that hears nothing from
// its server says what it is waiting for and for how long.
type waits struct {
	mu    sync.Mutex
	next  int64
	start map[int64]time.Time
}

func newWaits() *waits { return &waits{start: map[int64]time.Time{}} }

func (w *waits) begin() int64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.next++
	w.start[w.next] = time.Now()
	return w.next
}

func (w *waits) end(id int64) {
	w.mu.Lock()
	delete(w.start, id)
	w.mu.Unlock()
}

// oldest returns the calls in flight and the age of the oldest.
func (w *waits) oldest(now time.Time) (int, time.Duration) {
	w.mu.Lock()
	defer w.mu.Unlock()
	var age time.Duration
	for _, t := range w.start {
		age = max(age, now.Sub(t))
	}
	return len(w.start), age
}

// waitNotice is the progress line of calls waited on for at least after: what the run is waiting
// for, how long, and when each call gives up ("" when nothing has waited that long).
func (w *waits) waitNotice(now time.Time, after time.Duration, generator string, maxWait time.Duration) string {
	n, age := w.oldest(now)
	if n == 0 || age < after {
		return ""
	}
	return fmt.Sprintf("waiting for %d generator call(s) to %s, the oldest for %s (a call gives up after llm.max_wait %v)",
		n, generator, age.Round(time.Second), maxWait)
}

// trackedGenerator counts a generator's calls in flight in w.
type trackedGenerator struct {
	inner llm.Generator
	w     *waits
}

func (g trackedGenerator) Generate(ctx context.Context, req llm.Request) (llm.Response, error) {
	id := g.w.begin()
	defer g.w.end(id)
	return g.inner.Generate(ctx, req)
}
