package datasets

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/ragbench/ragbench/internal/testenv"
)

func TestTimeLoads(t *testing.T) {
	spec := testenv.Data(t, "hotpotqa/distractor/validation-00000-of-00001.parquet")
	calls := 0
	lt, err := TimeLoads(context.Background(), spec, LoadOptions{Limit: 7}, 3, func(LoadTimes) { calls++ })
	if err != nil {
		t.Fatal(err)
	}
	if lt.Rows != 7 || len(lt.Times) != 3 || !slices.IsSorted(lt.Times) || calls != 1 || lt.Name == "" {
		t.Fatalf("got %+v after %d start calls; want 7 rows, 3 sorted times, one call", lt, calls)
	}
	if lt.Percentile(0) != lt.Times[0] || lt.Percentile(1) != lt.Times[2] || lt.Percentile(0.5) != lt.Times[1] {
		t.Error("percentiles index p·(n−1)")
	}
	if lt.Total() != lt.Times[0]+lt.Times[1]+lt.Times[2] {
		t.Error("total")
	}
	if _, err := TimeLoads(context.Background(), spec, LoadOptions{}, 0, nil); err == nil {
		t.Error("n = 0 must be an error")
	}
}

func TestLoadTimesSummary(t *testing.T) {
	lt := LoadTimes{Rows: 100, Times: []time.Duration{10 * time.Millisecond, 20 * time.Millisecond, 30 * time.Millisecond, 140 * time.Millisecond}}
	// p50 is Times[int(0.5·3)] = 20 ms, p99 Times[int(0.99·3)] = 30 ms, mean 50 ms, 400 rows in 0.2 s.
	want := "rows 100  loads 4  p50 20.0 ms  p99 30.0 ms  mean 50.0 ms  2000 rows/s"
	if got := lt.Summary(); got != want {
		t.Errorf("Summary = %q, want %q", got, want)
	}
}
