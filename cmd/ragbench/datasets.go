package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/ragbench/ragbench/internal/pathcheck"

	"github.com/urfave/cli/v2"

	"github.com/ragbench/ragbench/datasets"

	"github.com/ragbench/ragbench/internal/cliutil"
)

func init() {
	register(&cli.Command{
		Name:  "datasets",
		Usage: "list, inspect, import and fetch QA datasets",
		Description: "A dataset SPEC is a parquet file, a directory of SPLIT-0000K-of-0000N.parquet shards, a dataset name\n" +
			"(" + strings.Join(datasets.Names(), ", ") + "; hotpotqa = hotpotqa-distractor), or a custom dataset\n" +
			"spec file (.yaml/.json with path and columns). Names are looked up in $RAGBENCH_DATA, then the download\n" +
			"cache ($RAGBENCH_CACHE or ~/.cache/ragbench), then shared/data beside the checkout; NAME@data, NAME@cache or\n" +
			"NAME@shared picks one copy. 'datasets list' shows every copy found and which one a bare name loads.",
		Subcommands: []*cli.Command{
			{
				Name:   "list",
				Usage:  "list the known dataset names, every copy found (source, rows, path) and the one a bare name loads",
				Action: datasetsList,
			},
			{
				Name:      "inspect",
				Usage:     "print row count, columns and types, answer-length statistics and one example",
				ArgsUsage: "SPEC",
				Flags:     append(datasetFlags(), cliutil.FormatFlags("text", "json")...),
				Action:    datasetsInspect,
			},
			{
				Name:      "export",
				Usage:     "write the examples of a dataset as JSON lines (one Example per line)",
				ArgsUsage: "SPEC",
				Flags:     datasetFlags(),
				Action:    datasetsExport,
			},
			{
				Name:      "bench",
				Usage:     "time loading a dataset: p50/p99 latency and rows per second over -n loads",
				ArgsUsage: "SPEC",
				Flags:     append(datasetFlags(), &cli.IntFlag{Name: "n", Value: 20, Usage: "number of loads"}),
				Action:    datasetsBench,
			},
			{
				Name:      "import",
				Usage:     "convert an official release file into the Hugging Face parquet layout",
				ArgsUsage: "IN OUT.parquet",
				Flags: []cli.Flag{
					&cli.StringFlag{Name: "from", Usage: "input `FORMAT` (required): " + strings.Join(datasets.ImportFormats, ", ")},
					cliutil.OldFlag("format", "from"),
					&cli.StringFlag{Name: "aliases", Usage: "2wiki: id_aliases.json (JSON lines) to fill answer_aliases"},
				},
				Action: datasetsImport,
			},
			{
				Name:      "fetch",
				Usage:     "download a dataset's parquet files from the Hugging Face Hub into the cache",
				ArgsUsage: "NAME",
				Description: "Honours HF_ENDPOINT (default https://huggingface.co) and HF_TOKEN (sent as a bearer token, never printed).\n" +
					"Files go to $RAGBENCH_CACHE/data/<dataset dir> (default ~/.cache/ragbench); a broken download resumes.\n" +
					"With --repo, --dir and --split any Hub dataset in a known layout can be fetched into --out.",
				Flags: []cli.Flag{
					&cli.StringFlag{Name: "repo", Usage: "Hub dataset repository (owner/name), overriding the built-in one"},
					&cli.StringFlag{Name: "dir", Usage: "folder of the shards in the repository"},
					&cli.StringFlag{Name: "split", Usage: "shard prefix (e.g. validation)"},
					&cli.StringFlag{Name: "revision", Usage: "branch, tag or commit", Value: "main"},
					&cli.StringFlag{Name: "out", Usage: "destination directory (default: the cache directory of NAME)"},
				},
				Action: datasetsFetch,
			},
		},
	})
}

func datasetsList(c *cli.Context) error {
	if err := datasets.WriteList(c.App.Writer); err != nil {
		return err
	}
	fmt.Fprintln(cliutil.InfoWriter(c), "* = the copy a bare name loads; NAME@SOURCE (e.g. hotpotqa@shared) picks another")
	return nil
}

func datasetsInspect(c *cli.Context) error {
	spec, err := cliutil.OneArg(c, "SPEC")
	if err != nil {
		return err
	}
	format, err := cliutil.OutputFormat(c, "text", "json")
	if err != nil {
		return err
	}
	opts, err := datasetOptions(c)
	if err != nil {
		return err
	}
	r, err := datasets.Inspect(c.Context, spec, opts)
	if err != nil {
		return err
	}
	announce(c, &datasets.Dataset{Name: r.Name, Files: r.Files, Total: r.Total}, r.Rows)
	if format == "json" { // the warnings are in the JSON
		return cliutil.WriteJSON(c.App.Writer, r)
	}
	if err := r.WriteText(c.App.Writer); err != nil {
		return err
	}
	datasets.WriteWarnings(c.App.ErrWriter, r.Warnings)
	return nil
}

func datasetsExport(c *cli.Context) error {
	spec, err := cliutil.OneArg(c, "SPEC")
	if err != nil {
		return err
	}
	ds, err := loadDataset(c, spec)
	if err != nil {
		return err
	}
	enc := json.NewEncoder(c.App.Writer)
	enc.SetEscapeHTML(false)
	for i := range ds.Examples {
		if err := enc.Encode(&ds.Examples[i]); err != nil {
			return err
		}
	}
	return nil
}

func datasetsBench(c *cli.Context) error {
	spec, err := cliutil.OneArg(c, "SPEC")
	if err != nil {
		return err
	}
	opts, err := datasetOptions(c)
	if err != nil {
		return err
	}
	n := c.Int("n")
	if n < 1 {
		return usagef("bench: -n must be at least 1")
	}
	lt, err := datasets.TimeLoads(c.Context, spec, opts, n, func(lt datasets.LoadTimes) {
		fmt.Fprintf(cliutil.InfoWriter(c), "bench %s: %d rows, %d loads\n", lt.Name, lt.Rows, n)
	})
	if err != nil {
		return err
	}
	fmt.Fprintln(c.App.Writer, lt.Summary())
	return nil
}

func datasetsImport(c *cli.Context) error {
	if c.NArg() != 2 {
		return usagef("import: want IN and OUT.parquet, got %d arguments", c.NArg())
	}
	in, out := c.Args().Get(0), c.Args().Get(1)
	if err := pathcheck.Distinct(out, in, c.String("aliases")); err != nil {
		return usagef("import: %v", err)
	}
	format, err := cliutil.Renamed(c, "from", "format")
	if err != nil {
		return err
	}
	if format == "" {
		return usagef("import needs --from FORMAT (one of %s)", strings.Join(datasets.ImportFormats, ", "))
	}
	if !slices.Contains(datasets.ImportFormats, format) {
		return usagef("import: unknown --from %q (known: %s)", format, strings.Join(datasets.ImportFormats, ", "))
	}
	if _, err := os.Stat(in); err != nil {
		return fmt.Errorf("import: %w", err) // before creating the output's folder
	}
	if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
		return fmt.Errorf("import: %w", err)
	}
	n, err := datasets.ImportFile(c.Context, format, in, out, datasets.ImportOptions{Aliases: c.String("aliases")})
	if err != nil {
		return err
	}
	fmt.Fprintf(cliutil.InfoWriter(c), "imported %d rows from %s into %s\n", n, in, out)
	return nil
}

func datasetsFetch(c *cli.Context) error {
	name, err := cliutil.OneArg(c, "NAME")
	if err != nil {
		return err
	}
	override := datasets.HubSource{Repo: c.String("repo"), Dir: c.String("dir"), Split: c.String("split"), Revision: c.String("revision")}
	dest, res, err := datasets.FetchAs(c.Context, datasets.NewFetcher(cliutil.InfoWriter(c)), name, override, c.String("out"))
	if errors.Is(err, datasets.ErrFetchTarget) {
		return usagef("%v (flags --repo, --dir, --split, --out)", err)
	}
	if err != nil {
		return err
	}
	datasets.WriteFetchResults(c.App.Writer, res)
	fmt.Fprintf(cliutil.InfoWriter(c), "%s: %d file(s) in %s\n", name, len(res), dest)
	return nil
}
