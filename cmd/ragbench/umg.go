package main

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/ragbench/ragbench/internal/cliutil"

	"github.com/ragbench/ragbench/datasets"
	"github.com/ragbench/ragbench/harness/corpus"
	"github.com/ragbench/ragbench/harness/retrieval/dense"
	"github.com/ragbench/ragbench/harness/retrieval/unitindex"
	"github.com/ragbench/ragbench/harness/runner"
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
			&cli.StringFlag{Name: "granularities", Value: "2,4,8,16,32,long", Usage: "unit sizes to open (and umg/umgp's granularities, long excepted); long: LongRAG's units"},
			&cli.StringFlag{Name: "scope", Value: "pool", Usage: "retrieve over the pool of all documents, or within each question's own document (document)"},
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
	sizes, err := parseSizes(c.String("granularities"))
	if err != nil || len(sizes) == 0 {
		return usagef("--granularities: want sizes like 2,4,8,16,32,long")
	}
	scope := c.String("scope")
	if scope != methods.ScopePool && scope != methods.ScopeDocument {
		return usagef("--scope: want pool or document, not %q", scope)
	}
	ks, err := cliutil.ParseInts(c.String("k"))
	if err != nil || len(ks) == 0 {
		return usagef("--k: want cut-offs like 1,3,5")
	}
	all := map[string]map[string]any{}
	if s := c.String("settings"); s != "" {
		if err := json.Unmarshal([]byte(s), &all); err != nil {
			return usagef("--settings: %v", err)
		}
	}
	names := strings.Split(c.String("methods"), ",")
	for _, n := range names {
		n = strings.TrimSpace(n)
		if all[n] == nil {
			all[n] = map[string]any{}
		}
		if _, set := all[n]["scope"]; !set {
			all[n]["scope"] = scope
		}
	}
	ms, err := methods.NewContexters(names, all, sizes)
	if err != nil {
		return usagef("%v", err)
	}
	var emb dense.Embedder
	if c.String("embed-model") != "" {
		if emb, err = dense.NewOpenAI(c.Context, dense.OpenAIConfig{BaseURL: c.String("embed-url"), Model: c.String("embed-model"), Preset: c.String("embed-preset")}); err != nil {
			return err
		}
	}
	units, err := unitindex.OpenPair(c.String("bm25-units"), c.String("dense-units"), sizes, emb)
	if err != nil {
		return err
	}
	defer units.Close()
	env := methods.Env{Retrievers: units.Lean(), Units: units.BM25.Table}
	ds, err := datasets.Load(c.Context, c.String("dataset"), datasets.LoadOptions{Limit: c.Int("limit")})
	if err != nil {
		return err
	}
	oracle, path, err := datasets.GoldOracle(c.Context, c.String("nq-oracle"), ds.Layout)
	if err != nil {
		return err
	}
	if path != "" {
		fmt.Fprintf(c.App.ErrWriter, "gold passages from %s (%d questions)\n", path, len(oracle))
	}
	opt := runner.ContextOptions{Ks: ks, Gold: runner.UnitGold(oracle)}
	w := c.App.Writer
	for _, m := range ms {
		rep, err := runner.EvalContexts(c.Context, m, env, ds.Examples, opt)
		if err != nil {
			return err
		}
		if c.Bool("json") {
			b, _ := json.Marshal(rep)
			fmt.Fprintf(w, "%s\n", b)
			continue
		}
		rep.WriteText(w, ds.Name)
	}
	return nil
}

// parseSizes reads unit sizes like 2,4,8,16,32,long (corpus.ParseSize each).
func parseSizes(s string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		g, err := corpus.ParseSize(strings.TrimSpace(f))
		if err != nil {
			return nil, err
		}
		out = append(out, g)
	}
	return out, nil
}
