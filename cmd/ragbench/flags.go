package main

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/ragbench/ragbench/datasets"
	"github.com/ragbench/ragbench/internal/progress"
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
	whole := opts
	whole.Limit, whole.Sample = 0, 0
	ds, err := datasets.Load(c.Context, c.String("dataset"), whole)
	if err != nil {
		return nil, nil, err
	}
	examples := datasets.Subset(ds.Examples, opts.Limit, opts.Sample, opts.Seed)
	announce(c, ds, len(examples))
	return ds, examples, nil
}

// announce prints which files a dataset came from, its row count and the selection, and its first
// load warnings, on stderr (nothing with --quiet).
func announce(c *cli.Context, ds *datasets.Dataset, selected int) {
	w := infoWriter(c)
	files := "(no files)"
	if len(ds.Files) > 0 {
		files = ds.Files[0]
		if len(ds.Files) > 1 {
			files = fmt.Sprintf("%s and %d more file(s)", files, len(ds.Files)-1)
		}
	}
	sel := ""
	if selected != ds.Total {
		sel = fmt.Sprintf(", %d selected", selected)
	}
	fmt.Fprintf(w, "dataset %s: %d rows from %s%s\n", ds.Name, ds.Total, files, sel)
	printWarnings(c.App.ErrWriter, ds.Warnings)
}

// printWarnings writes a count of the load warnings and the first few to w.
func printWarnings(w io.Writer, ws []datasets.Warning) {
	if len(ws) == 0 {
		return
	}
	fmt.Fprintf(w, "%d warnings:\n", len(ws))
	for i, x := range ws {
		if i == 10 {
			fmt.Fprintf(w, "  ... and %d more\n", len(ws)-10)
			break
		}
		fmt.Fprintf(w, "  %s\n", x)
	}
}

// oneArg returns the single positional argument of c, named what in errors.
func oneArg(c *cli.Context, what string) (string, error) {
	if c.NArg() != 1 {
		for _, a := range c.Args().Slice()[min(1, c.NArg()):] {
			if strings.HasPrefix(a, "-") {
				return "", usagef("%s: flags go before %s (got %q after it)", c.Command.Name, what, a)
			}
		}
		return "", usagef("%s: want one argument %s, got %d", c.Command.Name, what, c.NArg())
	}
	return c.Args().First(), nil
}

// infoWriter is where progress and summary notes go: stderr, or nowhere with --quiet.
func infoWriter(c *cli.Context) io.Writer {
	if c.Bool("quiet") {
		return io.Discard
	}
	return c.App.ErrWriter
}

// verboseWriter is where internal detail (spill and merge lines, per-phase timings) goes: stderr with
// --verbose, else nowhere.
func verboseWriter(c *cli.Context) io.Writer {
	if c.Bool("verbose") && !c.Bool("quiet") {
		return c.App.ErrWriter
	}
	return io.Discard
}

// formatFlags are --format, the output format (one of values; the first is the default), and the
// hidden --json kept for scripts (= --format json).
func formatFlags(values ...string) []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "format", Aliases: []string{"f"}, Value: values[0], Usage: "output format: " + strings.Join(values, ", ")},
		&cli.BoolFlag{Name: "json", Hidden: true, Usage: "deprecated: --format json"},
	}
}

// outputFormat returns the --format of formatFlags, checked against values.
func outputFormat(c *cli.Context, values ...string) (string, error) {
	f := c.String("format")
	if c.Bool("json") {
		if c.IsSet("format") && f != "json" {
			return "", usagef("--json and --format %s disagree; give --format only", f)
		}
		f = "json"
	}
	if !slices.Contains(values, f) {
		return "", usagef("--format %q: want %s", f, strings.Join(values, ", "))
	}
	return f, nil
}

// oldFlag is a hidden string flag keeping a renamed flag's old name working.
func oldFlag(old, now string) cli.Flag {
	return &cli.StringFlag{Name: old, Hidden: true, Usage: "deprecated: --" + now}
}

// renamed returns the value of the string flag now, or of its old name old (see oldFlag), with a
// deprecation note on stderr; giving both is a usage error.
func renamed(c *cli.Context, now, old string) (string, error) {
	if !c.IsSet(old) {
		return c.String(now), nil
	}
	if c.IsSet(now) {
		return "", usagef("--%s is the old name of --%s; give --%s only", old, now, now)
	}
	fmt.Fprintf(infoWriter(c), "note: --%s is deprecated here; it is now --%s\n", old, now)
	return c.String(old), nil
}

// progressWriter is where a command's progress lines go: every line with --verbose; on a terminal
// (and not --quiet) one status line rewritten in place, with an ETA when the line counts "n/N";
// elsewhere (a log file) every line when the lines are user-level progress (logged), else nowhere
// (builder internals). done clears the status line; call it before printing the summary.
func progressWriter(c *cli.Context, logged bool) (w io.Writer, done func()) {
	switch {
	case c.Bool("quiet"):
		return io.Discard, func() {}
	case c.Bool("verbose"):
		return c.App.ErrWriter, func() {}
	case !isTerminal(c.App.ErrWriter) && logged:
		return c.App.ErrWriter, func() {}
	case !isTerminal(c.App.ErrWriter):
		return io.Discard, func() {}
	}
	s := progress.New(c.App.ErrWriter)
	return s, s.Clear
}
