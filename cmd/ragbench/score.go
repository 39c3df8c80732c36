package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/ragbench/ragbench/internal/cliutil"

	"github.com/ragbench/ragbench/datasets"
	"github.com/ragbench/ragbench/internal/pathcheck"
	"github.com/ragbench/ragbench/metrics"
	"github.com/ragbench/ragbench/reports"
)

func init() {
	register(&cli.Command{
		Name:      "score",
		Usage:     "score predictions made elsewhere against a dataset's gold answers (EM, F1, acc, CIs)",
		ArgsUsage: " ",
		Description: `Reads predictions as JSONL ({"id": ..., "prediction": ...}; "qid"/"_id" and "pred"/"answer"
are accepted too, so DRAGIN/QuCo-RAG output files work as they are) or as the official HotpotQA
prediction JSON ({"answer": {id: text}}), and prints one table row: n, n missing, EM, F1 and acc
(sub-EM) with seeded bootstrap 95% intervals; for PubMedQA also accuracy and macro-F1.

A dataset example without a prediction scores 0 and is counted in "n missing". A prediction whose
id is not in the dataset is not scored and is reported on stderr as a counted warning. A duplicate
prediction id is an error (it is ambiguous which one to score).

A file none of whose ids is an id of the dataset is an error (exit 1): it was made for another
dataset or id scheme. A null prediction counts as missing, not as the empty answer.

With --baseline, a second predictions file is scored the same way and compared with a paired
approximate randomization test (EM and F1). A regression is a drop of more than --max-drop points
with p < --alpha; it is reported on stderr, and with --fail-on-regression the exit status is 1.
To compare two 'ragbench run' directories, use 'ragbench compare'.`,
		Flags: withDataset(
			&cli.StringFlag{Name: "predictions", Aliases: []string{"p"}, Usage: "predictions file (JSONL or HotpotQA JSON; - for stdin) (required)"},
			&cli.StringFlag{Name: "format", Aliases: []string{"f"}, Value: "md", Usage: "table format: md, csv, json or tex"},
			&cli.StringFlag{Name: "out", Usage: "write per-example scores as JSONL to this file"},
			&cli.StringFlag{Name: "extract", Value: "none", Usage: "answer extraction rule: none, auto (QuCo-RAG rule for the dataset), or one of " + strings.Join(metrics.AnswerRules(), ", ")},
			&cli.StringFlag{Name: "baseline", Usage: "a second predictions file to compare against (paired test)"},
			&cli.Float64Flag{Name: "max-drop", Value: 0.5, Usage: "with --baseline: allowed drop in EM or F1 points before a significant drop is a regression"},
			&cli.Float64Flag{Name: "alpha", Value: 0.05, Usage: "with --baseline: significance level of the paired test"},
			&cli.BoolFlag{Name: "fail-on-regression", Usage: "with --baseline: exit 1 when EM or F1 regressed (see --max-drop, --alpha)"},
			&cli.IntFlag{Name: "resamples", Value: 1000, Usage: "bootstrap resamples for the intervals (0 disables them)"},
			&cli.Float64Flag{Name: "level", Value: 0.95, Usage: "confidence level of the intervals"},
			&cli.Uint64Flag{Name: "ci-seed", Usage: "seed of the bootstrap and the randomization test"},
		),
		Action: scoreAction,
	})
}

func scoreAction(c *cli.Context) error {
	if c.NArg() > 0 {
		return usagef("score takes no arguments, got %q", c.Args().Slice())
	}
	if c.String("dataset") == "" || c.String("predictions") == "" {
		return usagef("score needs --dataset and --predictions")
	}
	if err := pathcheck.Distinct(c.String("out"), c.String("predictions"), c.String("baseline"), c.String("dataset")); err != nil {
		return usagef("--out: %v", err)
	}
	format := c.String("format")
	if !slices.Contains(reports.ScoreFormats, format) {
		return usagef("--format %q: want md, csv, json or tex", format)
	}
	if c.Int("limit") < 0 || c.Int("sample") < 0 || c.Int("resamples") < 0 {
		return usagef("--limit, --sample and --resamples must not be negative")
	}
	if err := cliutil.Fractions(c, "level", "alpha"); err != nil {
		return err
	}
	if c.Float64("max-drop") < 0 {
		return usagef("--max-drop must not be negative")
	}
	if c.String("baseline") == "" && (c.IsSet("max-drop") || c.IsSet("alpha") || c.Bool("fail-on-regression")) {
		return usagef("--max-drop, --alpha and --fail-on-regression need --baseline")
	}
	// Load everything, so that predictions for examples outside --limit/--sample are not "unknown".
	ds, examples, err := loadSelected(c)
	if err != nil {
		return err
	}

	ext, err := metrics.ResolveAnswerRule(c.String("extract"), ds.Name, metrics.ExtractNone)
	if err != nil {
		return usagef("--extract: %v", err)
	}
	opts := metrics.Options{Extractor: ext, Resamples: c.Int("resamples"), Level: c.Float64("level"), Seed: c.Uint64("ci-seed")}
	if opts.Resamples == 0 {
		opts.Resamples = -1
	}
	known := ds.Known()

	rep := &reports.Score{Dataset: ds.Name, Predictions: c.String("predictions")}
	fs, err := scoreFile(c, ds, rep.Predictions, examples, known, opts, &rep.Warnings)
	if err != nil {
		return err
	}
	rep.Summary = fs.Summary
	if b := c.String("baseline"); b != "" {
		bs, err := scoreFile(c, ds, b, examples, known, opts, &rep.Warnings)
		if err != nil {
			return err
		}
		rep.Baseline = &reports.Baseline{Predictions: b, Summary: bs.Summary}
		if rep.Baseline.EM, rep.Baseline.F1, err = metrics.ComparePaired(fs.Records, bs.Records, opts); err != nil {
			return fmt.Errorf("compare with %s: %w", b, err)
		}
	}
	if out := c.String("out"); out != "" {
		if err := metrics.WriteRecords(out, fs.Records); err != nil {
			return err
		}
	}
	if err := reports.WriteScore(c.App.Writer, format, rep); err != nil {
		return err
	}
	if rep.Baseline == nil {
		return nil
	}
	regs := metrics.Regressions(rep.Baseline.EM, rep.Baseline.F1, c.Float64("max-drop"), c.Float64("alpha"))
	if len(regs) == 0 {
		fmt.Fprintf(cliutil.InfoWriter(c), "no regression against %s (drop > %g points with p < %g)\n", rep.Baseline.Predictions, c.Float64("max-drop"), c.Float64("alpha"))
		return nil
	}
	msg := fmt.Sprintf("regression against %s: %s", rep.Baseline.Predictions, strings.Join(regs, "; "))
	if c.Bool("fail-on-regression") {
		return errors.New(msg)
	}
	fmt.Fprintf(c.App.ErrWriter, "warning: %s\n", msg)
	return nil
}

// scoreFile scores one predictions file (- for stdin), printing its notes and counted warnings.
func scoreFile(c *cli.Context, ds *datasets.Dataset, path string, examples []datasets.Example, known func(string) bool, opts metrics.Options, warnings *[]string) (*metrics.FileScore, error) {
	var r io.Reader = c.App.Reader
	name := "stdin"
	if path != "-" {
		f, err := os.Open(path)
		if err != nil {
			return nil, fmt.Errorf("score: %w", err)
		}
		defer f.Close()
		r, name = f, path
	}
	fs, err := metrics.ScorePredictions(r, name, examples, known, opts)
	var nm *metrics.NoMatchError
	if errors.As(err, &nm) {
		return nil, fmt.Errorf("%w; %s (is --dataset the dataset these predictions were made for?)", err, ds.IDScheme())
	}
	if err != nil {
		return nil, err
	}
	for _, n := range fs.Notes(name) {
		if !n.Warning {
			fmt.Fprintf(cliutil.InfoWriter(c), "note: %s\n", n.Text)
			continue
		}
		if n.Detail == "" {
			fmt.Fprintf(c.App.ErrWriter, "warning: %s\n", n.Text)
		} else {
			fmt.Fprintf(c.App.ErrWriter, "warning: %s; %s; %s\n", n.Text, n.Detail, ds.IDScheme())
		}
		*warnings = append(*warnings, n.Text)
	}
	return fs, nil
}
