package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/ragbench/ragbench/internal/cliutil"
	"github.com/ragbench/ragbench/internal/pathcheck"

	"github.com/ragbench/ragbench/datasets"
	"github.com/ragbench/ragbench/harness/llm"
	"github.com/ragbench/ragbench/harness/runner"
	"github.com/ragbench/ragbench/methods"
	"github.com/ragbench/ragbench/methods/prompts"
	"github.com/ragbench/ragbench/metrics"
)

// defaultTemplates is where the QuCo-RAG reference files are looked for without --templates or
// $RAGBENCH_REFERENCE.
const defaultTemplates = "../shared/reference/quco-rag"

func init() {
	register(&cli.Command{
		Name:      "predict",
		Usage:     "answer a dataset's questions with an LLM (or the offline reader) in the gold-context setting; write predictions JSONL for `score`",
		ArgsUsage: " ",
		Description: `Gold-context reading: each example's own shipped context (HotpotQA/2Wiki paragraphs, the PubMedQA
abstract, the nq_longdoc document) goes into the QuCo-RAG authors' few-shot chain-of-thought prompt,
built from their exemplars.json and prompt_templates.json loaded from --templates (the 2Wiki and
HotpotQA exemplar sets; none for the other datasets). NQ-open ships no context: it is closed-book,
unless --oracle gives a Lost-in-the-Middle style oracle file (nq-open-oracle.jsonl.gz) matched by
question text.

Writes one JSONL record per example, in dataset order: id, prediction (the answer extracted with the
QuCo-RAG rule of the dataset), raw_output, backend, model, usage, latency_ms, cached, error. A failed
example is recorded with its error and the run goes on; the exit status is 1 if any failed. With
--out FILE holding records already, the examples done are skipped and new records appended (failed
ones are retried). Score the output with: ragbench score --dataset SPEC --predictions FILE.`,
		Flags: append(withDataset(llmFlags()...),
			templatesDirFlag(),
			&cli.StringFlag{Name: "exemplars", Value: "auto", Usage: "exemplar set: auto (the dataset's own, if the authors have one), none, or a set name in exemplars.json"},
			&cli.IntFlag{Name: "shots", Value: -1, Usage: "exemplars per prompt (-1: the authors' count for the set; 0: none)"},
			&cli.StringFlag{Name: "oracle", Usage: "oracle passages for examples without context, by question text (JSONL[.gz] {question, ctxs:[{title,text}]})"},
			&cli.StringFlag{Name: "extract", Value: "auto", Usage: "answer extraction rule: auto (the QuCo-RAG rule of the dataset; its 2Wiki rule elsewhere), or one of " + strings.Join(metrics.AnswerRules(), ", ")},
			&cli.IntFlag{Name: "max-tokens", Value: 256, Usage: "maximum completion tokens"},
			&cli.StringSliceFlag{Name: "stop", Value: cli.NewStringSlice(`\n`), Usage: "stop sequence (repeatable; \\n is a newline)"},
			&cli.IntFlag{Name: "workers", Aliases: []string{"j"}, Value: 4, Usage: "concurrent generation calls (requests in flight)"},
			&cli.StringFlag{Name: "out", Aliases: []string{"o"}, Usage: "predictions JSONL (- or absent: stdout); an existing file is resumed if it was made with the same settings"},
			&cli.BoolFlag{Name: "force", Usage: "resume --out even if it was made with other settings (model, prompts, shots, extraction)"},
		),
		Action: predictAction,
	})
}

// templatesDirFlag is --templates, the QuCo-RAG reference directory, for every command that builds
// prompts.
func templatesDirFlag() cli.Flag {
	return &cli.StringFlag{Name: "templates", Usage: "`DIR` with the QuCo-RAG exemplars.json and prompt_templates.json (default $RAGBENCH_REFERENCE[/quco-rag], else " + defaultTemplates + ")"}
}

// templatesDir resolves --templates.
func templatesDir(c *cli.Context) string {
	if d := c.String("templates"); d != "" {
		return d
	}
	if d := os.Getenv("RAGBENCH_REFERENCE"); d != "" {
		if st, err := os.Stat(filepath.Join(d, "quco-rag")); err == nil && st.IsDir() {
			return filepath.Join(d, "quco-rag")
		}
		return d
	}
	return defaultTemplates
}

func predictAction(c *cli.Context) error {
	if c.NArg() > 0 {
		return usagef("predict takes no arguments, got %q", c.Args().Slice())
	}
	if c.String("dataset") == "" {
		return usagef("predict needs --dataset")
	}
	if c.Int("limit") < 0 || c.Int("sample") < 0 {
		return usagef("--limit and --sample must not be negative")
	}
	if c.Int("limit") > 0 && c.Int("sample") > 0 {
		return usagef("give --limit or --sample, not both")
	}
	if c.Int("workers") < 1 {
		return usagef("--workers must be at least 1")
	}
	if c.Int("shots") < -1 {
		return usagef("--shots must be -1 (the authors' count), 0 or more")
	}
	if c.Int("max-tokens") < 1 {
		return usagef("--max-tokens must be at least 1")
	}
	stderr := cliutil.InfoWriter(c)
	cfg, err := llmConfig(c)
	if err != nil {
		return err
	}

	set, err := prompts.Load(templatesDir(c))
	if err != nil {
		return fmt.Errorf("%w (point --templates or $RAGBENCH_REFERENCE at the QuCo-RAG reference directory)", err)
	}
	ds, examples, err := loadSelected(c)
	if err != nil {
		return err
	}

	exSet := prompts.ResolveExemplars(c.String("exemplars"), ds.Name)
	builder, err := set.Builder(prompts.Options{Exemplars: exSet, Shots: c.Int("shots")})
	if err != nil {
		return usagef("%v", err)
	}
	ext, err := metrics.ResolveAnswerRule(c.String("extract"), ds.Name, metrics.ExtractQuCo2Wiki)
	if err != nil {
		return usagef("--extract: %v", err)
	}
	var oracle map[string][]datasets.Passage
	if p := c.String("oracle"); p != "" {
		if oracle, err = datasets.ReadOracle(c.Context, p); err != nil {
			return err
		}
	}
	examples, oracled, noContext := methods.GoldContexts(examples, oracle)

	model, label := runner.GeneratorLabel(cfg)
	// An existing --out file is resumed: the examples done are skipped, the records appended.
	if runner.ToFile(c.String("out")) {
		if err := pathcheck.Distinct(c.String("out"), ds.Files...); err != nil {
			return usagef("--out: %v", err)
		}
	}
	out, err := runner.OpenPredictions(c.String("out"), c.App.Writer, examples, runner.OutputOptions{Dataset: ds, Force: c.Bool("force"),
		Identity: func() (runner.Identity, error) {
			hash, err := set.Hash()
			return runner.Identity{"backend": cfg.Backend, "model": model,
				"dataset": ds.Name, "exemplars": exSet, "shots": fmt.Sprint(builder.Shots()), "prompts_sha256": hash,
				"extract": string(ext), "max_tokens": fmt.Sprint(c.Int("max-tokens")), "chat": fmt.Sprint(c.Bool("chat")),
				"stop": strings.Join(c.StringSlice("stop"), "\x1f"), "oracle": c.String("oracle")}, err
		}})
	if err != nil {
		return err
	}
	defer out.Close()
	out.WriteResumed(stderr, len(examples))
	todo := out.Remaining(examples)

	g, err := llm.New(cfg)
	if err != nil {
		return err
	}
	defer g.Close()
	fmt.Fprintf(stderr, "predict: %s: %d examples (%d with no context%s), %s, %d shot(s) from %s, extraction %s, %d worker(s)\n",
		ds.Name, len(examples), noContext, oracleNote(c.String("oracle"), oracled), label, builder.Shots(), set.Dir, ext, c.Int("workers"))

	m, err := methods.New("gold-context", map[string]any{"exemplars": exSet, "shots": c.Int("shots"), "extract": string(ext),
		"max_tokens": c.Int("max-tokens"), "stop": llm.ParseStops(c.StringSlice("stop")), "chat": c.Bool("chat")})
	if err != nil {
		return err
	}
	progress, done := cliutil.ProgressWriter(c, true)
	st, runErr := runner.Stream(c.Context, todo, runner.StreamOptions{
		Method:   m,
		Env:      methods.Env{Generator: g, GeneratorName: label, Prompts: set},
		Dataset:  ds.Name,
		Workers:  c.Int("workers"),
		Progress: progress,
		Label:    "predict " + ds.Name,
	}, runner.WritePredictions(out.W, cfg.Backend, model))
	done()
	fmt.Fprintf(stderr, "predict: wrote %d record(s) to %s in %v (%s); %d failed\n", st.Written, out.Where(), st.Elapsed.Round(1e6), label, st.Failed)
	g.WriteCacheStats(stderr, cfg.Cache)
	if runErr != nil {
		return fmt.Errorf("predict stopped after %d of %d: %w (rerun with the same --out to resume)", st.Written, len(todo), runErr)
	}
	if st.Failed > 0 {
		return fmt.Errorf("%d of %d example(s) failed; their records carry the error, the first %s (rerun with the same --out to retry them)", st.Failed, len(todo), st.FirstError)
	}
	return nil
}

func oracleNote(path string, n int) string {
	if path == "" {
		return ""
	}
	return fmt.Sprintf("; %d given oracle passages from %s", n, path)
}
