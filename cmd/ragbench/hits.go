package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/ragbench/ragbench/harness/retrieval"
	"github.com/ragbench/ragbench/harness/retrieval/trec"
)

// searchFlags are the query and output flags of the commands that search (search, elastic search).
func searchFlags(tag string) []cli.Flag {
	return append(formatFlags("trec", "text", "json"),
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
		f, err := os.Open(c.String("queries"))
		if err != nil {
			return nil, err
		}
		defer f.Close()
		return trec.ReadQueries(f, c.String("queries"))
	}
	return nil, usagef("give --query TEXT or --queries FILE")
}

// hitWriter writes each query's hits in the --format of searchFlags: a TREC run, readable text with
// the passages, or JSON lines {qid, hits}.
type hitWriter struct {
	format string
	w      *bufio.Writer
	run    *trec.Writer
}

func newHitWriter(c *cli.Context) (*hitWriter, error) {
	if show := c.String("show"); show != "" {
		if show != "text" && show != "ids" {
			return nil, usagef("--show %q: want text (or ids)", show)
		}
		if show == "text" {
			c.Set("format", "text")
		}
	}
	format, err := outputFormat(c, "trec", "text", "json")
	if err != nil {
		return nil, err
	}
	return &hitWriter{format: format, w: bufio.NewWriter(c.App.Writer), run: trec.NewWriter(c.App.Writer, c.String("tag"))}, nil
}

func (h *hitWriter) write(q trec.Query, hits []retrieval.Hit) error {
	switch h.format {
	case "json":
		b, err := json.Marshal(map[string]any{"qid": q.ID, "hits": hits})
		if err != nil {
			return err
		}
		h.w.Write(b)
		return h.w.WriteByte('\n')
	case "text":
		return writeHitText(h.w, q, hits)
	}
	return h.run.Write(q.ID, hits)
}

// flush writes out what is buffered (also after an error, so that the lines written stay).
func (h *hitWriter) flush() error {
	if err := h.w.Flush(); err != nil {
		return err
	}
	return h.run.Flush()
}

// writeHitText prints a query's hits readably: a header line, then per hit its rank, id, score and
// title, and the passage text indented.
func writeHitText(w io.Writer, q trec.Query, hits []retrieval.Hit) error {
	if _, err := fmt.Fprintf(w, "# %s: %s\n", q.ID, q.Text); err != nil {
		return err
	}
	for _, h := range hits {
		title := ""
		if h.Title != "" {
			title = "  " + h.Title
		}
		if _, err := fmt.Fprintf(w, "%d. %s  %.4f%s\n   %s\n", h.Rank, h.ID, h.Score, title, strings.Join(strings.Fields(h.Text), " ")); err != nil {
			return err
		}
	}
	return nil
}
