package main

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/urfave/cli/v2"

	"github.com/ragbench/ragbench/internal/cliutil"
	"github.com/ragbench/ragbench/reports"
)

func init() {
	register(&cli.Command{
		Name:      "report",
		Usage:     "tables, plots and an HTML report from run directories",
		ArgsUsage: "RUN_DIR...",
		Description: `Reads run directories (RUN/config.yaml, RUN/DATASET/CELL.jsonl, RUN/DATASET/CELL.timings.jsonl) and
prints the papers' tables: main results (EM/F1, QuCo-RAG Table 1 layout), efficiency (#Tok/#Call/#Ret),
ablation (EM/F1/#Ret), PubMedQA (accuracy/#Ret/#Tok), the UMG-RAG layout (F1, answer recall, AR@5,
retrieval time), cost and latency per question, and EM by entity-frequency bin, question type and
whether retrieval fired.

Without --out the tables go to stdout in --format (html prints the whole page). With --out DIR the
command writes DIR/summary.FORMAT (DIR/report.html for html) and, unless --no-plots, the figures as
DIR/plots/NAME.svg and .png. See docs/reports.md.`,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "format", Aliases: []string{"f"}, Value: "md", Usage: "md, csv, tex, json or html"},
			&cli.StringFlag{Name: "out", Aliases: []string{"o"}, Usage: "write the report and plots into this directory"},
			&cli.BoolFlag{Name: "no-plots", Usage: "with --out, write no plot files"},
			&cli.BoolFlag{Name: "ci", Usage: "show 95% bootstrap intervals (see --resamples, --level)"},
			&cli.IntFlag{Name: "resamples", Value: 1000, Usage: "bootstrap resamples of --ci"},
			&cli.Float64Flag{Name: "level", Value: 0.95, Usage: "confidence level of --ci"},
			&cli.Uint64Flag{Name: "seed", Usage: "seed of the bootstrap and of the paired test"},
			&cli.StringFlag{Name: "baseline", Usage: "row to test every other row against (cell, method or paper name, e.g. SR-RAG)"},
			&cli.IntFlag{Name: "rounds", Value: 1000, Usage: "randomization rounds of the --baseline test"},
			&cli.BoolFlag{Name: "paper", Usage: "put the published numbers the cells name (methods[].paper in the run's config) beside ours"},
			&cli.StringFlag{Name: "reference", Usage: "published numbers (default $RAGBENCH_REFERENCE or ../shared/reference/paper-tables.json beside the checkout)"},
			&cli.StringFlag{Name: "paper-model", Usage: "when a cell names rows of several models, none of them its own: the one to show (default: the first named)"},
			&cli.Float64Flag{Name: "price-in", Usage: "USD per 1M prompt tokens (adds money per question to the cost table)"},
			&cli.Float64Flag{Name: "price-out", Usage: "USD per 1M completion tokens"},
		},
		Action: reportAction,
	})
}

func reportAction(c *cli.Context) error {
	if c.NArg() == 0 {
		return usagef("report needs at least one RUN_DIR")
	}
	format := c.String("format")
	switch format {
	case "md", "csv", "tex", "json", "html":
	default:
		return usagef("--format %q: want md, csv, tex, json or html", format)
	}
	if err := cliutil.Fractions(c, "level"); err != nil {
		return err
	}
	if n := c.Int("resamples"); n < 0 {
		return usagef("--resamples %d: want 0 or more", n)
	}
	if n := c.Int("rounds"); n < 1 {
		return usagef("--rounds %d: want at least 1", n)
	}
	if c.Float64("price-in") < 0 || c.Float64("price-out") < 0 {
		return usagef("--price-in and --price-out must not be negative")
	}
	opts := reports.Options{
		Baseline:   c.String("baseline"),
		Rounds:     c.Int("rounds"),
		PaperModel: c.String("paper-model"),
		Prices:     reports.Prices{PromptPerM: c.Float64("price-in"), CompletionPerM: c.Float64("price-out")},
	}
	opts.CI.Level, opts.CI.Seed = c.Float64("level"), c.Uint64("seed")
	if c.Bool("ci") {
		opts.CI.Resamples = c.Int("resamples")
	}
	if err := outNotInput(c.String("out"), c.Args().Slice()); err != nil {
		return err
	}
	if c.Bool("paper") || c.String("reference") != "" {
		path := c.String("reference")
		if path == "" {
			path = reports.DefaultReferencePath()
		}
		ref, err := reports.LoadReference(path)
		if err != nil {
			return err
		}
		opts.Paper = ref
	}
	runs, err := reports.LoadRuns(c.Context, c.Args().Slice())
	if err != nil {
		return err
	}
	rep, err := reports.Build(runs, opts)
	if err != nil {
		return err
	}
	for _, w := range rep.Warnings {
		fmt.Fprintln(c.App.ErrWriter, "warning:", w)
	}
	if opts.Paper != nil && !rep.NamesPaperRows() {
		fmt.Fprintln(c.App.ErrWriter, "warning: --paper: no cell names a published row (methods[].paper in the runs' config.yaml; the paper configs under configs/ do), so no published number is shown")
	}
	if rep.Baseline() == 0 && opts.Baseline != "" {
		return usagef("--baseline %s matches no row of the report; give a cell, method or paper name it shows", opts.Baseline)
	}
	out := c.String("out")
	written, err := rep.Write(c.App.Writer, format, out, c.Bool("no-plots"))
	if err != nil || out == "" {
		return err
	}
	fmt.Fprintf(c.App.ErrWriter, "wrote %s and %d plot files to %s\n", written.File, written.Plots, out)
	return nil
}

// outNotInput refuses an --out directory that is one of the run directories read: the report's
// summary.md/summary.json and plots would replace the run's own (which merge and compare read).
func outNotInput(out string, runs []string) error {
	if out == "" {
		return nil
	}
	st, err := os.Stat(out)
	if err != nil {
		return nil // a directory that does not exist yet is no input
	}
	for _, r := range runs {
		if rs, err := os.Stat(r); err == nil && os.SameFile(st, rs) {
			return usagef("--out %s is an input run directory; a report never writes into its input (give another directory, e.g. %s)", out, filepath.Join(r, "report"))
		}
	}
	return nil
}
