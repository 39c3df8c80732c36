package main

import (
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/ragbench/ragbench/harness/retrieval/dense"
)

func init() {
	register(&cli.Command{
		Name:  "dense",
		Usage: "exact dense retrieval tools (index build and search live under 'ragbench index')",
		Subcommands: []*cli.Command{
			{
				Name:  "bench",
				Usage: "time batched exact search against numpy (OpenBLAS) and a naive loop on random unit vectors",
				Flags: []cli.Flag{
					&cli.IntFlag{Name: "n", Value: 200000, Usage: "indexed vectors"},
					&cli.IntFlag{Name: "dim", Value: 768, Usage: "dimension"},
					&cli.IntFlag{Name: "queries", Value: 512, Usage: "queries through the Sgemm path"},
					&cli.IntFlag{Name: "batch", Value: 256, Usage: "queries per Sgemm batch"},
					&cli.IntFlag{Name: "k", Value: 10, Usage: "top k"},
					&cli.IntFlag{Name: "naive", Value: 16, Usage: "queries through the naive loop (the peer)"},
					&cli.IntFlag{Name: "rounds", Value: 3, Usage: "rounds, each timing ours and then numpy on the same queries; medians are reported"},
					&cli.StringFlag{Name: "numpy", Value: "/usr/bin/python3", Usage: "Python interpreter with numpy for the peer (Debian: python3-numpy); empty: no numpy peer"},
					&cli.StringFlag{Name: "dir", Usage: "build the index here (default: a temporary directory, removed afterwards)"},
				},
				Action: func(c *cli.Context) error {
					for _, name := range []string{"n", "dim", "queries", "batch", "k", "naive", "rounds"} {
						if c.Int(name) <= 0 {
							return usagef("dense bench: --%s must be positive", name)
						}
					}
					r, err := dense.Bench(c.Context, dense.BenchConfig{N: c.Int("n"), Dim: c.Int("dim"), Queries: c.Int("queries"),
						Batch: c.Int("batch"), K: c.Int("k"), Naive: c.Int("naive"), Rounds: c.Int("rounds"), Python: c.String("numpy"), Dir: c.String("dir")}, c.App.ErrWriter)
					if err != nil {
						return err
					}
					fmt.Fprint(c.App.Writer, r.String())
					if !r.Agree {
						return fmt.Errorf("dense bench: the Sgemm and naive results disagree")
					}
					return nil
				},
			},
		},
	})
}
