package main

import (
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/ragbench/ragbench/harness/runner"
)

func init() {
	register(&cli.Command{
		Name:      "merge",
		Usage:     "join the shard directories of one run (ragbench run --shard K/N) into one run directory",
		ArgsUsage: "SHARD_DIR...",
		Description: `Checks that the shards are the N shards of one config (same config hash and dataset checksums,
each shard once, each complete), writes the records in dataset order (byte-identical to the
unsharded run's), the timings, config.yaml and summary.{md,json} into --out, and prints the table.`,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "out", Aliases: []string{"o"}, Usage: "merged run directory (required)"},
		},
		Action: func(c *cli.Context) error {
			if c.String("out") == "" {
				return usagef("merge: --out DIR is required")
			}
			if c.NArg() == 0 {
				return usagef("merge: give the shard directories")
			}
			rows, err := runner.Merge(c.String("out"), c.Args().Slice())
			if err != nil {
				return err
			}
			if err := runner.WriteTable(c.App.Writer, rows); err != nil {
				return err
			}
			fmt.Fprintf(c.App.ErrWriter, "merged %d shards into %s\n", c.NArg(), c.String("out"))
			return nil
		},
	})
}
