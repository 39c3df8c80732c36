package main

import (
	"errors"
	"fmt"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/ragbench/ragbench/internal/cliutil"
	"github.com/ragbench/ragbench/reports"
)

func init() {
	register(&cli.Command{
		Name:      "compare",
		Usage:     "compare two runs question by question (a pull-request regression gate)",
		ArgsUsage: "BASE NEW",
		Description: `Pairs the records of two run directories question by question in every dataset and cell, and
reports for each metric the difference new − base with its paired bootstrap interval and the p-value
of a paired randomization test, and lists the questions whose first metric changed. Prints markdown
for a pull-request comment (or JSON with --format json).

The head lists what differs between the two runs' config.yaml (settings, model, server, code
version). Failed questions are left out of every comparison and counted per cell; rows without a
significant change are folded. A regression is a change for the worse that is significant
(p < --alpha) and larger than --max-drop points for scores, or than 10% for cost metrics (#Ret,
#Call, #Tok, times, USD: lower is better, differences in their own units).

Exit status: 0 when there is no regression (or without --fail-on-regression); 1 on a regression
with --fail-on-regression; 2 on bad usage or when the runs cannot be paired (different generator,
datasets, cells, questions or gold answers; the message names each difference); 3 when a run
directory cannot be read; 4 with --fail-on-regression when the runs' numbers of failed questions
differ and there is no regression (a warning without the flag).`,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "metric", Value: "em,f1", Usage: "metrics to compare, comma-separated (em, f1, acc, label_acc, answer_recall, ar@5, ret, tok, call)"},
			&cli.Float64Flag{Name: "max-drop", Value: 0.5, Usage: "allowed drop in points before a significant drop is a regression"},
			&cli.Float64Flag{Name: "alpha", Value: 0.05, Usage: "significance level of the paired test"},
			&cli.BoolFlag{Name: "fail-on-regression", Usage: "exit 1 when there is a regression"},
			&cli.IntFlag{Name: "rounds", Value: 10000, Usage: "randomization rounds"},
			&cli.IntFlag{Name: "resamples", Value: 1000, Usage: "bootstrap resamples of the interval on the difference"},
			&cli.Uint64Flag{Name: "seed", Usage: "seed of the test and the bootstrap"},
			&cli.IntFlag{Name: "max-flips", Value: 20, Usage: "flipped questions listed per cell in markdown"},
			&cli.StringFlag{Name: "format", Aliases: []string{"f"}, Value: "md", Usage: "md or json"},
		},
		Action: compareAction,
	})
}

func compareAction(c *cli.Context) error {
	if c.NArg() != 2 {
		return usagef("compare needs BASE and NEW run directories, got %d arguments", c.NArg())
	}
	format := c.String("format")
	if format != "md" && format != "json" {
		return usagef("--format %q: want md or json", format)
	}
	keys, err := reports.ParseMetrics(c.String("metric"))
	if err != nil {
		return usagef("--metric %v", err)
	}
	if err := cliutil.Fractions(c, "alpha"); err != nil {
		return err
	}
	if c.Float64("max-drop") < 0 || c.Int("rounds") < 1 || c.Int("resamples") < 0 || c.Int("max-flips") < 1 {
		return usagef("--max-drop must not be negative; --rounds and --max-flips must be positive")
	}
	base, err := reports.LoadRun(c.Context, c.Args().Get(0))
	if err != nil {
		return exitError{code: 3, err: err}
	}
	next, err := reports.LoadRun(c.Context, c.Args().Get(1))
	if err != nil {
		return exitError{code: 3, err: err}
	}
	cmp, err := reports.Compare(base, next, reports.CompareOptions{
		Metrics: keys, MaxDrop: c.Float64("max-drop"), Alpha: c.Float64("alpha"), Rounds: c.Int("rounds"),
		Resamples: c.Int("resamples"), Level: 0.95, Seed: c.Uint64("seed"), MaxFlips: c.Int("max-flips"),
	})
	var mis *reports.MismatchError
	if errors.As(err, &mis) {
		return usageError{Err: err}
	}
	if err != nil {
		return err
	}
	if format == "json" {
		err = cliutil.WriteJSON(c.App.Writer, cmp)
	} else {
		err = cmp.Markdown(c.App.Writer)
	}
	if err != nil {
		return err
	}
	for _, e := range cmp.ErrorChanges {
		fmt.Fprintln(c.App.ErrWriter, "warning: failed questions differ:", e)
	}
	if len(cmp.Regressions) > 0 && c.Bool("fail-on-regression") {
		return fmt.Errorf("regression: %s", strings.Join(cmp.Regressions, "; "))
	}
	if len(cmp.ErrorChanges) > 0 && c.Bool("fail-on-regression") {
		return exitError{code: 4, err: fmt.Errorf("failed questions differ: %s", strings.Join(cmp.ErrorChanges, "; "))}
	}
	return nil
}

// exitError is an error with its own exit status (compare: 3 unreadable input, 4 failed questions
// differ).
type exitError struct {
	code int
	err  error
}

func (e exitError) Error() string { return e.err.Error() }
func (e exitError) Unwrap() error { return e.err }
func (e exitError) ExitCode() int { return e.code }
