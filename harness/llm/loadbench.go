package llm

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// BenchConfig configures Bench: Requests distinct requests sent by Workers concurrent workers.
type BenchConfig struct {
	Requests, Workers int
	// MaxTokens and Logprobs are set on every request; Chat sends chat requests instead of raw
	// completions.
	MaxTokens, Logprobs int
	Chat                bool
	// Progress, when set, gets a line a second with the requests done and failed.
	Progress io.Writer
}

// Validate reports a config that sends nothing.
func (c BenchConfig) Validate() error {
	if c.Requests <= 0 || c.Workers <= 0 {
		return errors.New("bench: requests and workers must be positive")
	}
	return nil
}

// BenchResult is what Bench measured.
type BenchResult struct {
	// Latencies are those of the successful calls, sorted ascending.
	Latencies []time.Duration
	// Failed counts failed calls; FirstErr is the first failure seen.
	Failed   int
	FirstErr error
	// Elapsed is the wall time from the first request sent to the last answer.
	Elapsed time.Duration
}

// Percentile returns the latency at quantile p in [0, 1] of the successful calls (0 when none).
func (r BenchResult) Percentile(p float64) time.Duration {
	if len(r.Latencies) == 0 {
		return 0
	}
	return r.Latencies[min(len(r.Latencies)-1, int(p*float64(len(r.Latencies))))]
}

// Bench sends cfg.Requests distinct requests ("Question i: who wrote Hamlet?") to g from cfg.Workers
// concurrent workers and measures the latency of each call. A failed call is counted, not retried
// beyond what g does itself. A cancelled ctx stops the run and is returned as an error.
func Bench(ctx context.Context, g Generator, cfg BenchConfig) (BenchResult, error) {
	if err := cfg.Validate(); err != nil {
		return BenchResult{}, err
	}
	jobs := make(chan int)
	var (
		mu      sync.Mutex
		lat     []time.Duration
		failed  atomic.Int64
		done    atomic.Int64
		firstEr atomic.Pointer[error]
		wg      sync.WaitGroup
	)
	stop := make(chan struct{})
	if cfg.Progress != nil {
		go func() {
			t := time.NewTicker(time.Second)
			defer t.Stop()
			for {
				select {
				case <-stop:
					return
				case <-t.C:
					fmt.Fprintf(cfg.Progress, "bench: %d/%d done, %d failed\n", done.Load(), cfg.Requests, failed.Load())
				}
			}
		}()
	}
	start := time.Now()
	for w := 0; w < cfg.Workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range jobs {
				req := Request{Endpoint: Completions, Prompt: "Question " + strconv.Itoa(i) + ": who wrote Hamlet?\nAnswer:", MaxTokens: cfg.MaxTokens, Logprobs: cfg.Logprobs}
				if cfg.Chat {
					req = Request{Endpoint: Chat, Messages: []Message{{Role: "user", Content: req.Prompt}}, MaxTokens: req.MaxTokens, Logprobs: req.Logprobs}
				}
				t0 := time.Now()
				_, err := g.Generate(ctx, req)
				el := time.Since(t0)
				done.Add(1)
				if err != nil {
					failed.Add(1)
					firstEr.CompareAndSwap(nil, &err)
					continue
				}
				mu.Lock()
				lat = append(lat, el)
				mu.Unlock()
			}
		}()
	}
feed:
	for i := 0; i < cfg.Requests; i++ {
		select {
		case jobs <- i:
		case <-ctx.Done():
			break feed
		}
	}
	close(jobs)
	wg.Wait()
	close(stop)
	res := BenchResult{Elapsed: time.Since(start), Failed: int(failed.Load())}
	if err := ctx.Err(); err != nil {
		return res, fmt.Errorf("bench interrupted after %d requests: %w", done.Load(), err)
	}
	slices.Sort(lat)
	res.Latencies = lat
	if p := firstEr.Load(); p != nil {
		res.FirstErr = *p
	}
	return res, nil
}
