package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"github.com/ragbench/ragbench/internal/pathcheck"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/ragbench/ragbench/datasets"
	"github.com/ragbench/ragbench/internal/atomicfile"
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

With --baseline, a second predictions file is scored the same way and compared with a paired
approximate randomization test (EM and F1).`,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "dataset", Aliases: []string{"d"}, Usage: "dataset name, parquet file/directory, or custom spec (required)"},
			&cli.StringFlag{Name: "predictions", Aliases: []string{"p"}, Usage: "predictions file (JSONL or HotpotQA JSON; - for stdin) (required)"},
			&cli.StringFlag{Name: "format", Aliases: []string{"f"}, Value: "md", Usage: "table format: md, csv, json or tex"},
			&cli.StringFlag{Name: "out", Usage: "write per-example scores as JSONL to this file"},
			&cli.StringFlag{Name: "extract", Value: "none", Usage: "answer extraction rule: none, auto (QuCo-RAG rule for the dataset), or one of " + strings.Join(metrics.AnswerRules(), ", ")},
			&cli.StringFlag{Name: "baseline", Usage: "a second predictions file to compare against (paired test)"},
			&cli.IntFlag{Name: "limit", Usage: "score only the first N examples in file order"},
			&cli.IntFlag{Name: "sample", Usage: "score a deterministic sample of N examples (see --seed)"},
			&cli.Int64Flag{Name: "seed", Usage: "seed of --sample"},
			&cli.IntFlag{Name: "resamples", Value: 1000, Usage: "bootstrap resamples for the intervals (0 disables them)"},
			&cli.Float64Flag{Name: "level", Value: 0.95, Usage: "confidence level of the intervals"},
			&cli.Uint64Flag{Name: "ci-seed", Usage: "seed of the bootstrap and the randomization test"},
		},
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
	if l := c.Float64("level"); l <= 0 || l >= 1 {
		return usagef("--level %v: want a number between 0 and 1", l)
	}
	// Load everything, so that predictions for examples outside --limit/--sample are not "unknown".
	ds, examples, err := loadSelected(c)
	if err != nil {
		return err
	}

	ext := metrics.AnswerRule(c.String("extract"))
	if ext == "auto" {
		ext = metrics.DefaultAnswerRule(ds.Name)
	} else if ext, err = metrics.ParseAnswerRule(string(ext)); err != nil {
		return usagef("--extract: %v", err)
	}
	opts := metrics.Options{Extractor: ext, Resamples: c.Int("resamples"), Level: c.Float64("level"), Seed: c.Uint64("ci-seed")}
	if opts.Resamples == 0 {
		opts.Resamples = -1
	}
	all := make(map[string]bool, len(ds.Examples))
	for _, ex := range ds.Examples {
		all[ex.ID] = true
	}

	rep := &reports.Score{Dataset: ds.Name, Predictions: c.String("predictions")}
	fs, err := scoreFile(c, rep.Predictions, examples, all, opts, &rep.Warnings)
	if err != nil {
		return err
	}
	rep.Summary = fs.Summary
	if b := c.String("baseline"); b != "" {
		bs, err := scoreFile(c, b, examples, all, opts, &rep.Warnings)
		if err != nil {
			return err
		}
		rep.Baseline = &reports.Baseline{Predictions: b, Summary: bs.Summary}
		if rep.Baseline.EM, rep.Baseline.F1, err = metrics.ComparePaired(fs.Records, bs.Records, opts); err != nil {
			return fmt.Errorf("compare with %s: %w", b, err)
		}
	}
	if out := c.String("out"); out != "" {
		if err := writeRecords(out, fs.Records); err != nil {
			return err
		}
	}
	return reports.WriteScore(c.App.Writer, format, rep)
}

// loadSelected loads the whole dataset of --dataset, reports its first warnings on stderr, and
// returns it with the examples selected by --limit or --sample/--seed.
func loadSelected(c *cli.Context) (*datasets.Dataset, []datasets.Example, error) {
	ds, err := datasets.Load(c.Context, c.String("dataset"), datasets.LoadOptions{})
	if err != nil {
		return nil, nil, err
	}
	for i, w := range ds.Warnings {
		if i == 5 {
			fmt.Fprintf(c.App.ErrWriter, "warning: %s: %d more dataset warnings not shown\n", ds.Name, len(ds.Warnings)-5)
			break
		}
		fmt.Fprintf(c.App.ErrWriter, "warning: %s\n", w)
	}
	return ds, datasets.Subset(ds.Examples, c.Int("limit"), c.Int("sample"), c.Int64("seed")), nil
}

// scoreFile scores one predictions file (- for stdin), printing its notes and counted warnings.
func scoreFile(c *cli.Context, path string, examples []datasets.Example, all map[string]bool, opts metrics.Options, warnings *[]string) (*metrics.FileScore, error) {
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
	fs, err := metrics.ScorePredictions(r, name, examples, func(id string) bool { return all[id] }, opts)
	if err != nil {
		return nil, err
	}
	errw := c.App.ErrWriter
	if fs.Errored > 0 {
		fmt.Fprintf(errw, "note: %s: %d record(s) carry an error and are not predictions (their examples count as missing unless retried)\n", name, fs.Errored)
	}
	if n := len(fs.Stray); n > 0 {
		shown := make([]string, min(n, 5))
		for i := range shown {
			shown[i] = strconv.Quote(fs.Stray[i])
		}
		msg := fmt.Sprintf("%s: %d prediction(s) for ids not in the dataset were not scored (first: %s)", name, n, strings.Join(shown, ", "))
		fmt.Fprintf(errw, "warning: %s\n", msg)
		*warnings = append(*warnings, msg)
	}
	if fs.Outside > 0 {
		fmt.Fprintf(errw, "note: %s: %d prediction(s) for examples outside --limit/--sample were ignored\n", name, fs.Outside)
	}
	if fs.Summary.Missing > 0 {
		fmt.Fprintf(errw, "note: %s: %d of %d examples have no prediction and score 0\n", name, fs.Summary.Missing, fs.Summary.N)
	}
	return fs, nil
}

// writeRecords writes the per-example scores as JSONL, atomically.
func writeRecords(path string, recs []metrics.Record) error {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	for _, r := range recs {
		if err := enc.Encode(r); err != nil {
			return fmt.Errorf("write %s: %w", path, err)
		}
	}
	if err := atomicfile.WriteFile(path, b.Bytes(), 0o644); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}
