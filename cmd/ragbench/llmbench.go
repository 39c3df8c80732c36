package main

import (
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/ragbench/ragbench/internal/cliutil"

	"github.com/ragbench/ragbench/harness/llm"
)

// llmBench implements "ragbench llm bench".
func llmBench(c *cli.Context) error {
	if c.Args().Len() > 0 {
		return usagef("bench takes no arguments")
	}
	bc := llm.BenchConfig{Requests: c.Int("requests"), Workers: c.Int("workers"), MaxTokens: c.Int("max-tokens"),
		Logprobs: c.Int("logprobs"), Chat: c.Bool("chat")}
	progress, done := cliutil.ProgressWriter(c, true)
	bc.Progress = progress
	if err := bc.Validate(); err != nil {
		return usagef("--requests and --workers must be positive")
	}
	g, cfg, err := newLLM(c)
	if err != nil {
		return err
	}
	defer g.Close()
	fmt.Fprintf(cliutil.InfoWriter(c), "bench: %d requests from %d workers against %s\n", bc.Requests, bc.Workers, cfg.Describe())
	res, err := llm.Bench(c.Context, g, bc)
	done()
	if err != nil {
		return err
	}
	res.WriteText(c.App.Writer, g.Ledger().Totals())
	if res.FirstErr != nil {
		return fmt.Errorf("%d of %d requests failed; first error: %w", res.Failed, bc.Requests, res.FirstErr)
	}
	return nil
}
