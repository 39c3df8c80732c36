package main

import (
	"errors"
	"fmt"
	"io/fs"
	"slices"

	"github.com/urfave/cli/v2"

	"github.com/ragbench/ragbench/internal/cliutil"

	"github.com/ragbench/ragbench/datasets"
	"github.com/ragbench/ragbench/harness/corpus"
	"github.com/ragbench/ragbench/harness/retrieval/bm25"
	"github.com/ragbench/ragbench/harness/retrieval/bm25/bm25bench"
	"github.com/ragbench/ragbench/harness/retrieval/dense"
	"github.com/ragbench/ragbench/harness/retrieval/index"
	"github.com/ragbench/ragbench/harness/retrieval/trec"
	"github.com/ragbench/ragbench/harness/runner"
	"github.com/ragbench/ragbench/internal/retry"
	"github.com/ragbench/ragbench/methods"
	"github.com/ragbench/ragbench/metrics"
)

func init() {
	register(
		&cli.Command{
			Name:  "index",
			Usage: "build and benchmark retrieval indexes (BM25, dense)",
			Subcommands: []*cli.Command{
				{
					Name:      "build",
					Usage:     "index a corpus file or a dataset's context pool, optionally as sentence units",
					ArgsUsage: " ",
					Flags: withDataset(
						&cli.StringFlag{Name: "kind", Value: "bm25", Usage: "bm25 or dense"},
						&cli.StringFlag{Name: "corpus", Usage: "corpus file or folder (DPR TSV, BEIR/Pyserini JSONL, parquet, dir of .txt); or --dataset SPEC to index a dataset's pooled contexts"},
						corpusFormatFlag(), cliutil.OldFlag("format", "corpus-format"),
						&cli.StringFlag{Name: "columns", Usage: "parquet columns id,title,text (dotted paths for nested fields)"},
						&cli.StringFlag{Name: "out", Required: true, Usage: "index directory (built beside it and renamed into place when complete)"},
						&cli.BoolFlag{Name: "force", Usage: "replace an existing index directory"},
						&cli.StringFlag{Name: "units", Usage: "also cut documents into windows of these sentence counts (e.g. 2,4,8,16,32), and with 'long' into LongRAG units of --long-tokens; one index per size in OUT/gN (OUT/glong)"},
						&cli.IntFlag{Name: "long-tokens", Value: corpus.DefaultLongTokens, Usage: "length of the 'long' units in tokens (whole sentences, consecutive, within one document)"},
						&cli.IntFlag{Name: "stride", Usage: "unit stride in sentences (default size/2)"},
						&cli.IntFlag{Name: "parent", Value: 8, Usage: "size of the parent units that smaller units link to"},
						&cli.StringFlag{Name: "analyzer", Value: string(bm25.AnalyzerEnglish), Usage: "bm25: english (stopwords, possessives, Porter) or standard (lowercase only)"},
						&cli.StringFlag{Name: "fields", Value: string(bm25.FieldsTitleText), Usage: "bm25: title+text, text or title"},
						&cli.Float64Flag{Name: "k1", Value: 0.9, Usage: "bm25: default k1 stored with the index"},
						&cli.Float64Flag{Name: "b", Value: 0.4, Usage: "bm25: default b stored with the index"},
						&cli.Int64Flag{Name: "memory-mb", Value: 1024, Usage: "bm25: postings buffer before spilling a run"},
						&cli.IntFlag{Name: "workers", Usage: "bm25: analysis workers (default GOMAXPROCS)"},
						&cli.StringFlag{Name: "embedder", Value: "lsa", Usage: "dense: lsa (offline, fitted on the corpus) or openai (an OpenAI-compatible /v1/embeddings server)"},
						&cli.IntFlag{Name: "dim", Usage: "dense: LSA dimension (default 256) or requested embedding dimensions"},
						&cli.StringFlag{Name: "embed-url", Usage: "dense/openai: base URL ending in /v1 (default $OPENAI_BASE_URL)"},
						&cli.StringFlag{Name: "embed-model", Usage: "dense/openai: model name"},
						&cli.StringFlag{Name: "embed-preset", Usage: "dense/openai: instruction prefixes (e5, bge, qwen3)"},
					),
					Action: indexBuild,
				},
				{
					Name:      "bench",
					Usage:     "measure BM25 build throughput, peak memory, index size and single-thread query speed",
					ArgsUsage: " ",
					Flags: []cli.Flag{
						&cli.IntFlag{Name: "n", Value: 1000000, Usage: "synthetic 100-word passages to generate (ignored with --corpus)"},
						&cli.StringFlag{Name: "corpus", Usage: "benchmark on this corpus instead of synthetic text"},
						&cli.StringFlag{Name: "dir", Usage: "work directory (default a temporary one, removed afterwards)"},
						&cli.IntFlag{Name: "queries", Value: 2000, Usage: "queries to time"},
						&cli.StringFlag{Name: "query-file", Usage: "time these queries (one per line; the first --queries of them) instead of synthetic ones"},
						&cli.IntFlag{Name: "k", Value: 10, Usage: "top k"},
						&cli.Int64Flag{Name: "memory-mb", Value: 1024, Usage: "postings buffer before spilling a run"},
						&cli.IntFlag{Name: "workers", Usage: "analysis workers (default GOMAXPROCS)"},
						&cli.IntFlag{Name: "peer-queries", Value: 200, Usage: "queries also run through the exhaustive scorer, for comparison"},
						&cli.BoolFlag{Name: "skip-checksums", Usage: "open the index without checking file checksums"},
						&cli.BoolFlag{Name: "huge-postings", Usage: "read postings.bin (4 MiB to 2 GiB, Linux) into transparent huge pages instead of mapping it (bm25.OpenOptions.HugePostings)"},
						&cli.StringFlag{Name: "cpuprofile", Usage: "write a CPU profile of the build to this file"},
					},
					Action: indexBench,
				},
			},
		},
		&cli.Command{
			Name:      "search",
			Usage:     "search an index and write a TREC run (qid Q0 docid rank score tag)",
			ArgsUsage: " ",
			Flags:     append(searchFlags("ragbench"), indexFlags()...),
			Action:    search,
		},
		&cli.Command{
			Name:      "retrieval-eval",
			Usage:     "answer recall AR@k (substring and token match) and gold-document recall@k of an index on a dataset",
			ArgsUsage: " ",
			Flags: append(withDataset(
				&cli.StringFlag{Name: "k", Value: "1,5,10,20", Usage: "cut-offs"},
				&cli.StringFlag{Name: "nq-oracle", Usage: "NQ-open oracle file (Lost in the Middle nq-open-oracle.jsonl.gz) giving NQ gold passages (default: raw/nq_docs/ in the data directory, when present)"},
			), append(cliutil.FormatFlags("text", "json"), indexFlags()...)...),
			Action: retrievalEval,
		},
	)
}

// indexFlags select and tune an index for search and evaluation.
func indexFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "index", Required: true, Usage: "index directory (bm25 or dense; for units, OUT/gN)"},
		&cli.Float64Flag{Name: "k1", Usage: "bm25: k1 (default: the index's)"},
		&cli.Float64Flag{Name: "b", Usage: "bm25: b (default: the index's)"},
		&cli.BoolFlag{Name: "exact-length", Usage: "bm25: score exact document lengths instead of Lucene's one-byte norms"},
		&cli.StringFlag{Name: "embed-url", Usage: "dense/openai: base URL (default $OPENAI_BASE_URL)"},
		&cli.StringFlag{Name: "embed-model", Usage: "dense/openai: model name (LSA indexes need nothing)"},
		&cli.StringFlag{Name: "embed-preset", Usage: "dense/openai: instruction prefixes (e5, bge, qwen3)"},
	}
}

// corpusFormatFlag is --corpus-format, the format of a corpus file.
func corpusFormatFlag() cli.Flag {
	return &cli.StringFlag{Name: "corpus-format", Usage: "corpus format: dpr, jsonl, parquet, dir (default: from the name)"}
}

// openSource opens the documents of --corpus (with --corpus-format or --columns) or --dataset.
func openSource(c *cli.Context) (*corpus.Source, error) {
	format, err := cliutil.Renamed(c, "corpus-format", "format")
	if err != nil {
		return nil, err
	}
	opts, err := datasetOptions(c)
	if err != nil {
		return nil, err
	}
	cfg := corpus.SourceConfig{Path: c.String("corpus"), Format: corpus.Format(format), Dataset: c.String("dataset"), DatasetOptions: opts}
	switch {
	case cfg.Path == "" && cfg.Dataset == "":
		return nil, usagef("give --corpus FILE or --dataset SPEC")
	case cfg.Path != "" && cfg.Dataset != "":
		return nil, usagef("give --corpus or --dataset, not both")
	}
	if cols := c.String("columns"); cols != "" {
		if cfg.Columns, err = corpus.ParseColumns(cols); err != nil {
			return nil, usagef("--columns wants id,title,text")
		}
	}
	if err := cfg.Validate(); err != nil {
		return nil, usagef("%v", err)
	}
	src, err := corpus.OpenSource(c.Context, cfg)
	if err != nil {
		return nil, err
	}
	if st := src.Stats; src.Loaded != nil {
		announce(c, src.Loaded, len(src.Loaded.Examples))
		fmt.Fprintln(cliutil.InfoWriter(c), st.Summary(src.Dataset))
	}
	return src, nil
}

func indexBuild(c *cli.Context) error {
	cfg := index.BuildConfig{Kind: c.String("kind"), Dir: c.String("out"), Stride: c.Int("stride"), ParentSize: c.Int("parent"),
		BM25: bm25.Options{Analyzer: bm25.Analyzer(c.String("analyzer")), Fields: bm25.Fields(c.String("fields")),
			K1: c.Float64("k1"), B: c.Float64("b"), MemoryBudget: c.Int64("memory-mb") << 20, Workers: c.Int("workers")},
		Dense: dense.EmbedderSpec{Kind: c.String("embedder"), LSA: dense.LSAConfig{Dim: c.Int("dim")},
			OpenAI: dense.OpenAIConfig{BaseURL: c.String("embed-url"), Model: c.String("embed-model"), Preset: c.String("embed-preset"), Dimensions: c.Int("dim"),
				OnRetry: retry.Printer(c.App.ErrWriter)}},
		Force: c.Bool("force")}
	switch {
	case cfg.Kind != index.KindBM25 && cfg.Kind != index.KindDense:
		return usagef("--kind must be bm25 or dense, not %q", cfg.Kind)
	case cfg.Kind == index.KindDense && cfg.Dense.Kind != dense.KindLSA && cfg.Dense.Kind != dense.KindOpenAI:
		return usagef("--embedder must be lsa or openai, not %q", cfg.Dense.Kind)
	case cfg.Kind == index.KindDense && cfg.Dense.Kind == dense.KindOpenAI && cfg.Dense.OpenAI.Model == "":
		return usagef("dense with an OpenAI-compatible server needs --embed-model (and --embed-url or $OPENAI_BASE_URL)")
	}
	if s := c.String("units"); s != "" {
		var err error
		if cfg.Units, err = parseSizes(s); err != nil {
			return usagef("--units: %v", err)
		}
		cfg.LongTokens = c.Int("long-tokens")
	}
	if err := cfg.Validate(); err != nil {
		return usagef("%v", err)
	}
	src, err := openSource(c)
	if err != nil {
		return err
	}
	var done func()
	cfg.Progress, done = cliutil.ProgressWriter(c, false)
	return index.Build(c.Context, src, cfg, func(b index.Built) {
		done()
		fmt.Fprintln(c.App.Writer, b.Summary())
	})
}

// openIndex opens the index the index flags describe (see harness/retrieval/index).
func openIndex(c *cli.Context) (*index.Index, error) {
	cfg := index.Config{Dir: c.String("index"), BM25: index.BM25Config{ExactLength: c.Bool("exact-length")},
		Embedder: index.EmbedderConfig{Model: c.String("embed-model"), BaseURL: c.String("embed-url"), Preset: c.String("embed-preset")}}
	if c.IsSet("k1") {
		k1 := c.Float64("k1")
		cfg.BM25.K1 = &k1
	}
	if c.IsSet("b") {
		b := c.Float64("b")
		cfg.BM25.B = &b
	}
	if err := cfg.Defaults().Validate(); err != nil {
		return nil, usageError{Err: err}
	}
	ix, err := index.Open(c.Context, cfg)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("--index %s: %s", cfg.Dir, index.Missing(cfg.Dir))
	}
	return ix, err
}

func search(c *cli.Context) error {
	qs, err := queriesOf(c)
	if err != nil {
		return err
	}
	out, err := newHitWriter(c)
	if err != nil {
		return err
	}
	ix, err := openIndex(c)
	if err != nil {
		return err
	}
	defer ix.Close()
	return trec.Search(c.Context, ix, qs, c.Int("k"), out, func(done int) {
		fmt.Fprintf(cliutil.InfoWriter(c), "search: %d/%d queries\n", done, len(qs))
	})
}

func retrievalEval(c *cli.Context) error {
	ks, err := cliutil.ParseInts(c.String("k"))
	if err != nil || len(ks) == 0 {
		return usagef("--k: want cut-offs like 1,5,10,20")
	}
	format, err := cliutil.OutputFormat(c, "text", "json")
	if err != nil {
		return err
	}
	if c.String("dataset") == "" {
		return usagef("retrieval-eval needs --dataset")
	}
	ds, err := loadDataset(c, c.String("dataset"))
	if err != nil {
		return err
	}
	ix, err := openIndex(c)
	if err != nil {
		return err
	}
	defer ix.Close()
	// Gold passages of NQ-open questions: --nq-oracle, or the oracle file in a data directory.
	oracle, path, err := datasets.GoldOracle(c.Context, c.String("nq-oracle"), ds.Layout)
	if err != nil {
		return err
	}
	if path != "" {
		fmt.Fprintf(cliutil.InfoWriter(c), "gold passages from %s (%d questions)\n", path, len(oracle))
	}
	opt := runner.ContextOptions{Ks: ks,
		Gold: func(ex datasets.Example) *metrics.RetrievalGold { return metrics.GoldDocsOf(ex, oracle) },
		Progress: func(done int) {
			fmt.Fprintf(cliutil.InfoWriter(c), "retrieval-eval: %d/%d\n", done, len(ds.Examples))
		}}
	res, err := runner.EvalContexts(c.Context, runner.TopK{K: slices.Max(ks)}, methods.Env{Retriever: ix}, ds.Examples, opt)
	if err != nil {
		return err
	}
	rep := metrics.RetrievalReport{Dataset: ds.Name, Examples: res.Questions, Index: c.String("index"), Kind: ix.Kind, Rows: res.RetrievalRows()}
	return rep.Write(c.App.Writer, format)
}

func indexBench(c *cli.Context) error {
	cfg := bm25bench.DefaultConfig()
	cfg.Corpus, cfg.N, cfg.Dir = c.String("corpus"), c.Int("n"), c.String("dir")
	cfg.Queries, cfg.QueryFile, cfg.K = c.Int("queries"), c.String("query-file"), c.Int("k")
	cfg.MemoryMB, cfg.Workers, cfg.PeerQueries = c.Int64("memory-mb"), c.Int("workers"), c.Int("peer-queries")
	cfg.SkipChecksums, cfg.HugePostings, cfg.CPUProfile = c.Bool("skip-checksums"), c.Bool("huge-postings"), c.String("cpuprofile")
	if err := cfg.Validate(); err != nil {
		return usagef("index bench: %v", err)
	}
	var done func()
	cfg.Log, done = cliutil.ProgressWriter(c, true) // a long bench says what it does on a log too
	rep, err := bm25bench.Run(c.Context, cfg)
	done()
	if err != nil {
		return err
	}
	rep.Print(c.App.Writer)
	return nil
}
