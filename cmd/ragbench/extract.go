package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/ragbench/ragbench/harness/extract"
	"github.com/ragbench/ragbench/harness/llm"
	"github.com/urfave/cli/v2"
)

// extractGenerator builds the generator of the LLM-prompted extractor from the command's connection
// flags (the llm client stack: backend, cache, accounting). It is a variable so that tests can
// substitute a fake generator.
var extractGenerator = func(c *cli.Context) (llm.Generator, func() error, error) {
	cfg := llm.Config{
		Backend:    c.String("llm-backend"),
		BaseURL:    c.String("base-url"),
		Model:      c.String("model"),
		APIKeyEnv:  c.String("api-key-env"),
		Timeout:    c.Duration("timeout"),
		MaxRetries: c.Int("max-retries"),
		Cache:      llm.CacheConfig{Path: c.String("cache")},
	}
	if m := c.String("cache-mode"); m != "" {
		mode, err := llm.ParseCacheMode(m)
		if err != nil {
			return nil, nil, usagef("--cache-mode: %v", err)
		}
		cfg.Cache.Mode = mode
	}
	cfg = cfg.Resolve(os.Getenv)
	if err := checkLLMFlags(cfg); err != nil {
		return nil, nil, err
	}
	if err := cfg.Validate(); err != nil {
		return nil, nil, usagef("%s", llmKeysAsFlags.Replace(err.Error()))
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
		UsageText: `ragbench extract --question "..." | --sentence "..." [--backend rule|llm [--templates DIR] [--prompt-format raw|chat|chatml] [--base-url URL --model NAME ...]] [--format text|json]`,
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
			&cli.StringFlag{Name: "prompt-format", Value: "raw", Usage: "llm backend: raw (completions), chat, or chatml (Qwen chat template in a raw prompt)"},
			formatFlags("text", "json")[0], formatFlags("text", "json")[1],
		}, extractLLMFlags()...),
		Action: runExtract,
	})
}

// extractResult is the JSON output of the extract command.
type extractResult struct {
	Entities []string          `json:"entities,omitempty"`
	Pairs    []extract.Triplet `json:"pairs,omitempty"`
	Triplets []extract.Triplet `json:"triplets,omitempty"`
	Backend  string            `json:"backend"`
}

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
		fmt.Fprintf(infoWriter(c), "note: --format %s is deprecated here; it is now --prompt-format %s\n", f, f)
		promptFormat = f
		c.Set("format", "text")
	}
	format, err := outputFormat(c, "text", "json")
	if err != nil {
		return err
	}
	cfg := extract.Config{Backend: c.String("backend"), Format: extract.Format(promptFormat)}
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
		cfg.Templates = templatesDir(c)
		if st, err := os.Stat(cfg.Templates); err == nil && st.IsDir() {
			cfg.Templates = filepath.Join(cfg.Templates, "prompt_templates.json")
		}
		if _, err := os.Stat(cfg.Templates); err != nil {
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
	res := extractResult{Backend: c.String("backend")}
	ctx := c.Context
	if q != "" {
		ents, err := ex.Entities(ctx, q)
		if err != nil {
			return err
		}
		pairs, err := ex.Triplets(ctx, q)
		if err != nil {
			return err
		}
		res.Entities, res.Pairs = ents, pairs
	} else {
		ts, err := ex.Triplets(ctx, s)
		if err != nil {
			return err
		}
		res.Triplets = ts
	}
	w := c.App.Writer
	if format == "json" {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(res)
	}
	clean := func(s string) string { return strings.NewReplacer("\t", " ", "\n", " ").Replace(s) }
	for _, e := range res.Entities {
		fmt.Fprintf(w, "entity\t%s\n", clean(e))
	}
	for _, t := range append(res.Pairs, res.Triplets...) {
		if t.IsPair() {
			fmt.Fprintf(w, "pair\t%s\t%s\n", clean(t.Head), clean(t.Relation))
		} else {
			fmt.Fprintf(w, "triple\t%s\t%s\t%s\n", clean(t.Head), clean(t.Relation), clean(t.Tail))
		}
	}
	return nil
}
