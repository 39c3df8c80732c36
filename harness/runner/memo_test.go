package runner

import (
	"context"
	"testing"
	"time"

	"github.com/ragbench/ragbench/harness/retrieval"
	"github.com/ragbench/ragbench/methods"
)

type slowRetriever struct{ d time.Duration }

func (r slowRetriever) Retrieve(ctx context.Context, q string, k int) ([]retrieval.Hit, error) {
	time.Sleep(r.d)
	return []retrieval.Hit{{ID: q}}, nil
}

// TestMemoSharedTime: a retrieval that a second cell takes from the memo costs it no wall time, and
// the time the first cell spent on it is added to the second cell's shared times (and not to the
// first's), so that the report can show what the method needs on its own.
func TestMemoSharedTime(t *testing.T) {
	m := newMemo()
	base := methods.Env{Retriever: slowRetriever{30 * time.Millisecond}}
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
	if took2 := time.Since(start); took2 > 10*time.Millisecond {
		t.Errorf("memo hit took %v: want no retrieval", took2)
	}
	if got := sh1.Timings()[methods.StageRetrieval]; got != 0 {
		t.Errorf("first cell's shared retrieval time %v, want 0 (it did the work)", got)
	}
	got := sh2.Timings()[methods.StageRetrieval]
	if got < 30*time.Millisecond || got > took1 {
		t.Errorf("second cell's shared retrieval time %v, want the first call's time (30ms ≤ t ≤ %v)", got, took1)
	}
	// A different query is not shared.
	if _, err := second.Retriever.Retrieve(ctx, "other", 3); err != nil {
		t.Fatal(err)
	}
	if again := sh2.Timings()[methods.StageRetrieval]; again != got {
		t.Errorf("shared time grew from %v to %v on a miss", got, again)
	}
}
