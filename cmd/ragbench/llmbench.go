package main

import (
	"fmt"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/ragbench/ragbench/harness/llm"
)

// llmBench implements "ragbench llm bench".
func llmBench(c *cli.Context) error {
	if c.Args().Len() > 0 {
		return usagef("bench takes no arguments")
	}
	bc := llm.BenchConfig{Requests: c.Int("requests"), Workers: c.Int("workers"), MaxTokens: c.Int("max-tokens"),
		Logprobs: c.Int("logprobs"), Chat: c.Bool("chat")}
	progress, done := progressWriter(c, true)
	bc.Progress = progress
	if err := bc.Validate(); err != nil {
		return usagef("--requests and --workers must be positive")
	}
	g, cfg, err := newLLM(c)
	if err != nil {
		return err
	}
	defer g.Close()
	fmt.Fprintf(infoWriter(c), "bench: %d requests from %d workers against %s\n", bc.Requests, bc.Workers, describeBackend(cfg))
	res, err := llm.Bench(c.Context, g, bc)
	done()
	if err != nil {
		return err
	}
	ok, el := len(res.Latencies), res.Elapsed
	tot := g.Ledger().Totals()
	w := c.App.Writer
	fmt.Fprintf(w, "requests %d ok, %d failed in %v: %.1f calls/s\n", ok, res.Failed, el.Round(time.Millisecond), float64(ok)/el.Seconds())
	fmt.Fprintf(w, "latency p50 %v  p90 %v  p99 %v  max %v\n", res.Percentile(0.50).Round(time.Microsecond), res.Percentile(0.90).Round(time.Microsecond),
		res.Percentile(0.99).Round(time.Microsecond), res.Percentile(1).Round(time.Microsecond))
	fmt.Fprintf(w, "tokens prompt %d, completion %d (%.1f completion tokens/s); retries %d; cache hits %d\n", tot.PromptTokens, tot.CompletionTokens, float64(tot.CompletionTokens)/el.Seconds(), tot.Retries, tot.CacheHits)
	if res.FirstErr != nil {
		return fmt.Errorf("%d of %d requests failed; first error: %w", res.Failed, bc.Requests, res.FirstErr)
	}
	return nil
}
