package main

import (
	"errors"
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/ragbench/ragbench/harness/extract"
	"github.com/ragbench/ragbench/harness/llm"

	"github.com/ragbench/ragbench/internal/cliutil"
)

// extractGenerator builds the generator of the LLM-prompted extractor from the command's connection
// flags (the llm client stack: backend, cache, accounting). It is a variable so that tests can
// substitute a fake generator.
var extractGenerator = func(c *cli.Context) (llm.Generator, func() error, error) {
	cfg, err := checkedLLM(c, llmConnection(c, "llm-backend"), false)
	if err != nil {
		return nil, nil, err
	}
	client, err := llm.New(cfg)
	if err != nil {
		return nil, nil, err
	}
	return client, client.Close, nil
}

// extractLLMFlags are the llm connection flags, with the backend renamed --llm-backend (--backend
// picks the extractor) and without --chat (--prompt-format replaces it).
func extractLLMFlags() []cli.Flag {
	out := []cli.Flag{&cli.StringFlag{Name: "llm-backend", Value: "openai", Usage: "llm backend of the llm extractor: openai (any OpenAI-compatible server)"}}
	for _, f := range llmFlags() {
		if n := f.Names()[0]; n != "backend" && n != "chat" {
			out = append(out, f)
		}
	}
	return out
}

func init() {
	register(&cli.Command{
		Name:      "extract",
		Usage:     "extract the entities of a question or the knowledge triples of a sentence",
		UsageText: `ragbench extract --question "..." | --sentence "..." [--backend rule|llm [--templates DIR] [--prompt-format chat|raw|chatml] [--parse authors|authors-corrected|lenient] [--base-url URL --model NAME ...]] [--format text|json]`,
		Description: "With --question, prints the question's entities and its (head, relation) pairs; with --sentence, its " +
			"(head, relation, tail) triples. One tab-separated record per line (entity, pair or triple), or JSON with --format json.\n" +
			"The rule backend is offline (capitalised spans, quoted titles, numbers, dates, subject-verb-object patterns). " +
			"The llm backend fills the entity_extraction_prompt and entity_extraction_prompt_for_question templates of a " +
			"prompt_templates.json in the QuCo-RAG reference directory (--templates, as for predict) and parses the model's nested lists.",
		Flags: append([]cli.Flag{
			&cli.StringFlag{Name: "question", Aliases: []string{"q"}, Usage: "a question: print its entities and (head, relation) pairs"},
			&cli.StringFlag{Name: "sentence", Aliases: []string{"s"}, Usage: "a sentence: print its (head, relation, tail) triples"},
			&cli.StringFlag{Name: "backend", Value: "rule", Usage: "rule (offline) or llm"},
			templatesDirFlag(),
			&cli.StringFlag{Name: "prompt-format", Value: "chat", Usage: "llm backend: chat (the model's chat template, as the authors call their extractor), raw (completions), or chatml (Qwen chat template in a raw prompt)"},
			&cli.StringFlag{Name: "parse", Value: "authors", Usage: "llm backend: how the answer is read: authors (their parse_case), authors-corrected or lenient"},
			cliutil.FormatFlags("text", "json")[0], cliutil.FormatFlags("text", "json")[1],
		}, extractLLMFlags()...),
		Action: runExtract,
	})
}

// extractResult is the JSON output of the extract command.
type extractResult = extract.Result

func runExtract(c *cli.Context) error {
	q, s := c.String("question"), c.String("sentence")
	if c.Args().Len() > 0 {
		return usagef("extract: unexpected arguments %q; pass the text with --question or --sentence", c.Args().Slice())
	}
	if (q == "") == (s == "") {
		return usagef("extract: give exactly one of --question and --sentence")
	}
	promptFormat := c.String("prompt-format")
	if f := c.String("format"); f == "raw" || f == "chat" || f == "chatml" { // the old meaning of --format
		if c.IsSet("prompt-format") {
			return usagef("extract: --format %s is the old name of --prompt-format; give --prompt-format only", f)
		}
		fmt.Fprintf(cliutil.InfoWriter(c), "note: --format %s is deprecated here; it is now --prompt-format %s\n", f, f)
		promptFormat = f
		c.Set("format", "text")
	}
	format, err := cliutil.OutputFormat(c, "text", "json")
	if err != nil {
		return err
	}
	cfg := extract.Config{Backend: c.String("backend"), Format: extract.Format(promptFormat), Parse: c.String("parse")}
	var gen llm.Generator
	switch cfg.Backend {
	case "rule", "rules":
	case "llm":
		switch cfg.Format {
		case extract.Raw, extract.Chat, extract.ChatML:
		default:
			return usagef("extract: unknown --prompt-format %q (want raw, chat or chatml)", cfg.Format)
		}
		// --templates is the reference directory, as for predict; a prompt_templates.json file is
		// accepted too.
		if cfg.Templates, err = extract.TemplatesFile(templatesDir(c)); err != nil {
			return fmt.Errorf("load templates: %w (point --templates or $RAGBENCH_REFERENCE at the QuCo-RAG reference directory)", err)
		}
		g, closeGen, err := extractGenerator(c)
		if err != nil {
			var u usageError
			if errors.As(err, &u) {
				return err
			}
			return fmt.Errorf("extract: %w", err)
		}
		defer closeGen()
		gen = g
	default:
		return usagef("extract: unknown --backend %q (want rule or llm)", cfg.Backend)
	}
	ex, err := extract.New(cfg, gen)
	if err != nil {
		return err
	}
	var res extractResult
	if q != "" {
		res, err = extract.ExtractQuestion(c.Context, ex, q)
	} else {
		res, err = extract.ExtractSentence(c.Context, ex, s)
	}
	if err != nil {
		return err
	}
	res.Backend = c.String("backend")
	if format == "json" {
		return cliutil.WriteJSON(c.App.Writer, res)
	}
	res.WriteText(c.App.Writer)
	return nil
}
