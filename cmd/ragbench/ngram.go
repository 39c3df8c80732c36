package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/ragbench/ragbench/internal/cliutil"

	"github.com/ragbench/ragbench/harness/corpus"
	"github.com/ragbench/ragbench/harness/ngram"
	"github.com/ragbench/ragbench/harness/ngram/ngrambench"
)

func init() {
	indexFlag := &cli.StringFlag{Name: "index", Usage: "index directory (local engine)"}
	queryFlags := []cli.Flag{
		indexFlag,
		&cli.StringFlag{Name: "mode", Value: "exact", Usage: "AND semantics of the local engine: exact or infinigram"},
		&cli.Uint64Flag{Name: "max-clause-freq", Value: ngram.DefaultMaxClauseFreq, Usage: "infinigram mode and API: subsampling threshold"},
		&cli.IntFlag{Name: "token-width", Value: 2, Usage: "token width of an Infini-gram index without manifest.json"},
		&cli.BoolFlag{Name: "verify", Hidden: true, Usage: "no effect: every open checks the CRC-32C of every index file"},
		&cli.BoolFlag{Name: "api", Usage: "ask an Infini-gram API server instead of a local index"},
		&cli.StringFlag{Name: "api-url", Value: ngram.DefaultAPIURL, Usage: "API endpoint (with --api)"},
		&cli.StringFlag{Name: "api-index", Value: ngram.DefaultAPIIndex, Usage: "API index name (with --api)"},
		&cli.StringFlag{Name: "cache", Usage: "JSONL cache file: answers are replayed from it and new ones appended"},
		&cli.StringFlag{Name: "quco-cache", Usage: "the QuCo-RAG authors' cache JSON to replay offline (no index or API needed)"},
		maxRetryWaitFlag(),
	}
	register(&cli.Command{
		Name:  "ngram",
		Usage: "corpus statistics: build an Infini-gram-layout suffix-array index, count, co-occur, serve, bench",
		Subcommands: []*cli.Command{
			{
				Name:      "build",
				Usage:     "build an index from a corpus (DPR TSV, BEIR JSONL, parquet, or a folder of .txt files)",
				ArgsUsage: " ",
				Flags: []cli.Flag{
					&cli.StringFlag{Name: "corpus", Required: true, Usage: "corpus path"},
					corpusFormatFlag(), cliutil.OldFlag("format", "corpus-format"),
					&cli.StringFlag{Name: "text-column", Usage: "parquet: the text column (dotted path for nested)"},
					&cli.StringFlag{Name: "title-column", Usage: "parquet: the title column"},
					&cli.StringFlag{Name: "out", Required: true, Usage: "index directory to create"},
					&cli.BoolFlag{Name: "lowercase", Usage: "lowercase the text (and queries)"},
					&cli.BoolFlag{Name: "title", Usage: "index each document as title + newline + text"},
					&cli.IntFlag{Name: "token-width", Value: 4, Usage: "bytes per token: 2 (vocabulary < 65535) or 4"},
					&cli.IntFlag{Name: "shard-tokens", Value: ngram.DefaultShardTokens, Usage: "tokens per shard (separators included)"},
					&cli.IntFlag{Name: "workers", Usage: "shards built at once (default GOMAXPROCS)"},
					&cli.BoolFlag{Name: "force", Usage: "replace an existing index"},
				},
				Action: ngramBuild,
			},
			{
				Name:      "count",
				Usage:     "count queries (Infini-gram syntax: a AND b OR c); one JSON line per query",
				ArgsUsage: "QUERY...",
				Flags: append(queryFlags,
					&cli.BoolFlag{Name: "ids", Usage: "queries are space-separated token ids"}),
				Action: ngramCount,
			},
			{
				Name:      "cooc",
				Usage:     "co-occurrence of A and B within --window tokens",
				ArgsUsage: "A B",
				Flags:     append(queryFlags, &cli.IntFlag{Name: "window", Value: 1000, Usage: "window in tokens"}),
				Action:    ngramCooc,
			},
			{
				Name:      "ntd",
				Usage:     "next-token distribution of a prefix",
				ArgsUsage: "PREFIX",
				Flags: []cli.Flag{indexFlag,
					&cli.IntFlag{Name: "top", Value: 20, Usage: "print the N most frequent next tokens"},
					&cli.BoolFlag{Name: "ids", Usage: "PREFIX is token ids (\"12 7 311\") instead of text"},
					&cli.IntFlag{Name: "token-width", Value: 2, Usage: "token width in bytes of an index without manifest.json (an Infini-gram one): 2 or 4"}},
				Action: ngramNTD,
			},
			{
				Name:   "unigrams",
				Usage:  "the most frequent tokens",
				Flags:  []cli.Flag{indexFlag, &cli.IntFlag{Name: "top", Value: 20, Usage: "print the N most frequent tokens"}},
				Action: ngramUnigrams,
			},
			{
				Name:  "serve",
				Usage: "serve an index over Infini-gram's JSON API",
				Flags: []cli.Flag{
					indexFlag,
					&cli.StringFlag{Name: "addr", Value: "127.0.0.1:8765", Usage: "listen address"},
					&cli.StringFlag{Name: "name", Usage: "index name requests must give (default: accept any)"},
					&cli.StringFlag{Name: "mode", Value: "exact", Usage: "AND semantics: exact or infinigram"},
					&cli.IntFlag{Name: "max-concurrent", Value: 8, Usage: "queries at once; more get HTTP 429"},
					&cli.DurationFlag{Name: "timeout", Value: 5 * time.Second, Usage: "per-query deadline (HTTP 503 past it)"},
					&cli.Int64Flag{Name: "max-body", Value: 64 << 10, Usage: "request-size limit in bytes (HTTP 413 above it)"},
					&cli.IntFlag{Name: "token-width", Value: 2, Usage: "token width of an Infini-gram index without manifest.json"},
					&cli.BoolFlag{Name: "verify", Hidden: true, Usage: "no effect: every open checks the CRC-32C of every index file"},
					&cli.StringFlag{Name: "token-env", Usage: "require the bearer token held in this environment variable"},
				},
				Action: ngramServe,
			},
			{
				Name:  "bench",
				Usage: "benchmark build and queries on a generated Zipfian corpus or a real corpus repeated",
				Flags: []cli.Flag{
					&cli.Int64Flag{Name: "tokens", Value: 10_000_000, Usage: "corpus size in tokens"},
					&cli.StringFlag{Name: "corpus", Usage: "repeat this corpus instead of generating a Zipfian one"},
					corpusFormatFlag(),
					&cli.IntFlag{Name: "vocab", Value: 1_000_000, Usage: "Zipfian vocabulary size"},
					&cli.Float64Flag{Name: "zipf-s", Value: 1.1, Usage: "Zipf exponent (> 1)"},
					&cli.IntFlag{Name: "queries", Value: 2000, Usage: "queries of each kind"},
					&cli.StringFlag{Name: "query-file", Usage: "queries: lines 'count<TAB>q' or 'cooc<TAB>a<TAB>b'"},
					&cli.IntFlag{Name: "window", Value: 1000, Usage: "CoOccur window"},
					&cli.IntFlag{Name: "shard-tokens", Value: ngram.DefaultShardTokens},
					&cli.BoolFlag{Name: "no-peer", Usage: "skip Go's index/suffixarray peer"},
					&cli.BoolFlag{Name: "stream", Usage: "feed the build from the generator directly (text generation inside the timed build) instead of from a corpus file written first"},
					&cli.StringFlag{Name: "dir", Usage: "where to build (default: a temporary directory, removed after)"},
					&cli.StringFlag{Name: "cpuprofile", Usage: "write a CPU profile of the build here"},
					cliutil.FormatFlags("text", "json")[0], cliutil.FormatFlags("text", "json")[1],
				},
				Action: ngramBench,
			},
		},
	})
}

func ngramBuild(c *cli.Context) error {
	if c.NArg() > 0 {
		return usagef("ngram build takes no arguments, got %q", c.Args().Slice())
	}
	format, err := cliutil.Renamed(c, "corpus-format", "format")
	if err != nil {
		return err
	}
	opt := ngram.BuildOptions{
		Format:      corpus.Format(format),
		Lowercase:   c.Bool("lowercase"),
		Title:       c.Bool("title"),
		TokenWidth:  c.Int("token-width"),
		ShardTokens: c.Int("shard-tokens"),
		Workers:     c.Int("workers"),
		Force:       c.Bool("force"),
	}
	var done func()
	opt.Progress, done = cliutil.ProgressWriter(c, false)
	r, err := corpus.OpenColumns(c.String("corpus"), opt.Format, corpus.ParquetColumns{Text: c.String("text-column"), Title: c.String("title-column")})
	if err != nil {
		return err
	}
	defer r.Close()
	st, err := ngram.BuildFrom(c.Context, r, c.String("out"), opt)
	done()
	if err != nil {
		return err
	}
	fmt.Fprintln(c.App.Writer, st.Summary(c.String("out")))
	return nil
}

// openCounter opens the counter the query flags describe (see ngram.Config).
func openCounter(c *cli.Context) (*ngram.Source, error) {
	cfg := ngram.Config{Index: c.String("index"), Mode: c.String("mode"), TokenWidth: c.Int("token-width"),
		Verify: c.Bool("verify"), MaxClauseFreq: c.Uint64("max-clause-freq"), APIURL: c.String("api-url"),
		APIIndex: c.String("api-index"), Cache: c.String("cache"), QuCoCache: c.String("quco-cache"),
		MaxRetryWait: c.Duration("max-retry-wait"), RetryLog: c.App.ErrWriter}
	if c.Bool("api") && cfg.QuCoCache == "" {
		cfg.Backend = ngram.BackendAPI
	}
	if cfg = cfg.Defaults(); cfg.Backend == "" {
		return nil, usagef("give --index DIR, --api or --quco-cache FILE")
	}
	if err := cfg.Validate(); err != nil {
		return nil, usageError{Err: err}
	}
	src, err := ngram.Open(c.Context, cfg)
	if err != nil {
		return nil, err
	}
	if cfg.Backend == ngram.BackendQuCoCache {
		fmt.Fprintf(c.App.ErrWriter, "quco cache: %d answers (%d null entries skipped)\n", src.Cache.Len(), src.Cache.Skipped)
	}
	return src, nil
}

func ngramCount(c *cli.Context) error {
	if c.NArg() == 0 {
		return usagef("ngram count needs at least one QUERY")
	}
	src, err := openCounter(c)
	if err != nil {
		return err
	}
	defer src.Close()
	if c.Bool("ids") && src.Index == nil {
		return usagef("--ids needs --index")
	}
	enc := json.NewEncoder(c.App.Writer)
	enc.SetEscapeHTML(false)
	for _, q := range c.Args().Slice() {
		a, err := src.CountTimed(c.Context, q, c.Bool("ids"))
		var bad *ngram.InputError
		if errors.As(err, &bad) {
			return usageError{Err: err}
		} else if err != nil {
			return fmt.Errorf("count %q: %w", q, err)
		}
		enc.Encode(a)
	}
	return nil
}

func ngramCooc(c *cli.Context) error {
	if c.NArg() != 2 {
		return usagef("ngram cooc needs A and B, got %d arguments", c.NArg())
	}
	src, err := openCounter(c)
	if err != nil {
		return err
	}
	defer src.Close()
	a, b := c.Args().Get(0), c.Args().Get(1)
	res, err := src.CoOccurTimed(c.Context, a, b, c.Int("window"))
	if err != nil {
		return fmt.Errorf("cooc %q %q: %w", a, b, err)
	}
	return json.NewEncoder(c.App.Writer).Encode(res)
}

func ngramNTD(c *cli.Context) error {
	if c.String("index") == "" || c.NArg() != 1 {
		return usagef("ngram ntd needs --index DIR and one PREFIX")
	}
	ix, err := ngram.OpenIndex(c.String("index"), ngram.OpenOptions{TokenWidth: c.Int("token-width")})
	if err != nil {
		return err
	}
	defer ix.Close()
	a, err := ix.PrefixNTD(c.Args().First(), c.Bool("ids"), c.Int("top"))
	var bad *ngram.InputError
	if errors.As(err, &bad) {
		return usageError{Err: err}
	} else if err != nil {
		return err
	}
	return json.NewEncoder(c.App.Writer).Encode(a)
}

func ngramUnigrams(c *cli.Context) error {
	if c.String("index") == "" {
		return usagef("ngram unigrams needs --index DIR")
	}
	ix, err := ngram.OpenIndex(c.String("index"), ngram.OpenOptions{})
	if err != nil {
		return err
	}
	defer ix.Close()
	if !ix.HasVocab() {
		return errors.New("this index has no vocabulary (an Infini-gram index)")
	}
	u := ix.Unigrams()
	if top := c.Int("top"); top > 0 && len(u) > top {
		u = u[:top]
	}
	enc := json.NewEncoder(c.App.Writer)
	enc.SetEscapeHTML(false)
	for _, x := range u {
		enc.Encode(x)
	}
	return nil
}

func ngramServe(c *cli.Context) error {
	if c.String("index") == "" {
		return usagef("ngram serve needs --index DIR")
	}
	mode, err := ngram.ParseMode(c.String("mode"))
	if err != nil {
		return usageError{Err: err}
	}
	ix, err := ngram.OpenIndex(c.String("index"), ngram.OpenOptions{TokenWidth: c.Int("token-width"), Verify: c.Bool("verify")})
	if err != nil {
		return err
	}
	defer ix.Close()
	srv := &ngram.Server{Index: ix, Name: c.String("name"), Mode: mode, MaxConcurrent: c.Int("max-concurrent"),
		Timeout: c.Duration("timeout"), MaxBody: c.Int64("max-body")}
	if env := c.String("token-env"); env != "" {
		if srv.Token = os.Getenv(env); srv.Token == "" {
			return usagef("ngram serve --token-env %s: the variable is empty or unset", env)
		}
	}
	return ngram.ListenAndServe(c.Context, srv, c.String("addr"), c.App.ErrWriter)
}

func ngramBench(c *cli.Context) error {
	cfg := ngrambench.Config{
		Tokens:      c.Int64("tokens"),
		Corpus:      c.String("corpus"),
		Format:      corpus.Format(c.String("corpus-format")),
		Vocab:       c.Int("vocab"),
		ZipfS:       c.Float64("zipf-s"),
		Queries:     c.Int("queries"),
		QueryFile:   c.String("query-file"),
		Window:      c.Int("window"),
		ShardTokens: c.Int("shard-tokens"),
		Peer:        !c.Bool("no-peer"),
		Dir:         c.String("dir"),
		Progress:    cliutil.VerboseWriter(c),
		Log:         cliutil.InfoWriter(c), // its phases take minutes at 100M tokens: say them
		CPUProfile:  c.String("cpuprofile"),
		Stream:      c.Bool("stream"),
	}
	format, err := cliutil.OutputFormat(c, "text", "json")
	if err != nil {
		return err
	}
	if format == "text" && c.Bool("verbose") {
		cfg.OnMeasured = func(r *ngrambench.Report) {
			fmt.Fprintln(c.App.ErrWriter, "bench: measured before the peer:")
			r.Print(c.App.ErrWriter)
		}
	}
	rep, err := ngrambench.Run(c.Context, cfg)
	if err != nil {
		return err
	}
	if format == "json" {
		enc := json.NewEncoder(c.App.Writer)
		enc.SetEscapeHTML(false)
		enc.SetIndent("", "  ")
		return enc.Encode(rep)
	}
	rep.Print(c.App.Writer)
	return nil
}
