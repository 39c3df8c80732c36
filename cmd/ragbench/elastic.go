package main

import (
	"fmt"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/ragbench/ragbench/harness/retrieval"
	"github.com/ragbench/ragbench/harness/retrieval/dense"
	"github.com/ragbench/ragbench/harness/retrieval/elastic"
	"github.com/ragbench/ragbench/internal/retry"

	"github.com/ragbench/ragbench/internal/cliutil"
)

// elasticFlags are shared by the elastic subcommands. Credentials are read from the environment only
// (ELASTIC_API_KEY, or ELASTIC_USERNAME and ELASTIC_PASSWORD).
func elasticFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "url", Value: elastic.DefaultURL, EnvVars: []string{"ELASTIC_URL"}, Usage: "cluster URL"},
		&cli.StringFlag{Name: "es-index", Value: elastic.DefaultIndex, Usage: "the cluster's index name (elsewhere --index is an index directory)"},
		cliutil.OldFlag("index", "es-index"),
		&cli.DurationFlag{Name: "timeout", Value: 30 * time.Second, Usage: "per-request timeout"},
		&cli.IntFlag{Name: "retries", Value: 3, Usage: "retries of a failed request (0: none; a DNS failure or a refused local port is never retried)"},
		maxRetryWaitFlag(),
	}
}

// maxRetryWaitFlag caps the total wait between retries of one request; each retry is printed on stderr.
func maxRetryWaitFlag() cli.Flag {
	return &cli.DurationFlag{Name: "max-retry-wait", Value: 30 * time.Second, Usage: "the longest total wait between retries of one request (each retry is printed on stderr)"}
}

func elasticConfig(c *cli.Context) (elastic.Config, error) {
	retries := c.Int("retries")
	if retries == 0 {
		retries = -1 // the library reads 0 as its default
	}
	name, err := cliutil.Renamed(c, "es-index", "index")
	if err != nil {
		return elastic.Config{}, err
	}
	cfg := elastic.Config{URL: c.String("url"), Index: name, Timeout: c.Duration("timeout"),
		MaxRetries: retries, MaxQueryTokens: c.Int("max-query-tokens"), BulkDocs: c.Int("batch"),
		MaxWait: c.Duration("max-retry-wait"), OnRetry: retry.Printer(c.App.ErrWriter)}
	if m := c.String("knn"); m != "" {
		cfg.KNN = &elastic.KNNConfig{Mode: m, Hybrid: c.Bool("hybrid"), NumCandidates: c.Int("num-candidates")}
		if err := cfg.KNN.Validate(); err != nil {
			return cfg, usagef("--knn: %v", err)
		}
		if c.String("embed-model") == "" {
			return cfg, usagef("--knn needs --embed-model (an OpenAI-compatible /v1/embeddings server; --embed-url or $OPENAI_BASE_URL)")
		}
	}
	return cfg, nil
}

// knnFlags make an elastic command a dense one: the kNN mode and the query/passage embedder.
func knnFlags(search bool) []cli.Flag {
	f := []cli.Flag{
		&cli.StringFlag{Name: "knn", Usage: "dense: hnsw (approximate kNN) or exact (script_score) over the vector field 'vec' (empty: BM25)"},
		&cli.StringFlag{Name: "embed-url", Usage: "dense: embedder base URL ending in /v1 (default $OPENAI_BASE_URL)"},
		&cli.StringFlag{Name: "embed-model", Usage: "dense: embedding model (the same for indexing and search)"},
		&cli.StringFlag{Name: "embed-preset", Usage: "dense: instruction prefixes (e5, bge, qwen3)"},
		&cli.IntFlag{Name: "dimensions", Usage: "dense: request this many dimensions (Matryoshka models; 0: the model's)"},
	}
	if search {
		f = append(f,
			&cli.BoolFlag{Name: "hybrid", Usage: "dense: BM25 and kNN in one request (the engine adds the scores)"},
			&cli.IntFlag{Name: "num-candidates", Usage: "dense, Elasticsearch hnsw: candidates per shard (default max(100, 10k))"})
	}
	return f
}

// knnEmbedder opens the OpenAI-compatible embedder of --embed-model.
func knnEmbedder(c *cli.Context) (*dense.OpenAI, error) {
	return dense.NewOpenAI(c.Context, dense.OpenAIConfig{BaseURL: c.String("embed-url"), Model: c.String("embed-model"),
		Preset: c.String("embed-preset"), Dimensions: c.Int("dimensions"), OnRetry: retry.Printer(c.App.ErrWriter)})
}

func init() {
	register(&cli.Command{
		Name:  "elastic",
		Usage: "Elasticsearch/OpenSearch backend: the DRAGIN/QuCo BM25 query, kNN (--knn), and bulk indexing of a DPR TSV",
		Description: "Point it at a cluster with --url or $ELASTIC_URL; credentials come from $ELASTIC_API_KEY or\n" +
			"$ELASTIC_USERNAME/$ELASTIC_PASSWORD. See docs/dense.md (Elasticsearch section).",
		Subcommands: []*cli.Command{
			{
				Name:  "ping",
				Usage: "print the cluster's name, distribution and version",
				Flags: elasticFlags(),
				Action: func(c *cli.Context) error {
					cfg, err := elasticConfig(c)
					if err != nil {
						return err
					}
					cl, err := elastic.New(cfg)
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
				Flags: append(append(elasticFlags(),
					&cli.StringFlag{Name: "tsv", Usage: "DPR passages TSV (psgs_w100.tsv layout; required)"},
					&cli.BoolFlag{Name: "create", Usage: "create the index with the DRAGIN mapping (english analyzer) if missing"},
					&cli.IntFlag{Name: "batch", Value: 2000, Usage: "documents per bulk request"},
					&cli.StringFlag{Name: "checkpoint", Usage: "checkpoint file (default <tsv name>.<index>.checkpoint.json here)"},
					&cli.BoolFlag{Name: "restart", Usage: "ignore an existing checkpoint and start from the first line"},
					&cli.Int64Flag{Name: "max-docs", Usage: "stop after this many documents (0: all)"},
				), knnFlags(false)...),
				Action: func(c *cli.Context) error {
					if c.NArg() > 0 {
						return usagef("elastic index: unexpected arguments %v", c.Args().Slice())
					}
					if c.String("tsv") == "" {
						return usagef("elastic index: --tsv is required")
					}
					cfg, err := elasticConfig(c)
					if err != nil {
						return err
					}
					if _, err := elastic.New(cfg); err != nil {
						return usagef("%v", err)
					}
					opt := elastic.IndexOptions{Checkpoint: c.String("checkpoint"), Restart: c.Bool("restart"), Create: c.Bool("create"), MaxDocs: c.Int64("max-docs")}
					if cfg.KNN != nil {
						emb, err := knnEmbedder(c)
						if err != nil {
							return err
						}
						defer emb.Close()
						opt.Embedder = emb
					}
					return elastic.IndexTSVWith(c.Context, cfg, c.String("tsv"), cliutil.InfoWriter(c), opt)
				},
			},
			{
				Name:  "search",
				Usage: "run the DRAGIN query; writes a TREC run (qid Q0 docid rank score tag) or JSON lines",
				Flags: append(append(append(elasticFlags(), searchFlags("elastic")...),
					&cli.IntFlag{Name: "max-query-tokens", Value: elastic.DefaultMaxQueryTokens, Usage: "left-truncate queries to this many tokens (negative: no truncation)"},
					&cli.IntFlag{Name: "batch", Value: 32, Usage: "queries per _msearch request"},
				), knnFlags(true)...),
				Action: elasticSearch,
			},
		},
	})
}

func elasticSearch(c *cli.Context) error {
	qs, err := queriesOf(c)
	if err != nil {
		return err
	}
	out, err := newHitWriter(c)
	if err != nil {
		return err
	}
	cfg, err := elasticConfig(c)
	if err != nil {
		return err
	}
	cfg.BulkDocs = 0
	cl, err := elastic.New(cfg)
	if err != nil {
		return usagef("%v", err)
	}
	searchAll := cl.SearchAll
	if cfg.KNN != nil {
		emb, err := knnEmbedder(c)
		if err != nil {
			return err
		}
		defer emb.Close()
		d, err := elastic.NewDense(c.Context, cfg, emb)
		if err != nil {
			return err
		}
		searchAll = d.SearchAll
	}
	texts := make([]string, len(qs))
	for i, q := range qs {
		texts[i] = q.Text
	}
	defer out.Flush()
	err = searchAll(c.Context, texts, c.Int("k"), c.Int("batch"), func(i int, hits []retrieval.Hit) error {
		return out.Write(qs[i], hits)
	}, func(done int) { fmt.Fprintf(cliutil.InfoWriter(c), "elastic search: %d/%d queries\n", done, len(qs)) })
	if err != nil {
		return err
	}
	return out.Flush()
}
