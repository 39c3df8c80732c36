package main

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/ragbench/ragbench/datasets"
	"github.com/ragbench/ragbench/harness/retrieval/dense"
	"github.com/ragbench/ragbench/harness/retrieval/unitindex"
	"github.com/ragbench/ragbench/methods"
)

func init() {
	register(&cli.Command{
		Name:      "context-eval",
		Usage:     "retrieval-only evaluation of umg, umgp and their baselines on unit indexes: AR@k, gold recall@k and preprocessing time per question, without a generator",
		ArgsUsage: " ",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "dataset", Required: true, Usage: "dataset name, parquet file or spec"},
			&cli.StringFlag{Name: "bm25-units", Required: true, Usage: "BM25 unit index (index build --kind bm25 --units ...)"},
			&cli.StringFlag{Name: "dense-units", Required: true, Usage: "dense unit index of the same units (index build --kind dense --units ...)"},
			&cli.StringFlag{Name: "granularities", Value: "2,4,8,16,32", Usage: "unit sizes to open (and umg/umgp's granularities)"},
			&cli.StringFlag{Name: "methods", Value: "umg,umgp,standard-rag,hybrid,longrag", Usage: "methods to evaluate"},
			&cli.StringFlag{Name: "settings", Usage: `method settings as JSON, e.g. '{"umg": {"normalization": "softmax"}}'`},
			&cli.StringFlag{Name: "k", Value: "1,3,5", Usage: "cut-offs"},
			&cli.IntFlag{Name: "limit", Usage: "first N examples only"},
			&cli.StringFlag{Name: "nq-oracle", Usage: "NQ-open oracle file giving gold passages (default: the one in a data directory, for NQ-open)"},
			&cli.StringFlag{Name: "embed-url", Usage: "dense/openai: base URL (default the one recorded in the index, or $OPENAI_BASE_URL)"},
			&cli.StringFlag{Name: "embed-model", Usage: "dense/openai: model name (LSA indexes need nothing)"},
			&cli.StringFlag{Name: "embed-preset", Usage: "dense/openai: instruction prefixes (e5, bge, qwen3)"},
			&cli.BoolFlag{Name: "json", Usage: "print one JSON report per method instead of a table"},
		},
		Action: contextEval,
	})
}

func contextEval(c *cli.Context) error {
	sizes, err := parseInts(c.String("granularities"))
	if err != nil || len(sizes) == 0 {
		return usagef("--granularities: want sizes like 2,4,8,16,32")
	}
	ks, err := parseInts(c.String("k"))
	if err != nil || len(ks) == 0 {
		return usagef("--k: want cut-offs like 1,3,5")
	}
	all := map[string]map[string]any{}
	if s := c.String("settings"); s != "" {
		if err := json.Unmarshal([]byte(s), &all); err != nil {
			return usagef("--settings: %v", err)
		}
	}
	var ms []methods.Contexter
	for _, name := range strings.Split(c.String("methods"), ",") {
		name = strings.TrimSpace(name)
		set := all[name]
		if (name == "umg" || name == "umgp") && set["granularities"] == nil {
			if set == nil {
				set = map[string]any{}
			}
			set["granularities"] = sizes
		}
		m, err := methods.New(name, set)
		if err != nil {
			return usagef("%v", err)
		}
		cm, ok := m.(methods.Contexter)
		if !ok {
			return usagef("method %s has no generator-free context step", name)
		}
		ms = append(ms, cm)
	}
	var emb dense.Embedder
	if c.String("embed-model") != "" {
		if emb, err = dense.NewOpenAI(c.Context, dense.OpenAIConfig{BaseURL: c.String("embed-url"), Model: c.String("embed-model"), Preset: c.String("embed-preset")}); err != nil {
			return err
		}
	}
	bix, err := unitindex.Open(c.String("bm25-units"), unitindex.Options{Sizes: sizes, Expert: "bm25"})
	if err != nil {
		return err
	}
	defer bix.Close()
	dix, err := unitindex.Open(c.String("dense-units"), unitindex.Options{Sizes: sizes, Embedder: emb, Expert: "dense"})
	if err != nil {
		return err
	}
	defer dix.Close()
	if err := unitindex.SameUnits(bix.Table, dix.Table); err != nil {
		return err
	}
	env := methods.Env{Retrievers: bix.Lean(), Units: bix.Table}
	for k, r := range dix.Lean() {
		env.Retrievers[k] = r
	}
	ds, err := datasets.Load(c.Context, c.String("dataset"), datasets.LoadOptions{Limit: c.Int("limit")})
	if err != nil {
		return err
	}
	opt := methods.EvalOptions{Ks: ks}
	path := c.String("nq-oracle")
	if path == "" && ds.Layout == datasets.LayoutNQOpen {
		path = datasets.FindNQOracle()
	}
	if path != "" {
		oracle, err := datasets.ReadGoldOracle(c.Context, path)
		if err != nil {
			return err
		}
		fmt.Fprintf(c.App.ErrWriter, "gold passages from %s (%d questions)\n", path, len(oracle))
		opt.GoldPassages = func(ex datasets.Example) []datasets.Passage { return oracle[ex.Question] }
	}
	w := c.App.Writer
	for _, m := range ms {
		rep, err := methods.RetrievalEval(c.Context, m, env, ds.Examples, opt)
		if err != nil {
			return err
		}
		if c.Bool("json") {
			b, _ := json.Marshal(rep)
			fmt.Fprintf(w, "%s\n", b)
			continue
		}
		fmt.Fprintf(w, "%s on %s (%d questions, %.1f units per context): preprocessing p50 %.2f ms, p95 %.2f ms; in retrieval p50 %.2f ms; fusion p50 %.3f ms\n",
			m.Name(), ds.Name, rep.Questions, rep.MeanUnits, rep.PreprocessingP50, rep.PreprocessingP95, rep.RetrievalP50, rep.FusionP50)
		fmt.Fprintf(w, "  k  AR@k   AR@k(tokens)  gold recall  gold all  gold n\n")
		for _, r := range rep.Rows {
			fmt.Fprintf(w, "  %-2d %.3f  %.3f         %.3f        %.3f     %d\n", r.K, r.AR, r.ARTokens, r.GoldRecall, r.GoldAll, r.GoldExamples)
		}
	}
	return nil
}
