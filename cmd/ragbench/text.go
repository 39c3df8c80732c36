package main

import (
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/ragbench/ragbench/datasets"
	"github.com/ragbench/ragbench/harness/text"
)

func init() {
	register(&cli.Command{
		Name:  "text",
		Usage: "text utilities: normalisation, sentence splitting",
		Subcommands: []*cli.Command{
			{
				Name:  "split-eval",
				Usage: "measure the sentence splitter against the published sentence splits of dataset contexts",
				Description: `Joins each context paragraph's published sentences (HotpotQA's carry their own leading
spaces and are joined as they are; 2WikiMultihopQA's are joined with one space), splits the paragraph
again with harness/text, and prints the share of paragraphs split exactly as published.`,
				Flags: []cli.Flag{
					&cli.StringSliceFlag{Name: "dataset", Aliases: []string{"d"}, Value: cli.NewStringSlice("hotpotqa-distractor", "hotpotqa-fullwiki", "2wikimultihopqa"), Usage: "datasets whose contexts to use"},
					&cli.IntFlag{Name: "show", Usage: "print up to N paragraphs that split differently to stderr"},
				},
				Action: splitEvalAction,
			},
			{
				Name:      "normalize",
				Usage:     "print the SQuAD normalisation of each argument (one per line)",
				ArgsUsage: "TEXT...",
				Action: func(c *cli.Context) error {
					for _, a := range c.Args().Slice() {
						fmt.Fprintln(c.App.Writer, text.NormalizeAnswer(a))
					}
					return nil
				},
			},
		},
	})
}

func splitEvalAction(c *cli.Context) error {
	if c.NArg() > 0 {
		return usagef("split-eval takes no arguments, got %q", c.Args().Slice())
	}
	w := c.App.Writer
	var total text.Agreement
	shown := 0
	fmt.Fprintln(w, "| dataset | paragraphs | split exactly | share |")
	fmt.Fprintln(w, "|---|---:|---:|---:|")
	for _, spec := range c.StringSlice("dataset") {
		ds, err := datasets.Load(c.Context, spec, datasets.LoadOptions{})
		if err != nil {
			return err
		}
		announce(c, ds, len(ds.Examples))
		a := datasets.SplitAgreement(ds, func(m datasets.SplitMismatch) {
			if shown < c.Int("show") {
				shown++
				fmt.Fprintf(c.App.ErrWriter, "--- %s %s / %q\n published: %q\n split:     %q\n", ds.Name, m.Example, m.Title, m.Published, m.Split)
			}
		})
		total.Paragraphs += a.Paragraphs
		total.Exact += a.Exact
		if a.Paragraphs == 0 {
			return fmt.Errorf("split-eval: dataset %s has no context sentences", ds.Name)
		}
		fmt.Fprintf(w, "| %s | %d | %d | %.2f%% |\n", ds.Name, a.Paragraphs, a.Exact, 100*a.Rate())
	}
	fmt.Fprintf(w, "| all | %d | %d | %.2f%% |\n", total.Paragraphs, total.Exact, 100*total.Rate())
	return nil
}
