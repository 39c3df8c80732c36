package datasets

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"
)

// LoadTimes are the wall times of repeated loads of one dataset.
type LoadTimes struct {
	// Name and Rows describe the dataset loaded (Rows after the load options' selection).
	Name string
	Rows int
	// Times are the load times, sorted ascending.
	Times []time.Duration
}

// TimeLoads loads spec n times (n >= 1) with opts and records how long each load took. started, when
// not nil, is called after the first load.
func TimeLoads(ctx context.Context, spec string, opts LoadOptions, n int, started func(LoadTimes)) (LoadTimes, error) {
	if n < 1 {
		return LoadTimes{}, errors.New("time loads: n must be at least 1")
	}
	var lt LoadTimes
	for i := 0; i < n; i++ {
		t0 := time.Now()
		ds, err := Load(ctx, spec, opts)
		if err != nil {
			return lt, err
		}
		lt.Times = append(lt.Times, time.Since(t0))
		lt.Name, lt.Rows = ds.Name, len(ds.Examples)
		if i == 0 && started != nil {
			started(lt)
		}
	}
	slices.Sort(lt.Times)
	return lt, nil
}

// Percentile returns the load time at quantile p in [0, 1]: the element at index p·(n−1), rounded
// down.
func (lt LoadTimes) Percentile(p float64) time.Duration {
	return lt.Times[int(p*float64(len(lt.Times)-1))]
}

// Total is the sum of the load times.
func (lt LoadTimes) Total() time.Duration {
	var sum time.Duration
	for _, d := range lt.Times {
		sum += d
	}
	return sum
}

// Summary is one line of the row count, the number of loads, p50, p99 and mean load time and the
// rows loaded per second, as 'ragbench datasets bench' prints it.
func (lt LoadTimes) Summary() string {
	n := len(lt.Times)
	sum := lt.Total()
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
	return fmt.Sprintf("rows %d  loads %d  p50 %.1f ms  p99 %.1f ms  mean %.1f ms  %.0f rows/s", lt.Rows, n,
		ms(lt.Percentile(0.5)), ms(lt.Percentile(0.99)), ms(sum/time.Duration(n)), float64(lt.Rows*n)/sum.Seconds())
}
