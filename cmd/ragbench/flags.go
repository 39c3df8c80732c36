package main

import (
	"github.com/urfave/cli/v2"

	"github.com/ragbench/ragbench/internal/cliutil"

	"github.com/ragbench/ragbench/datasets"
)

// datasetFlag is the --dataset flag of the commands that load one.
func datasetFlag() cli.Flag {
	return &cli.StringFlag{Name: "dataset", Aliases: []string{"d"}, Usage: "dataset `SPEC`: a name (NAME@data|cache|shared picks a copy), a parquet or JSONL file or directory, or a custom spec"}
}

// datasetFlags select a subset of a dataset and, for a custom dataset, its columns: every command that
// loads a dataset takes them (docs/datasets.md).
func datasetFlags() []cli.Flag {
	return []cli.Flag{
		&cli.IntFlag{Name: "limit", Usage: "keep the first `N` examples in file order (0 = all)"},
		&cli.IntFlag{Name: "sample", Usage: "keep `N` examples sampled deterministically with --seed (a smaller N is a subset of a larger one)"},
		&cli.Int64Flag{Name: "seed", Usage: "seed of --sample", Value: 0},
		&cli.StringFlag{Name: "split", Usage: "split of a directory holding several (e.g. validation)"},
		&cli.StringFlag{Name: "question-col", Usage: "custom dataset: the question `COLUMN`"},
		&cli.StringFlag{Name: "answers-col", Usage: "custom dataset: the gold answer(s) `COLUMN` (text or list of text; a path like answers_objects[].spans reaches nested fields)"},
		&cli.StringFlag{Name: "id-col", Usage: "custom dataset: the id `COLUMN` (default id/_id, else the row index)"},
	}
}

// withDataset returns flags with --dataset and the datasetFlags added.
func withDataset(flags ...cli.Flag) []cli.Flag {
	return append(append([]cli.Flag{datasetFlag()}, datasetFlags()...), flags...)
}

// datasetOptions reads the flags of datasetFlags.
func datasetOptions(c *cli.Context) (datasets.LoadOptions, error) {
	o := datasets.LoadOptions{Limit: c.Int("limit"), Sample: c.Int("sample"), Seed: c.Int64("seed"), Split: c.String("split")}
	if o.Limit < 0 || o.Sample < 0 {
		return o, usagef("--limit and --sample must not be negative")
	}
	q, a, id := c.String("question-col"), c.String("answers-col"), c.String("id-col")
	if q != "" || a != "" || id != "" {
		if q == "" || a == "" {
			return o, usagef("a custom column mapping needs both --question-col and --answers-col")
		}
		o.Columns = &datasets.Mapping{Question: q, Answers: a, ID: id}
	}
	return o, nil
}

// loadDataset loads spec with the datasetFlags and says on stderr which file(s) it read and how many
// rows, with the first load warnings.
func loadDataset(c *cli.Context, spec string) (*datasets.Dataset, error) {
	opts, err := datasetOptions(c)
	if err != nil {
		return nil, err
	}
	ds, err := datasets.Load(c.Context, spec, opts)
	if err != nil {
		return nil, err
	}
	announce(c, ds, len(ds.Examples))
	return ds, nil
}

// loadSelected loads the whole dataset of --dataset (so that ids outside the selection are known) and
// returns it with the examples that --limit or --sample/--seed select.
func loadSelected(c *cli.Context) (*datasets.Dataset, []datasets.Example, error) {
	opts, err := datasetOptions(c)
	if err != nil {
		return nil, nil, err
	}
	ds, examples, err := datasets.LoadSelected(c.Context, c.String("dataset"), opts)
	if err != nil {
		return nil, nil, err
	}
	announce(c, ds, len(examples))
	return ds, examples, nil
}

// announce prints which files a dataset came from, its row count and the selection, and its first
// load warnings, on stderr (nothing with --quiet).
func announce(c *cli.Context, ds *datasets.Dataset, selected int) {
	ds.WriteSummary(cliutil.InfoWriter(c), selected)
	datasets.WriteWarnings(c.App.ErrWriter, ds.Warnings)
}
