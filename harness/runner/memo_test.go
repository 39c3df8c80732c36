package runner

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ragbench/ragbench/harness/retrieval"
	"github.com/ragbench/ragbench/methods"
)

// slowRetriever takes d per retrieval and counts them.
type slowRetriever struct {
	d     time.Duration
	calls *atomic.Int64
}

func (r slowRetriever) Retrieve(ctx context.Context, q string, k int) ([]retrieval.Hit, error) {
	r.calls.Add(1)
	time.Sleep(r.d)
	return []retrieval.Hit{{ID: q}}, nil
}

// TestMemoSharedTime: a retrieval that a second cell takes from the memo costs it no wall time, and
// the time the first cell spent on it is added to the second cell's shared times (and not to the
// first's), so that the report can show what the method needs on its own.
func TestMemoSharedTime(t *testing.T) {
	m := newMemo()
	calls := new(atomic.Int64)
	const delay = 100 * time.Millisecond
	base := methods.Env{Retriever: slowRetriever{delay, calls}}
	first, sh1 := m.wrap(base, "")
	second, sh2 := m.wrap(base, "")
	ctx := context.Background()
	start := time.Now()
	if _, err := first.Retriever.Retrieve(ctx, "q", 3); err != nil {
		t.Fatal(err)
	}
	took1 := time.Since(start)
	start = time.Now()
	if _, err := second.Retriever.Retrieve(ctx, "q", 3); err != nil {
		t.Fatal(err)
	}
	// The hit must not retrieve: counted, not timed (a loaded machine can stall any call for 10 ms).
	// A hit that waited as long as a retrieval would still be seen.
	if n, took2 := calls.Load(), time.Since(start); n != 1 || took2 >= delay {
		t.Errorf("memo hit made %d retrievals in all and took %v: want the first cell's 1 and no wait", n, took2)
	}
	if got := sh1.Timings()[methods.StageRetrieval]; got != 0 {
		t.Errorf("first cell's shared retrieval time %v, want 0 (it did the work)", got)
	}
	got := sh2.Timings()[methods.StageRetrieval]
	if got < delay || got > took1 {
		t.Errorf("second cell's shared retrieval time %v, want the first call's time (%v ≤ t ≤ %v)", got, delay, took1)
	}
	// A different query is not shared.
	if _, err := second.Retriever.Retrieve(ctx, "other", 3); err != nil {
		t.Fatal(err)
	}
	if again := sh2.Timings()[methods.StageRetrieval]; again != got {
		t.Errorf("shared time grew from %v to %v on a miss", got, again)
	}
}
