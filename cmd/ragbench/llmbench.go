package main

import (
	"fmt"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/ragbench/ragbench/harness/llm"
	"github.com/ragbench/ragbench/harness/llm/llmtest"
)

// cleanups runs the simulated server's cleanup functions (llmtest.New wants a testing.TB-like value).
type cleanups struct{ fns []func() }

func (c *cleanups) Helper()          {}
func (c *cleanups) Cleanup(f func()) { c.fns = append(c.fns, f) }
func (c *cleanups) run() {
	for i := len(c.fns) - 1; i >= 0; i-- {
		c.fns[i]()
	}
}

// llmBench implements "ragbench llm bench".
func llmBench(c *cli.Context) error {
	if c.Args().Len() > 0 {
		return usagef("bench takes no arguments")
	}
	n, workers := c.Int("requests"), c.Int("workers")
	if n <= 0 || workers <= 0 {
		return usagef("--requests and --workers must be positive")
	}
	if d := c.Duration("simulate"); d > 0 {
		cl := &cleanups{}
		defer cl.run()
		srv := llmtest.New(cl, llmtest.VLLM)
		srv.Delay, srv.Record = d, false
		if err := c.Set("base-url", srv.BaseURL()); err != nil {
			return err
		}
		if c.String("model") == "" {
			c.Set("model", "simulated")
		}
		c.Set("backend", "openai")
	}
	if c.Int("concurrency") < workers {
		c.Set("concurrency", strconv.Itoa(workers))
	}
	g, cfg, err := newLLM(c)
	if err != nil {
		return err
	}
	defer g.Close()
	errw := c.App.ErrWriter
	fmt.Fprintf(errw, "bench: %d requests from %d workers against %s (concurrency %d)\n", n, workers, describeBackend(cfg), cfg.Concurrency)

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
	go func() { // progress on stderr
		t := time.NewTicker(time.Second)
		defer t.Stop()
		for {
			select {
			case <-stop:
				return
			case <-t.C:
				fmt.Fprintf(errw, "bench: %d/%d done, %d failed\n", done.Load(), n, failed.Load())
			}
		}
	}()
	start := time.Now()
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range jobs {
				req := llm.Request{Endpoint: llm.Completions, Prompt: "Question " + strconv.Itoa(i) + ": who wrote Hamlet?\nAnswer:", MaxTokens: c.Int("max-tokens"), Logprobs: c.Int("logprobs")}
				if c.Bool("chat") {
					req = llm.Request{Endpoint: llm.Chat, Messages: []llm.Message{{Role: "user", Content: req.Prompt}}, MaxTokens: req.MaxTokens, Logprobs: req.Logprobs}
				}
				t0 := time.Now()
				_, err := g.Generate(c.Context, req)
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
	for i := 0; i < n; i++ {
		select {
		case jobs <- i:
		case <-c.Context.Done():
			break feed
		}
	}
	close(jobs)
	wg.Wait()
	close(stop)
	elapsed := time.Since(start)
	if err := c.Context.Err(); err != nil {
		return fmt.Errorf("bench interrupted after %d requests: %w", done.Load(), err)
	}

	slices.Sort(lat)
	pct := func(p float64) time.Duration {
		if len(lat) == 0 {
			return 0
		}
		return lat[min(len(lat)-1, int(p*float64(len(lat))))]
	}
	tot := g.Ledger().Totals()
	w := c.App.Writer
	fmt.Fprintf(w, "requests %d ok, %d failed in %v: %.1f calls/s\n", len(lat), failed.Load(), elapsed.Round(time.Millisecond), float64(len(lat))/elapsed.Seconds())
	fmt.Fprintf(w, "latency p50 %v  p90 %v  p99 %v  max %v\n", pct(0.50).Round(time.Microsecond), pct(0.90).Round(time.Microsecond), pct(0.99).Round(time.Microsecond), pct(1).Round(time.Microsecond))
	fmt.Fprintf(w, "tokens prompt %d, completion %d (%.1f completion tokens/s); retries %d; cache hits %d\n", tot.PromptTokens, tot.CompletionTokens, float64(tot.CompletionTokens)/elapsed.Seconds(), tot.Retries, tot.CacheHits)
	if p := firstEr.Load(); p != nil {
		return fmt.Errorf("%d of %d requests failed; first error: %w", failed.Load(), n, *p)
	}
	return nil
}
