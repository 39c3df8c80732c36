package main

import (
	"encoding/json"
	"fmt"
	"github.com/ragbench/ragbench/internal/pathcheck"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/ragbench/ragbench/datasets"
	"github.com/ragbench/ragbench/harness/llm"
	"github.com/ragbench/ragbench/harness/llm/offline"
	"github.com/ragbench/ragbench/harness/predict"
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
	stderr := infoWriter(c)
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

	exSet := c.String("exemplars")
	switch exSet {
	case "auto":
		exSet = prompts.ExemplarSet(ds.Name)
	case "none":
		exSet = ""
	}
	builder, err := set.Builder(prompts.Options{Exemplars: exSet, Shots: c.Int("shots")})
	if err != nil {
		return usagef("%v", err)
	}
	ext := metrics.AnswerRule(c.String("extract"))
	if ext == "auto" {
		if ext = metrics.DefaultAnswerRule(ds.Name); ext == metrics.ExtractNone {
			ext = metrics.ExtractQuCo2Wiki
		}
	} else if ext, err = metrics.ParseAnswerRule(string(ext)); err != nil {
		return usagef("--extract: %v", err)
	}

	passages := make([][]string, len(examples))
	noContext := 0
	var oracle map[string][]datasets.Passage
	if p := c.String("oracle"); p != "" {
		if oracle, err = datasets.ReadOracle(c.Context, p); err != nil {
			return err
		}
	}
	oracled := 0
	for i, ex := range examples {
		if len(ex.Contexts) == 0 && oracle != nil {
			if ps, ok := oracle[ex.Question]; ok {
				ex.Contexts = ps
				oracled++
			}
		}
		passages[i] = prompts.Passages(ex)
		if len(passages[i]) == 0 {
			noContext++
		}
	}

	model := cfg.Model
	if cfg.Backend == "offline" {
		model = offline.Name
	}
	// An existing --out file is resumed: the examples done are skipped, the records appended.
	outPath := c.String("out")
	var w io.Writer = c.App.Writer
	idx := make([]int, len(examples)) // the examples to run
	for i := range idx {
		idx[i] = i
	}
	if outPath != "" && outPath != "-" {
		all := make(map[string]bool, len(ds.Examples))
		for _, ex := range ds.Examples {
			all[ex.ID] = true
		}
		selected := make([]string, len(examples))
		for i, ex := range examples {
			selected[i] = ex.ID
		}
		if err := pathcheck.Distinct(outPath, ds.Files...); err != nil {
			return usagef("--out: %v", err)
		}
		hash, err := set.Hash()
		if err != nil {
			return err
		}
		settings := predict.Settings{"backend": cfg.Backend, "model": model,
			"dataset": ds.Name, "exemplars": exSet, "shots": fmt.Sprint(builder.Shots()), "prompts_sha256": hash,
			"extract": string(ext), "max_tokens": fmt.Sprint(c.Int("max-tokens")), "chat": fmt.Sprint(c.Bool("chat")),
			"stop": strings.Join(c.StringSlice("stop"), "\x1f"), "oracle": c.String("oracle")}
		res, err := predict.OpenResume(outPath, selected, func(id string) bool { return all[id] }, ds.Name,
			predict.ResumeOptions{Settings: settings, Force: c.Bool("force")})
		if err != nil {
			return fmt.Errorf("predict: %w", err)
		}
		defer res.Close()
		w, idx = res.File, res.Todo
		if res.Records > 0 {
			fmt.Fprintf(stderr, "predict: resuming %s: %d record(s) there (%d failed, to be retried; written by %s); %d of %d selected examples done, %d to go, appending\n",
				outPath, res.Records, res.Failed, strings.Join(res.Backends, ", "), len(examples)-len(idx), len(examples), len(idx))
		}
	}
	ids := make([]string, len(idx))
	for i, j := range idx {
		ids[i] = examples[j].ID
	}

	g, err := llm.New(cfg)
	if err != nil {
		return err
	}
	defer g.Close()
	label := describeBackend(cfg)
	switch {
	case cfg.Backend == "offline":
		label = offline.Name
	case model != "":
		label += ", model " + model
	}
	fmt.Fprintf(stderr, "predict: %s: %d examples (%d with no context%s), %s, %d shot(s) from %s, extraction %s, %d worker(s)\n",
		ds.Name, len(examples), noContext, oracleNote(c.String("oracle"), oracled), label, builder.Shots(), set.Dir, ext, c.Int("workers"))

	seed := 0
	req := llm.Request{Endpoint: llm.Completions, MaxTokens: c.Int("max-tokens"), Seed: &seed}
	if c.Bool("chat") {
		req.Endpoint = llm.Chat
	}
	for _, s := range c.StringSlice("stop") {
		req.Stop = append(req.Stop, strings.ReplaceAll(s, `\n`, "\n"))
	}
	progress, done := progressWriter(c, true)
	opts := predict.Options{
		Generator: g,
		Request:   req,
		Prompt: func(i int) (string, error) {
			ex := examples[idx[i]]
			return builder.Build(ex.Question, passages[idx[i]]), nil
		},
		Extract:  ext.Extract,
		Backend:  cfg.Backend,
		Model:    model,
		Workers:  c.Int("workers"),
		Progress: progress,
		Label:    "predict " + ds.Name,
	}
	st, runErr := predict.Run(c.Context, ids, opts, func(r predict.Record) error {
		b, err := json.Marshal(r)
		if err != nil {
			return err
		}
		_, err = w.Write(append(b, '\n'))
		return err
	})
	done()
	where := "stdout"
	if outPath != "" && outPath != "-" {
		where = outPath
	}
	fmt.Fprintf(stderr, "predict: wrote %d record(s) to %s in %v (%s); %d failed\n", st.Written, where, st.Elapsed.Round(1e6), label, st.Failed)
	if g.Cache != nil {
		s := g.Cache.Stats()
		fmt.Fprintf(stderr, "cache %s (%s): %d hit(s), %d miss(es), %d write(s)\n", cfg.Cache.Path, cfg.Cache.Mode, s.Hits, s.Misses, s.Writes)
	}
	if runErr != nil {
		return fmt.Errorf("predict stopped after %d of %d: %w (rerun with the same --out to resume)", st.Written, len(ids), runErr)
	}
	if st.Failed > 0 {
		return fmt.Errorf("%d of %d example(s) failed; their records carry the error (rerun with the same --out to retry them)", st.Failed, len(ids))
	}
	return nil
}

func oracleNote(path string, n int) string {
	if path == "" {
		return ""
	}
	return fmt.Sprintf("; %d given oracle passages from %s", n, path)
}
