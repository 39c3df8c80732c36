package main

import (
	"fmt"
	"os"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/ragbench/ragbench/internal/cliutil"

	"github.com/ragbench/ragbench/harness/runner"
)

func init() {
	register(&cli.Command{
		Name:      "run",
		Usage:     "run the methods of a YAML config over its datasets; print the summary table",
		ArgsUsage: "CONFIG.yaml",
		Description: `Plans the config (datasets × method cells; a setting given as a list is swept), builds the indexes
it needs into the index cache (once), answers every question with every cell, and writes the run
directory: config.yaml (the resolved config with version, git commit, config hash and checksums),
DATASET/CELL.jsonl (one record per question), DATASET/CELL.timings.jsonl and summary.{md,json}.
Rerunning the same command (or --resume) answers only what is missing, failed questions included;
Ctrl-C or a kill leaves a consistent directory. See docs/runner.md.`,
		Flags: []cli.Flag{
			&cli.IntFlag{Name: "limit", Usage: "only the first N questions of every dataset"},
			&cli.StringFlag{Name: "out", Aliases: []string{"o"}, Usage: "run directory (default: the config's out, else runs/NAME)"},
			&cli.StringSliceFlag{Name: "set", Usage: "override a config key: KEY=VALUE, VALUE in YAML (repeatable; e.g. llm.model=X, methods.quco.settings.tau_cooc=[1,5])"},
			&cli.BoolFlag{Name: "resume", Usage: "continue the run in the run directory (it must exist); a plain rerun does the same"},
			&cli.BoolFlag{Name: "dry-run", Usage: "print the plan (cells, questions, expected LLM calls and tokens, indexes to build, cost) and exit"},
			&cli.StringFlag{Name: "format", Value: "text", Usage: "with --dry-run: text, or json ({\"cells\": [...]}: per cell and dataset the resolved settings, generator, retrieval, n-gram source, recipe and paper rows)"},
			&cli.BoolFlag{Name: "offline", Usage: "run with no server: the offline reader, BM25 and n-gram indexes built over each dataset's local corpus, rule extraction (the run is named NAME-offline)"},
			&cli.IntFlag{Name: "pilot", Usage: "with --dry-run: answer the first N questions of every dataset with every cell (the config's generator and components; nothing written) to estimate calls and tokens"},
			&cli.StringFlag{Name: "shard", Usage: "run shard K/N (0-based) of every cell; default from SLURM_ARRAY_TASK_ID/COUNT or JOB_COMPLETION_INDEX"},
			&cli.IntFlag{Name: "shards", Usage: "the shard count, with JOB_COMPLETION_INDEX (a Kubernetes indexed Job)"},
			&cli.DurationFlag{Name: "progress-every", Value: 30 * time.Second, Usage: "interval of progress summaries when stderr is not a terminal"},
		},
		Action: runAction,
	})
}

func runAction(c *cli.Context) error {
	c, err := cliutil.Interspersed(c)
	if err != nil {
		return usagef("run: %v", err)
	}
	if c.NArg() != 1 {
		return usagef("run: want one CONFIG.yaml, got %d arguments", c.NArg())
	}
	if c.Int("limit") < 0 {
		return usagef("run: --limit %d: want a number of questions (0 or no --limit: all)", c.Int("limit"))
	}
	if c.Int("shards") < 0 {
		return usagef("run: --shards %d: want a shard count", c.Int("shards"))
	}
	cfg, err := runner.LoadLimited(c.Args().First(), c.StringSlice("set"), c.Int("limit"))
	if err != nil {
		return err
	}
	if c.Bool("offline") {
		if cfg, err = runner.Offline(cfg); err != nil {
			return fmt.Errorf("--offline: %w", err)
		}
	}
	format := c.String("format")
	if format != "text" && format != "json" {
		return usagef("run: --format %q: want text or json", format)
	}
	if format == "json" && !c.Bool("dry-run") {
		return usagef("run: --format json goes with --dry-run")
	}
	k, n, err := runner.ParseShard(c.String("shard"), c.Int("shards"), os.Getenv)
	if err != nil {
		return usagef("%v", err)
	}
	stderr := c.App.ErrWriter
	o := runner.Options{
		Out: c.String("out"), Shard: k, Shards: n,
		Progress: stderr, TTY: cliutil.IsTerminal(stderr), ProgressEvery: c.Duration("progress-every"),
		Pilot: c.Int("pilot"), Format: format,
		Version: version, GitCommit: cliutil.GitCommit(),
	}
	if c.Bool("dry-run") {
		return runner.DryRun(c.Context, cfg, o, c.App.Writer)
	}
	dir := runner.RunDir(cfg, o)
	if c.Bool("resume") {
		if _, err := os.Stat(dir + "/config.yaml"); err != nil {
			return fmt.Errorf("--resume: %s holds no run (%v)", dir, err)
		}
	}
	fmt.Fprintf(stderr, "run %s: %s\n", cfg.Name, dir)
	res, err := runner.Execute(c.Context, cfg, o)
	if res != nil {
		fmt.Fprintf(stderr, "answered %d, already recorded %d, failed %d\n", res.Done, res.Skipped, res.Errors)
	}
	if err != nil {
		return err
	}
	if err := runner.WriteTable(c.App.Writer, res.Rows); err != nil {
		return err
	}
	fmt.Fprintf(stderr, "records, timings and summary.{md,json} in %s\n", dir)
	if res.Errors > 0 {
		return fmt.Errorf("%d questions failed (their records hold the error; the first: %s); rerun to retry them", res.Errors, res.FirstError)
	}
	return nil
}
