package main

import (
	"fmt"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/ragbench/ragbench/internal/cliutil"

	"github.com/ragbench/ragbench/datasets"
	"github.com/ragbench/ragbench/harness/extract"
	"github.com/ragbench/ragbench/harness/runner"
	"github.com/ragbench/ragbench/methods"
	"github.com/ragbench/ragbench/methods/prompts"
)

func init() {
	register(&cli.Command{
		Name:      "answer",
		Usage:     "answer one question with a RAG method and print the answer and its decision trace",
		ArgsUsage: " ",
		Description: `Single-question mode, for debugging one case: runs --method on --question with the generator of the
llm flags (--backend offline for the offline reader) and a retriever over --index (an index directory
built by 'ragbench index build') or --corpus (a BM25 index is built in a temporary directory), then
prints the answer, the counters, the retrievals and the trace, one line per event with what it measured
indented beneath. --dataset names the dataset the question comes from, which chooses the authors'
exemplars and answer-extraction rule (2wikimultihopqa, hotpotqa; others get neither). --set KEY=VALUE
sets a method setting (repeatable; VALUE is read as JSON when it parses, else as a string). Methods: ` + strings.Join(methods.Names(), ", ") + `.`,
		Flags: append(llmFlags(),
			&cli.StringFlag{Name: "method", Aliases: []string{"m"}, Usage: "method name (required)"},
			&cli.StringFlag{Name: "question", Aliases: []string{"q"}, Usage: "the question (required)"},
			&cli.StringFlag{Name: "dataset", Aliases: []string{"d"}, Usage: "dataset the question belongs to (exemplars and answer extraction)"},
			&cli.StringSliceFlag{Name: "set", Usage: "method setting KEY=VALUE (repeatable)"},
			&cli.StringFlag{Name: "index", Usage: "index directory to retrieve from (bm25 or dense)"},
			&cli.StringFlag{Name: "corpus", Usage: "corpus file to build a BM25 index over (DPR TSV, BEIR JSONL, parquet)"},
			&cli.StringFlag{Name: "templates", Usage: "directory with the QuCo-RAG exemplars.json and prompt_templates.json (default $RAGBENCH_REFERENCE[/quco-rag], else " + defaultTemplates + ")"},
			&cli.StringFlag{Name: "ngram-index", Usage: "n-gram index directory for corpus statistics (QuCo-RAG); with --corpus one is built over it"},
			&cli.StringFlag{Name: "extractor", Value: "rule", Usage: "entity and triplet extractor: rule, or llm (the authors' prompts, asked of the generator's model and server through a client of its own, as in a run)"},
			&cli.BoolFlag{Name: "json", Usage: "print the prediction as JSON instead of the readable trace"},
		),
		Action: answerAction,
	})
}

func answerAction(c *cli.Context) error {
	if c.NArg() > 0 {
		return usagef("answer takes no arguments, got %q", c.Args().Slice())
	}
	if c.String("method") == "" || strings.TrimSpace(c.String("question")) == "" {
		return usagef("answer needs --method and --question")
	}
	if c.IsSet("index") && c.IsSet("corpus") {
		return usagef("give --index or --corpus, not both")
	}
	settings, err := methods.ParseSettings(c.StringSlice("set"))
	if err != nil {
		return usagef("--set %v", err)
	}
	m, err := methods.New(c.String("method"), settings)
	if err != nil {
		return usagef("%v", err)
	}
	cfg, err := llmConfig(c)
	if err != nil {
		return err
	}
	set, err := prompts.Load(templatesDir(c))
	if err != nil {
		return fmt.Errorf("%w (point --templates or $RAGBENCH_REFERENCE at the QuCo-RAG reference directory)", err)
	}
	ecfg := runner.EnvConfig{LLM: cfg, Prompts: set, Index: c.String("index"), Corpus: c.String("corpus"),
		NgramIndex: c.String("ngram-index"), Extract: extract.Config{Backend: c.String("extractor")}, TemplatesDir: templatesDir(c)}
	if err := ecfg.Validate(); err != nil {
		return usagef("--extractor: %v", err)
	}
	env, closeEnv, err := runner.BuildEnv(c.Context, ecfg)
	if err != nil {
		return err
	}
	defer closeEnv()

	ex := datasets.Example{ID: "question", Dataset: c.String("dataset"), Question: strings.TrimSpace(c.String("question"))}
	if err := methods.CheckEnv(m, env); err != nil {
		return componentHint(err)
	}
	ienv, meter := methods.Instrument(env)
	p, runErr := m.Answer(c.Context, ienv, ex)
	meter.Fill(&p)
	if c.Bool("json") {
		if err := cliutil.WriteJSON(c.App.Writer, p); err != nil {
			return err
		}
	} else if err := methods.WriteAnswer(c.App.Writer, m, env.GeneratorName, ex, p); err != nil {
		return err
	}
	return componentHint(runErr)
}

// componentHint turns a method's "needs a retriever" (or counter) into a usage error naming the flags
// that give it.
func componentHint(err error) error {
	if err == nil {
		return nil
	}
	for comp, flags := range map[string]string{"a retriever": "--corpus FILE or --index DIR", "a counter": "--ngram-index DIR"} {
		if strings.Contains(err.Error(), "needs "+comp) {
			return usagef("%v: give %s", err, flags)
		}
	}
	return err
}
