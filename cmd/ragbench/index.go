package main

import (
	"bufio"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime/pprof"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/ragbench/ragbench/datasets"
	"github.com/ragbench/ragbench/harness/corpus"
	"github.com/ragbench/ragbench/harness/retrieval"
	"github.com/ragbench/ragbench/harness/retrieval/bm25"
	"github.com/ragbench/ragbench/harness/retrieval/dense"
	"github.com/ragbench/ragbench/harness/retrieval/index"
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
					Flags: []cli.Flag{
						&cli.StringFlag{Name: "kind", Value: "bm25", Usage: "bm25 or dense"},
						&cli.StringFlag{Name: "corpus", Usage: "corpus file or folder (DPR TSV, BEIR/Pyserini JSONL, parquet, dir of .txt)"},
						&cli.StringFlag{Name: "format", Usage: "corpus format: dpr, jsonl, parquet, dir (default: from the name)"},
						&cli.StringFlag{Name: "columns", Usage: "parquet columns id,title,text (dotted paths for nested fields)"},
						&cli.StringFlag{Name: "dataset", Usage: "index the pooled contexts of this dataset (name, parquet file or spec) instead of --corpus"},
						&cli.StringFlag{Name: "out", Required: true, Usage: "index directory"},
						&cli.StringFlag{Name: "units", Usage: "also cut documents into windows of these sentence counts (e.g. 2,4,8,16,32); one index per size in OUT/gN"},
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
					},
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
			Flags: append([]cli.Flag{
				&cli.StringFlag{Name: "query", Usage: "one query (qid 1)"},
				&cli.StringFlag{Name: "queries", Usage: "queries file: TSV (qid<TAB>query), JSONL ({id|qid|_id, query|question|text}) or one query per line"},
				&cli.IntFlag{Name: "k", Value: 10, Usage: "hits per query"},
				&cli.StringFlag{Name: "tag", Value: "ragbench", Usage: "run tag (last TREC column)"},
			}, indexFlags()...),
			Action: search,
		},
		&cli.Command{
			Name:      "retrieval-eval",
			Usage:     "answer recall AR@k (substring and token match) and gold-document recall@k of an index on a dataset",
			ArgsUsage: " ",
			Flags: append([]cli.Flag{
				&cli.StringFlag{Name: "dataset", Required: true, Usage: "dataset name, parquet file or spec"},
				&cli.StringFlag{Name: "k", Value: "1,5,10,20", Usage: "cut-offs"},
				&cli.IntFlag{Name: "limit", Usage: "first N examples only"},
				&cli.StringFlag{Name: "nq-oracle", Usage: "NQ-open oracle file (Lost in the Middle nq-open-oracle.jsonl.gz) giving NQ gold passages (default: raw/nq_docs/ in the data directory, when present)"},
				&cli.BoolFlag{Name: "json", Usage: "print JSON instead of a table"},
			}, indexFlags()...),
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

// parseInts parses "2,4,8".
func parseInts(s string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		n, err := strconv.Atoi(f)
		if err != nil || n <= 0 {
			return nil, fmt.Errorf("%q is not a positive integer", f)
		}
		out = append(out, n)
	}
	return out, nil
}

// docSource yields a fresh reader over the documents to index (called once per index built) and, for
// unit indexes, the documents with their sentences.
type docSource struct {
	open func() (corpus.Reader, error)
	pool []corpus.PoolDoc // set for --dataset
}

func openSource(c *cli.Context) (*docSource, error) {
	path, spec := c.String("corpus"), c.String("dataset")
	switch {
	case path == "" && spec == "":
		return nil, usagef("give --corpus FILE or --dataset SPEC")
	case path != "" && spec != "":
		return nil, usagef("give --corpus or --dataset, not both")
	case spec != "":
		ds, err := datasets.Load(c.Context, spec, datasets.LoadOptions{})
		if err != nil {
			return nil, err
		}
		docs, st := corpus.Pool(ds.Examples)
		fmt.Fprintf(c.App.ErrWriter, "pool of %s: %d passages, %d documents (%d duplicates dropped, %d empty, %d title clashes)\n",
			ds.Name, st.Passages, st.Docs, st.Duplicates, st.Empty, st.TitleClashes)
		plain := make([]corpus.Document, len(docs))
		for i, d := range docs {
			plain[i] = d.Document
		}
		return &docSource{pool: docs, open: func() (corpus.Reader, error) { return corpus.NewSliceReader(plain), nil }}, nil
	}
	format := corpus.Format(c.String("format"))
	if cols := c.String("columns"); cols != "" {
		parts := strings.Split(cols, ",")
		if len(parts) != 3 {
			return nil, usagef("--columns wants id,title,text")
		}
		pc := corpus.ParquetColumns{ID: parts[0], Title: parts[1], Text: parts[2]}
		return &docSource{open: func() (corpus.Reader, error) { return corpus.OpenParquet(path, pc) }}, nil
	}
	if _, err := corpus.Open(path, format); err != nil { // fail early on a bad path or format
		return nil, err
	}
	return &docSource{open: func() (corpus.Reader, error) { return corpus.Open(path, format) }}, nil
}

// unitReader turns each source document into its units of one size and records them in a JSONL sidecar.
type unitReader struct {
	src     corpus.Reader
	pool    []corpus.PoolDoc
	i       int
	opt     corpus.UnitOptions
	pending []corpus.Unit
	enc     *json.Encoder
	docs    int
}

func (u *unitReader) Next() (corpus.Document, error) {
	for len(u.pending) == 0 {
		var d corpus.PoolDoc
		if u.pool != nil {
			if u.i >= len(u.pool) {
				return corpus.Document{}, io.EOF
			}
			d = u.pool[u.i]
			u.i++
		} else {
			doc, err := u.src.Next()
			if err != nil {
				return corpus.Document{}, err
			}
			d = corpus.PoolDoc{Document: doc}
		}
		units, err := corpus.Units(d, u.opt)
		if err != nil {
			return corpus.Document{}, err
		}
		u.docs++
		u.pending = units
	}
	un := u.pending[0]
	u.pending = u.pending[1:]
	if err := corpus.WriteUnit(u.enc, un); err != nil {
		return corpus.Document{}, err
	}
	return un.Document(), nil
}

func (u *unitReader) Close() error {
	if u.src != nil {
		return u.src.Close()
	}
	return nil
}

func indexBuild(c *cli.Context) error {
	kind := c.String("kind")
	if kind != "bm25" && kind != "dense" {
		return usagef("--kind must be bm25 or dense, not %q", kind)
	}
	src, err := openSource(c)
	if err != nil {
		return err
	}
	out := c.String("out")
	var sizes []int
	if s := c.String("units"); s != "" {
		if sizes, err = parseInts(s); err != nil {
			return usagef("--units: %v", err)
		}
	}
	// reader opens the documents to index: the source itself (g == 0) or its units of g sentences,
	// whose bookkeeping goes to side.
	stride := c.Int("stride")
	reader := func(g int, side io.Writer) (corpus.Reader, error) {
		if g == 0 {
			return src.open()
		}
		opt := corpus.UnitOptions{Sizes: []int{g}, ParentSize: c.Int("parent")}
		if stride > 0 {
			opt.Stride = func(int) int { return min(stride, g) }
		}
		ur := &unitReader{pool: src.pool, opt: opt, enc: json.NewEncoder(side)}
		if src.pool == nil {
			var err error
			if ur.src, err = src.open(); err != nil {
				return nil, err
			}
		}
		return ur, nil
	}
	build := func(g int, dir string, side io.Writer) error {
		r, err := reader(g, side)
		if err != nil {
			return err
		}
		defer r.Close()
		start := time.Now()
		if kind == "dense" {
			emb, err := denseEmbedder(c, func() (corpus.Reader, error) { return reader(g, io.Discard) })
			if err != nil {
				return err
			}
			if err := dense.Build(c.Context, r, emb, dir, c.App.ErrWriter); err != nil {
				return err
			}
			fmt.Fprintf(c.App.Writer, "%s: dense index built in %.1fs\n", dir, time.Since(start).Seconds())
			return nil
		}
		opt := bm25.Options{Analyzer: bm25.Analyzer(c.String("analyzer")), Fields: bm25.Fields(c.String("fields")),
			K1: c.Float64("k1"), B: c.Float64("b"), MemoryBudget: c.Int64("memory-mb") << 20, Workers: c.Int("workers"),
			Progress: c.App.ErrWriter}
		m, err := bm25.Build(c.Context, r, dir, opt)
		if err != nil {
			return err
		}
		fmt.Fprintf(c.App.Writer, "%s: bm25 index of %d documents (%d empty), %d terms, avgdl %.1f, in %.1fs\n",
			dir, m.Docs, m.Empty, m.Terms, m.AvgDL(), time.Since(start).Seconds())
		return nil
	}
	if sizes == nil {
		return build(0, out, nil)
	}
	for _, g := range sizes {
		dir := filepath.Join(out, "g"+strconv.Itoa(g))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return err
		}
		side, err := os.Create(filepath.Join(dir, corpus.UnitsFile))
		if err != nil {
			return err
		}
		bw := bufio.NewWriterSize(side, 1<<20)
		err = build(g, dir, bw)
		if ferr := bw.Flush(); err == nil {
			err = ferr
		}
		if cerr := side.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return fmt.Errorf("units of %d sentences: %w", g, err)
		}
	}
	return nil
}

// denseEmbedder makes the embedder of --embedder for a build. For LSA it fits the model on the corpus
// from fit.
func denseEmbedder(c *cli.Context, fit func() (corpus.Reader, error)) (dense.Embedder, error) {
	switch name := c.String("embedder"); name {
	case "lsa":
		r, err := fit()
		if err != nil {
			return nil, err
		}
		defer r.Close()
		return dense.FitLSA(c.Context, r, dense.LSAConfig{Dim: c.Int("dim")}, c.App.ErrWriter)
	case "openai":
		if c.String("embed-model") == "" {
			return nil, usagef("dense with an OpenAI-compatible server needs --embed-model (and --embed-url or $OPENAI_BASE_URL)")
		}
		return dense.NewOpenAI(c.Context, dense.OpenAIConfig{BaseURL: c.String("embed-url"), Model: c.String("embed-model"),
			Preset: c.String("embed-preset"), Dimensions: c.Int("dim")})
	default:
		return nil, usagef("--embedder must be lsa or openai, not %q", name)
	}
}

// openedIndex is a retriever with its closer and a way to search many queries.
type openedIndex struct {
	retrieval.Retriever
	close func() error
	kind  string
}

// openIndex opens the index the index flags describe (see harness/retrieval/index).
func openIndex(c *cli.Context) (*openedIndex, error) {
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
		return nil, usageError{err}
	}
	ix, err := index.Open(c.Context, cfg)
	if err != nil {
		return nil, err
	}
	return &openedIndex{Retriever: ix, close: ix.Close, kind: ix.Kind}, nil
}

// query is one query of a run.
type query struct{ ID, Text string }

// readQueryFile reads TSV (qid, query), JSONL or plain lines.
func readQueryFile(path string) ([]query, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	var out []query
	line := 0
	for sc.Scan() {
		line++
		s := strings.TrimRight(sc.Text(), "\r")
		if strings.TrimSpace(s) == "" {
			continue
		}
		if strings.HasPrefix(strings.TrimSpace(s), "{") {
			var rec map[string]any
			if err := json.Unmarshal([]byte(s), &rec); err != nil {
				return nil, fmt.Errorf("%s:%d: %w", path, line, err)
			}
			q := query{}
			for _, k := range []string{"qid", "id", "_id", "query_id"} {
				if v, ok := rec[k]; ok {
					q.ID = fmt.Sprint(v)
					break
				}
			}
			for _, k := range []string{"query", "question", "text"} {
				if v, ok := rec[k].(string); ok {
					q.Text = v
					break
				}
			}
			if q.Text == "" {
				return nil, fmt.Errorf("%s:%d: no query, question or text field", path, line)
			}
			if q.ID == "" {
				q.ID = strconv.Itoa(len(out) + 1)
			}
			out = append(out, q)
			continue
		}
		if id, text, ok := strings.Cut(s, "\t"); ok {
			out = append(out, query{ID: id, Text: text})
		} else {
			out = append(out, query{ID: strconv.Itoa(len(out) + 1), Text: s})
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return out, nil
}

func search(c *cli.Context) error {
	var qs []query
	switch {
	case c.IsSet("query") && c.IsSet("queries"):
		return usagef("give --query or --queries, not both")
	case c.IsSet("query"):
		qs = []query{{ID: "1", Text: c.String("query")}}
	case c.IsSet("queries"):
		var err error
		if qs, err = readQueryFile(c.String("queries")); err != nil {
			return err
		}
	default:
		return usagef("give --query TEXT or --queries FILE")
	}
	if c.Int("k") <= 0 {
		return usagef("--k must be positive")
	}
	ix, err := openIndex(c)
	if err != nil {
		return err
	}
	defer ix.close()
	w := bufio.NewWriter(c.App.Writer)
	defer w.Flush()
	tag := c.String("tag")
	for i, q := range qs {
		hits, err := ix.Retrieve(c.Context, q.Text, c.Int("k"))
		if err != nil {
			return fmt.Errorf("query %s: %w", q.ID, err)
		}
		for _, h := range hits {
			fmt.Fprintf(w, "%s Q0 %s %d %.6f %s\n", trecField(q.ID), trecField(h.ID), h.Rank, h.Score, tag)
		}
		if len(qs) > 1000 && (i+1)%1000 == 0 {
			fmt.Fprintf(c.App.ErrWriter, "search: %d/%d queries\n", i+1, len(qs))
		}
	}
	return nil
}

// trecField keeps a TREC column free of white space.
func trecField(s string) string {
	if !strings.ContainsAny(s, " \t\n") {
		return s
	}
	return strings.Join(strings.Fields(s), "_")
}

// evalRow is one cut-off of retrieval-eval.
type evalRow struct {
	K            int     `json:"k"`
	ARSubstring  float64 `json:"ar_substring"`
	ARTokens     float64 `json:"ar_tokens"`
	GoldRecall   float64 `json:"gold_recall"`
	GoldAll      float64 `json:"gold_all"`
	GoldExamples int     `json:"gold_examples"`
}

func retrievalEval(c *cli.Context) error {
	ks, err := parseInts(c.String("k"))
	if err != nil || len(ks) == 0 {
		return usagef("--k: want cut-offs like 1,5,10,20")
	}
	sort.Ints(ks)
	ds, err := datasets.Load(c.Context, c.String("dataset"), datasets.LoadOptions{Limit: c.Int("limit")})
	if err != nil {
		return err
	}
	ix, err := openIndex(c)
	if err != nil {
		return err
	}
	defer ix.close()
	oracle, oracleFile, err := loadNQOracle(c, ds)
	if err != nil {
		return err
	}
	if oracleFile != "" {
		fmt.Fprintf(c.App.ErrWriter, "gold passages from %s (%d questions)\n", oracleFile, len(oracle))
	}
	maxK := ks[len(ks)-1]
	rows := make([]evalRow, len(ks))
	for i, k := range ks {
		rows[i].K = k
	}
	n := 0
	for ei, ex := range ds.Examples {
		hits, err := ix.Retrieve(c.Context, ex.Question, maxK)
		if err != nil {
			return fmt.Errorf("example %s: %w", ex.ID, err)
		}
		passages := make([]string, len(hits))
		for i, h := range hits {
			passages[i] = h.Text
		}
		sub := metrics.NewAnswerMatcher(metrics.MatchSubstring, ex.Answers)
		tok := metrics.NewAnswerMatcher(metrics.MatchTokens, ex.Answers)
		gold := goldOf(ex, oracle)
		for i, k := range ks {
			rows[i].ARSubstring += metrics.AnswerRecall(sub, passages, k)
			rows[i].ARTokens += metrics.AnswerRecall(tok, passages, k)
			if gold != nil {
				found := map[string]bool{}
				for _, h := range hits[:min(k, len(hits))] {
					if key := gold.key(h); gold.want[key] {
						found[key] = true
					}
				}
				rows[i].GoldRecall += float64(len(found)) / float64(len(gold.want))
				if len(found) == len(gold.want) {
					rows[i].GoldAll++
				}
				rows[i].GoldExamples++
			}
		}
		n++
		if (ei+1)%1000 == 0 {
			fmt.Fprintf(c.App.ErrWriter, "retrieval-eval: %d/%d\n", ei+1, len(ds.Examples))
		}
	}
	for i := range rows {
		rows[i].ARSubstring /= float64(max(n, 1))
		rows[i].ARTokens /= float64(max(n, 1))
		if g := rows[i].GoldExamples; g > 0 {
			rows[i].GoldRecall /= float64(g)
			rows[i].GoldAll /= float64(g)
		}
	}
	if c.Bool("json") {
		enc := json.NewEncoder(c.App.Writer)
		enc.SetIndent("", "  ")
		return enc.Encode(map[string]any{"dataset": ds.Name, "index": c.String("index"), "kind": ix.kind, "examples": n, "rows": rows})
	}
	fmt.Fprintf(c.App.Writer, "dataset %s, %d examples, index %s (%s)\n", ds.Name, n, c.String("index"), ix.kind)
	fmt.Fprintf(c.App.Writer, "%4s  %12s  %10s  %11s  %9s  %s\n", "k", "AR@k substr", "AR@k tok", "gold rec@k", "gold all", "gold n")
	for _, r := range rows {
		if r.GoldExamples == 0 {
			fmt.Fprintf(c.App.Writer, "%4d  %12.4f  %10.4f  %11s  %9s  %d\n", r.K, r.ARSubstring, r.ARTokens, "-", "-", 0)
			continue
		}
		fmt.Fprintf(c.App.Writer, "%4d  %12.4f  %10.4f  %11.4f  %9.4f  %d\n", r.K, r.ARSubstring, r.ARTokens, r.GoldRecall, r.GoldAll, r.GoldExamples)
	}
	return nil
}

// goldSet is an example's gold documents and how a hit is matched against them.
type goldSet struct {
	want map[string]bool
	key  func(retrieval.Hit) string
}

// goldOf returns the example's gold documents: HotpotQA/2Wiki supporting-fact titles (matched against the
// hit's title), or the NQ oracle passages (matched by whitespace-normalised text). Nil when unknown.
func goldOf(ex datasets.Example, oracle map[string][]string) *goldSet {
	if len(ex.SupportingFacts) > 0 {
		g := &goldSet{want: map[string]bool{}, key: func(h retrieval.Hit) string { return h.Title }}
		for _, sf := range ex.SupportingFacts {
			g.want[sf.Title] = true
		}
		return g
	}
	if texts, ok := oracle[ex.Question]; ok {
		g := &goldSet{want: map[string]bool{}, key: func(h retrieval.Hit) string { return normSpace(h.Text) }}
		for _, t := range texts {
			g.want[normSpace(t)] = true
		}
		return g
	}
	return nil
}

func normSpace(s string) string { return strings.Join(strings.Fields(s), " ") }

// loadNQOracle reads the Lost-in-the-Middle NQ-open oracle file (question -> gold passage texts) for
// NQ-open datasets: from --nq-oracle, or raw/nq_docs/nq-open-oracle.jsonl.gz in a data directory.
func loadNQOracle(c *cli.Context, ds *datasets.Dataset) (map[string][]string, string, error) {
	path := c.String("nq-oracle")
	if path == "" {
		if ds.Layout != datasets.LayoutNQOpen {
			return nil, "", nil
		}
		for _, d := range datasets.DataDirs() {
			p := filepath.Join(d, "raw", "nq_docs", "nq-open-oracle.jsonl.gz")
			if _, err := os.Stat(p); err == nil {
				path = p
				break
			}
		}
		if path == "" {
			return nil, "", nil
		}
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, "", err
	}
	defer f.Close()
	var r io.Reader = f
	if strings.HasSuffix(path, ".gz") {
		gz, err := gzip.NewReader(f)
		if err != nil {
			return nil, "", fmt.Errorf("%s: %w", path, err)
		}
		defer gz.Close()
		r = gz
	}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	out := map[string][]string{}
	line := 0
	for sc.Scan() {
		line++
		var rec struct {
			Question string `json:"question"`
			Ctxs     []struct {
				Text   string `json:"text"`
				IsGold bool   `json:"isgold"`
			} `json:"ctxs"`
		}
		if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
			return nil, "", fmt.Errorf("%s:%d: %w", path, line, err)
		}
		for _, cx := range rec.Ctxs {
			if cx.IsGold {
				out[rec.Question] = append(out[rec.Question], cx.Text)
			}
		}
	}
	if err := sc.Err(); err != nil {
		return nil, "", fmt.Errorf("%s: %w", path, err)
	}
	return out, path, nil
}

func indexBench(c *cli.Context) error {
	ctx := c.Context
	errw := c.App.ErrWriter
	if c.Int("queries") < 0 || c.Int("peer-queries") < 0 {
		return usagef("--queries and --peer-queries must not be negative")
	}
	dir := c.String("dir")
	if dir != "" {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return err
		}
	} else {
		d, err := os.MkdirTemp("", "ragbench-bm25-bench-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(d)
		dir = d
	}
	path := c.String("corpus")
	if path == "" {
		n := c.Int("n")
		if n <= 0 {
			return usagef("--n must be positive")
		}
		path = filepath.Join(dir, "synthetic.tsv")
		fmt.Fprintf(errw, "bench: writing %d synthetic passages to %s\n", n, path)
		f, err := os.Create(path)
		if err != nil {
			return err
		}
		if err := bm25.NewSynth(1).WriteTSV(ctx, f, n); err != nil {
			f.Close()
			return err
		}
		if err := f.Close(); err != nil {
			return err
		}
	}
	st, err := os.Stat(path)
	if err != nil {
		return err
	}
	r, err := corpus.Open(path, "")
	if err != nil {
		return err
	}
	ixDir := filepath.Join(dir, "index")
	w := c.App.Writer
	if p := c.String("cpuprofile"); p != "" {
		pf, err := os.Create(p)
		if err != nil {
			return err
		}
		if err := pprof.StartCPUProfile(pf); err != nil {
			return err
		}
		defer pf.Close()
	}
	start, cpu0 := time.Now(), bm25.CPUTime()
	m, err := bm25.Build(ctx, r, ixDir, bm25.Options{MemoryBudget: c.Int64("memory-mb") << 20, Workers: c.Int("workers"), Progress: errw})
	r.Close()
	if err != nil {
		return err
	}
	wall, cpu := time.Since(start), bm25.CPUTime()-cpu0
	pprof.StopCPUProfile()
	var size int64
	for _, fs := range m.Files {
		size += fs.Size
	}
	var postings int64
	for _, name := range []string{"postings.bin", "terms.bin", "termoff.bin", "terminfo.bin", "norms.bin", "lens.bin", "docoff.bin"} {
		postings += m.Files[name].Size
	}
	fmt.Fprintf(w, "corpus      %s: %d documents, %.1f MB\n", path, m.Docs, float64(st.Size())/1e6)
	fmt.Fprintf(w, "build       %.1fs wall, %.1fs CPU: %.0f passages/s wall, %.0f passages per CPU-second\n",
		wall.Seconds(), cpu.Seconds(), float64(m.Docs)/wall.Seconds(), float64(m.Docs)/cpu.Seconds())
	fmt.Fprintf(w, "peak RSS    %.2f GB (whole process, including corpus generation)\n", float64(bm25.PeakRSS())/1e9)
	fmt.Fprintf(w, "index size  %.1f MB = %.2f x the corpus file (inverted index alone %.1f MB = %.2f x; stored text %.1f MB)\n",
		float64(size)/1e6, float64(size)/float64(st.Size()), float64(postings)/1e6, float64(postings)/float64(st.Size()), float64(m.Files["docs.bin"].Size)/1e6)
	fmt.Fprintf(w, "terms       %d, postings %d, avgdl %.1f\n", m.Terms, m.Postings, m.AvgDL())
	fmt.Fprintf(w, "kernels     %s\n", bm25.Kernels())

	ix, err := bm25.OpenWith(ixDir, bm25.OpenOptions{SkipChecksums: c.Bool("skip-checksums"), HugePostings: c.Bool("huge-postings")})
	if err != nil {
		return err
	}
	defer ix.Close()
	if c.Bool("huge-postings") {
		how := "mapped (not 4 MiB to 2 GiB, or not Linux)"
		if ix.HugePostings() {
			how = "read into transparent huge pages"
		}
		fmt.Fprintf(w, "postings    --huge-postings: postings.bin %s\n", how)
	}
	nq := c.Int("queries")
	if nq == 0 {
		fmt.Fprintln(w, "query       skipped (--queries 0)")
		return nil
	}
	var qs []string
	if qf := c.String("query-file"); qf != "" {
		data, err := os.ReadFile(qf)
		if err != nil {
			return fmt.Errorf("bench: %w", err)
		}
		for _, l := range strings.Split(string(data), "\n") {
			if l = strings.TrimSpace(l); l != "" && len(qs) < nq {
				qs = append(qs, l)
			}
		}
		if len(qs) == 0 {
			return fmt.Errorf("bench: %s has no queries", qf)
		}
		nq = len(qs)
	} else {
		synth := bm25.NewSynth(2)
		qs = make([]string, nq)
		for i := range qs {
			qs[i] = synth.Query()
		}
	}
	k := c.Int("k")
	// Warm the page cache and the dictionary with a first pass over a few queries.
	for _, q := range qs[:min(50, len(qs))] {
		ix.Search(ctx, q, k)
	}
	lat := make([]time.Duration, len(qs))
	start, cpu0 = time.Now(), bm25.CPUTime()
	for i, q := range qs {
		t := time.Now()
		if _, err := ix.Search(ctx, q, k); err != nil {
			return err
		}
		lat[i] = time.Since(t)
	}
	wall, cpu = time.Since(start), bm25.CPUTime()-cpu0
	p50, p99 := percentile(lat, 0.5), percentile(lat, 0.99)
	fmt.Fprintf(w, "query       %d queries, top %d, one thread: %.0f q/s wall, %.0f q per CPU-second, p50 %s, p99 %s\n",
		nq, k, float64(nq)/wall.Seconds(), float64(nq)/cpu.Seconds(), p50.Round(time.Microsecond), p99.Round(time.Microsecond))
	var qterms, qpost int64
	for _, q := range qs {
		t, p, err := ix.QueryCost(q)
		if err != nil {
			return err
		}
		qterms, qpost = qterms+int64(t), qpost+p
	}
	fmt.Fprintf(w, "query set   %.2f indexed terms and %.0f postings per query on average\n", float64(qterms)/float64(nq), float64(qpost)/float64(nq))
	if np := min(c.Int("peer-queries"), len(qs)); np > 0 {
		start = time.Now()
		for _, q := range qs[:np] {
			if _, err := ix.BruteForce(q, k); err != nil {
				return err
			}
		}
		pw := time.Since(start)
		start = time.Now()
		for _, q := range qs[:np] {
			ix.Search(ctx, q, k)
		}
		mw := time.Since(start)
		fmt.Fprintf(w, "peer        exhaustive scoring of the same %d queries: %.0f q/s vs MaxScore %.0f q/s (%.1fx)\n",
			np, float64(np)/pw.Seconds(), float64(np)/mw.Seconds(), pw.Seconds()/mw.Seconds())
	}
	return nil
}

func percentile(d []time.Duration, p float64) time.Duration {
	s := append([]time.Duration(nil), d...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	if len(s) == 0 {
		return 0
	}
	return s[min(len(s)-1, int(p*float64(len(s))))]
}
