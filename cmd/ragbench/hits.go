package main

import (
	"github.com/urfave/cli/v2"

	"github.com/ragbench/ragbench/internal/cliutil"

	"github.com/ragbench/ragbench/harness/retrieval/trec"
)

// searchFlags are the query and output flags of the commands that search (search, elastic search).
func searchFlags(tag string) []cli.Flag {
	return append(cliutil.FormatFlags(trec.HitFormats...),
		&cli.StringFlag{Name: "query", Aliases: []string{"q"}, Usage: "one query (qid 1)"},
		&cli.StringFlag{Name: "queries", Usage: "queries file: TSV (qid<TAB>query), JSONL ({id|qid|_id, query|question|text}) or one query per line (qid = its position)"},
		&cli.IntFlag{Name: "k", Value: 10, Usage: "hits per query"},
		&cli.StringFlag{Name: "tag", Value: tag, Usage: "run tag (last TREC column)"},
		&cli.StringFlag{Name: "show", Hidden: true, Usage: "text: --format text"},
	)
}

// queriesOf reads --query or --queries and checks --k.
func queriesOf(c *cli.Context) ([]trec.Query, error) {
	if c.Int("k") <= 0 {
		return nil, usagef("--k must be positive")
	}
	switch {
	case c.IsSet("query") && c.IsSet("queries"):
		return nil, usagef("give --query or --queries, not both")
	case c.IsSet("query"):
		return []trec.Query{{ID: "1", Text: c.String("query")}}, nil
	case c.IsSet("queries"):
		return trec.ReadQueryFile(c.String("queries"))
	}
	return nil, usagef("give --query TEXT or --queries FILE")
}

// newHitWriter returns the writer of hits in the --format of searchFlags.
func newHitWriter(c *cli.Context) (*trec.HitWriter, error) {
	if show := c.String("show"); show != "" {
		if show != "text" && show != "ids" {
			return nil, usagef("--show %q: want text (or ids)", show)
		}
		if show == "text" {
			c.Set("format", "text")
		}
	}
	format, err := cliutil.OutputFormat(c, trec.HitFormats...)
	if err != nil {
		return nil, err
	}
	return trec.NewHitWriter(c.App.Writer, format, c.String("tag")), nil
}
