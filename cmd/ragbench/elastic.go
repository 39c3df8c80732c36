package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/ragbench/ragbench/harness/retrieval"
	"github.com/ragbench/ragbench/harness/retrieval/elastic"
	"github.com/ragbench/ragbench/internal/retry"
	"github.com/urfave/cli/v2"
)

// elasticFlags are shared by the elastic subcommands. Credentials are read from the environment only
// (ELASTIC_API_KEY, or ELASTIC_USERNAME and ELASTIC_PASSWORD).
func elasticFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "url", Value: elastic.DefaultURL, EnvVars: []string{"ELASTIC_URL"}, Usage: "cluster URL"},
		&cli.StringFlag{Name: "index", Value: elastic.DefaultIndex, Usage: "index name"},
		&cli.DurationFlag{Name: "timeout", Value: 30 * time.Second, Usage: "per-request timeout"},
		&cli.IntFlag{Name: "retries", Value: 3, Usage: "retries of a failed request (0: none; a DNS failure or a refused local port is never retried)"},
		maxRetryWaitFlag(),
	}
}

// maxRetryWaitFlag caps the total wait between retries of one request; each retry is printed on stderr.
func maxRetryWaitFlag() cli.Flag {
	return &cli.DurationFlag{Name: "max-retry-wait", Value: 30 * time.Second, Usage: "the longest total wait between retries of one request (each retry is printed on stderr)"}
}

func elasticConfig(c *cli.Context) elastic.Config {
	retries := c.Int("retries")
	if retries == 0 {
		retries = -1 // the library reads 0 as its default
	}
	return elastic.Config{URL: c.String("url"), Index: c.String("index"), Timeout: c.Duration("timeout"),
		MaxRetries: retries, MaxQueryTokens: c.Int("max-query-tokens"), BulkDocs: c.Int("batch"),
		MaxWait: c.Duration("max-retry-wait"), OnRetry: retry.Printer(c.App.ErrWriter)}
}

func init() {
	register(&cli.Command{
		Name:  "elastic",
		Usage: "Elasticsearch/OpenSearch backend: the DRAGIN/QuCo BM25 query, and bulk indexing of a DPR TSV",
		Description: "Point it at a cluster with --url or $ELASTIC_URL; credentials come from $ELASTIC_API_KEY or\n" +
			"$ELASTIC_USERNAME/$ELASTIC_PASSWORD. See docs/dense.md (Elasticsearch section).",
		Subcommands: []*cli.Command{
			{
				Name:  "ping",
				Usage: "print the cluster's name, distribution and version",
				Flags: elasticFlags(),
				Action: func(c *cli.Context) error {
					cl, err := elastic.New(elasticConfig(c))
					if err != nil {
						return usagef("%v", err)
					}
					info, err := cl.Ping(c.Context)
					if err != nil {
						return err
					}
					fmt.Fprintf(c.App.Writer, "%s %s (cluster %s, node %s) at %s\n", info.Distribution, info.Version, info.ClusterName, info.Name, cl.Config().URL)
					return nil
				},
			},
			{
				Name:      "index",
				Usage:     "bulk-index a DPR TSV (id, text, title) as DRAGIN's prep_elastic.py does; resumable",
				ArgsUsage: " ",
				Flags: append(elasticFlags(),
					&cli.StringFlag{Name: "tsv", Usage: "DPR passages TSV (psgs_w100.tsv layout; required)"},
					&cli.BoolFlag{Name: "create", Usage: "create the index with the DRAGIN mapping (english analyzer) if missing"},
					&cli.IntFlag{Name: "batch", Value: 2000, Usage: "documents per bulk request"},
					&cli.StringFlag{Name: "checkpoint", Usage: "checkpoint file (default <tsv name>.<index>.checkpoint.json here)"},
					&cli.BoolFlag{Name: "restart", Usage: "ignore an existing checkpoint and start from the first line"},
					&cli.Int64Flag{Name: "max-docs", Usage: "stop after this many documents (0: all)"},
				),
				Action: func(c *cli.Context) error {
					if c.NArg() > 0 {
						return usagef("elastic index: unexpected arguments %v", c.Args().Slice())
					}
					if c.String("tsv") == "" {
						return usagef("elastic index: --tsv is required")
					}
					cfg := elasticConfig(c)
					if _, err := elastic.New(cfg); err != nil {
						return usagef("%v", err)
					}
					return elastic.IndexTSVWith(c.Context, cfg, c.String("tsv"), infoWriter(c), elastic.IndexOptions{
						Checkpoint: c.String("checkpoint"), Restart: c.Bool("restart"), Create: c.Bool("create"), MaxDocs: c.Int64("max-docs"),
					})
				},
			},
			{
				Name:  "search",
				Usage: "run the DRAGIN query; writes a TREC run (qid Q0 docid rank score tag) or JSON lines",
				Flags: append(append(elasticFlags(), formatFlags("trec", "json")...),
					&cli.StringFlag{Name: "query", Aliases: []string{"q"}, Usage: "one query"},
					&cli.StringFlag{Name: "queries", Usage: "file of queries, one a line: 'qid<TAB>query' or just the query (qid = line number)"},
					&cli.IntFlag{Name: "k", Value: 10, Usage: "hits per query"},
					&cli.IntFlag{Name: "max-query-tokens", Value: elastic.DefaultMaxQueryTokens, Usage: "left-truncate queries to this many tokens (negative: no truncation)"},
					&cli.IntFlag{Name: "batch", Value: 32, Usage: "queries per _msearch request"},
					&cli.StringFlag{Name: "tag", Value: "elastic", Usage: "run tag in the TREC output"},
				),
				Action: elasticSearch,
			},
		},
	})
}

func elasticSearch(c *cli.Context) error {
	format, err := outputFormat(c, "trec", "json")
	if err != nil {
		return err
	}
	if (c.String("query") == "") == (c.String("queries") == "") {
		return usagef("elastic search: give exactly one of --query and --queries")
	}
	if c.Int("k") <= 0 {
		return usagef("elastic search: --k must be positive")
	}
	cfg := elasticConfig(c)
	cfg.BulkDocs = 0
	cl, err := elastic.New(cfg)
	if err != nil {
		return usagef("%v", err)
	}
	var qids, qs []string
	if q := c.String("query"); q != "" {
		qids, qs = []string{"1"}, []string{q}
	} else {
		qids, qs, err = readQueries(c.String("queries"))
		if err != nil {
			return err
		}
	}
	w := bufio.NewWriter(c.App.Writer)
	defer w.Flush()
	batch := max(c.Int("batch"), 1)
	for start := 0; start < len(qs); start += batch {
		end := min(start+batch, len(qs))
		res, err := cl.SearchBatch(c.Context, qs[start:end], c.Int("k"))
		if err != nil {
			return err
		}
		for i, hits := range res {
			if err := writeHits(w, qids[start+i], hits, format == "json", c.String("tag")); err != nil {
				return err
			}
		}
		if len(qs) > batch {
			fmt.Fprintf(infoWriter(c), "elastic search: %d/%d queries\n", end, len(qs))
		}
	}
	return nil
}

// readQueries reads "qid<TAB>query" or "query" lines; blank lines are skipped.
func readQueries(path string) (qids, qs []string, err error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	n := 0
	for sc.Scan() {
		n++
		line := strings.TrimRight(sc.Text(), "\r")
		if strings.TrimSpace(line) == "" {
			continue
		}
		if id, q, ok := strings.Cut(line, "\t"); ok {
			qids, qs = append(qids, id), append(qs, q)
		} else {
			qids, qs = append(qids, strconv.Itoa(n)), append(qs, line)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, nil, fmt.Errorf("%s:%d: %w", path, n+1, err)
	}
	return qids, qs, nil
}

func writeHits(w *bufio.Writer, qid string, hits []retrieval.Hit, asJSON bool, tag string) error {
	if asJSON {
		b, err := json.Marshal(map[string]any{"qid": qid, "hits": hits})
		if err != nil {
			return err
		}
		w.Write(b)
		return w.WriteByte('\n')
	}
	for _, h := range hits {
		if _, err := fmt.Fprintf(w, "%s Q0 %s %d %.6f %s\n", qid, h.ID, h.Rank, h.Score, tag); err != nil {
			return err
		}
	}
	return nil
}
