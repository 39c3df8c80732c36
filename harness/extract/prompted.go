package extract

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"sync/atomic"

	"github.com/ragbench/ragbench/harness/llm"
)

// The keys of the extraction templates in a prompt_templates.json file.
const (
	// SentenceKey names the template for triples of a sentence (pairs for a question).
	SentenceKey = "entity_extraction_prompt"
	// QuestionKey names the template for the entities of a question.
	QuestionKey = "entity_extraction_prompt_for_question"
)

// Templates are the two extraction prompts. Each holds exactly one "{}" placeholder, which is replaced
// by the sentence or question (Python str.format style, as in the authors' file).
type Templates struct {
	// Sentence is the prompt for Triplets.
	Sentence string
	// Question is the prompt for Entities.
	Question string
}

// Validate checks that each template has exactly one "{}" placeholder.
func (t Templates) Validate() error {
	for _, c := range []struct{ key, s string }{{SentenceKey, t.Sentence}, {QuestionKey, t.Question}} {
		if n := strings.Count(c.s, "{}"); n != 1 {
			return fmt.Errorf("template %s has %d {} placeholders, want 1", c.key, n)
		}
	}
	return nil
}

// LoadTemplates reads the extraction templates from a JSON object file in the format of the QuCo-RAG
// authors' prompt_templates.json; other keys in the file are ignored.
func LoadTemplates(path string) (Templates, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return Templates{}, fmt.Errorf("load templates: %w", err)
	}
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(data, &raw); err != nil {
		return Templates{}, fmt.Errorf("load templates %s: %w", path, err)
	}
	get := func(key string) (string, error) {
		v, ok := raw[key]
		if !ok {
			return "", fmt.Errorf("load templates %s: key %q missing", path, key)
		}
		var s string
		if err := json.Unmarshal(v, &s); err != nil {
			return "", fmt.Errorf("load templates %s: key %q is not a string: %w", path, key, err)
		}
		return s, nil
	}
	var t Templates
	if t.Sentence, err = get(SentenceKey); err != nil {
		return Templates{}, err
	}
	if t.Question, err = get(QuestionKey); err != nil {
		return Templates{}, err
	}
	if err := t.Validate(); err != nil {
		return Templates{}, fmt.Errorf("load templates %s: %w", path, err)
	}
	return t, nil
}

// Format selects how Prompted sends a filled template to the generator.
type Format string

// The formats.
const (
	// Raw sends the filled template as a raw /v1/completions prompt (the few-shot setting).
	Raw Format = "raw"
	// Chat sends it as the user message of a /v1/chat/completions request; the server applies the
	// model's chat template.
	Chat Format = "chat"
	// ChatML renders the ChatML chat template of Qwen2.5 models (the authors' distilled
	// QuCo-extractor-0.5B is a Qwen2.5-0.5B fine-tune) into a raw completions prompt, for servers that
	// expose only /v1/completions.
	ChatML Format = "chatml"
)

// DefaultChatMLSystem is the system message the Qwen2.5 chat template inserts when none is given.
const DefaultChatMLSystem = "You are Qwen, created by Alibaba Cloud. You are a helpful assistant."

// PromptedOptions configure a Prompted extractor.
type PromptedOptions struct {
	// Format is Raw (default), Chat or ChatML.
	Format Format
	// System is an optional system message (Chat) or the ChatML system message (default
	// DefaultChatMLSystem).
	System string
	// MaxTokens bounds the output (default 256).
	MaxTokens int
	// Stop sequences; the default for Raw is a blank line and the next example header, none otherwise.
	Stop []string
	// Parse is how the answer is read: ParseAuthors (default; the authors' parse_case and what their
	// code keeps) or ParseLenient (ParseList; every string of every row is an entity).
	Parse string
}

// Prompted is the LLM-prompted Extractor. It is safe for concurrent use if its Generator is.
type Prompted struct {
	gen  llm.Generator
	tmpl Templates
	opts PromptedOptions
	// warnings counts malformed rows that were skipped.
	warnings atomic.Int64
}

// NewPrompted returns a Prompted extractor asking gen with the templates.
func NewPrompted(gen llm.Generator, tmpl Templates, opts PromptedOptions) (*Prompted, error) {
	if gen == nil {
		return nil, fmt.Errorf("prompted extractor: nil generator")
	}
	if err := tmpl.Validate(); err != nil {
		return nil, fmt.Errorf("prompted extractor: %w", err)
	}
	switch opts.Format {
	case "":
		opts.Format = Raw
	case Raw, Chat, ChatML:
	default:
		return nil, fmt.Errorf("prompted extractor: unknown format %q (want raw, chat or chatml)", opts.Format)
	}
	if opts.MaxTokens <= 0 {
		opts.MaxTokens = 256
	}
	switch opts.Parse {
	case "":
		opts.Parse = ParseAuthors
	case ParseAuthors, ParseAuthorsCorrected, ParseLenient:
	default:
		return nil, fmt.Errorf("prompted extractor: unknown parse %q (want %s, %s or %s)", opts.Parse, ParseAuthors, ParseAuthorsCorrected, ParseLenient)
	}
	if opts.Stop == nil && opts.Format == Raw {
		opts.Stop = []string{"\n\n", "\nSentence:", "**Example"}
	}
	if opts.Format == ChatML && opts.System == "" {
		opts.System = DefaultChatMLSystem
	}
	return &Prompted{gen: gen, tmpl: tmpl, opts: opts}, nil
}

// Warnings returns how many malformed output rows (a triple row of the wrong length, an empty entity)
// were skipped so far.
func (p *Prompted) Warnings() int64 { return p.warnings.Load() }

// Request builds the generation request for a filled template.
func (p *Prompted) Request(filled string) llm.Request {
	req := llm.Request{MaxTokens: p.opts.MaxTokens, Stop: p.opts.Stop}
	switch p.opts.Format {
	case Chat:
		req.Endpoint = llm.Chat
		if p.opts.System != "" {
			req.Messages = append(req.Messages, llm.Message{Role: "system", Content: p.opts.System})
		}
		req.Messages = append(req.Messages, llm.Message{Role: "user", Content: filled})
	case ChatML:
		req.Endpoint = llm.Completions
		req.Prompt = "<|im_start|>system\n" + p.opts.System + "<|im_end|>\n<|im_start|>user\n" + filled +
			"<|im_end|>\n<|im_start|>assistant\n"
		req.Stop = append(append([]string(nil), req.Stop...), "<|im_end|>")
	default:
		req.Endpoint = llm.Completions
		req.Prompt = filled
	}
	return req
}

func (p *Prompted) generate(ctx context.Context, tmpl, input string) (string, error) {
	input = strings.TrimSpace(input)
	filled := strings.Replace(tmpl, "{}", input, 1)
	resp, err := p.gen.Generate(ctx, p.Request(filled))
	if err != nil {
		return "", fmt.Errorf("extract %q: %w", input, err)
	}
	return resp.Text, nil
}

func (p *Prompted) ask(ctx context.Context, tmpl, input string) ([][]string, error) {
	out, err := p.generate(ctx, tmpl, input)
	if err != nil {
		return nil, err
	}
	rows, err := ParseList(out)
	if err != nil {
		return nil, fmt.Errorf("extract %q: %w", strings.TrimSpace(input), err)
	}
	return rows, nil
}

// askCase asks and reads the answer as the authors do. An answer their code cannot read (parse_case
// raises) gives no items and counts a warning, as their code extracts nothing then.
func (p *Prompted) askCase(ctx context.Context, tmpl, input string) ([]CaseItem, error) {
	out, err := p.generate(ctx, tmpl, input)
	if err != nil {
		return nil, err
	}
	items, err := ParseCase(authorsOutput(out))
	if err != nil {
		p.warnings.Add(1)
		return nil, nil
	}
	return items, nil
}

// Entities asks the question template. Under ParseAuthors it returns item[0] of each item of the
// answer, as the authors' code keeps it: the first element of a list item, the first character of a
// string item (["Alpha Beta"] gives "A"); an empty list item or a nested list first makes their code
// extract nothing (a warning); exact repeats are removed. ParseAuthorsCorrected keeps a string item
// whole and skips a bad item (a warning each). Under ParseLenient it returns every string
// of every row, repeats removed case-insensitively.
func (p *Prompted) Entities(ctx context.Context, question string) ([]string, error) {
	if p.opts.Parse != ParseLenient {
		items, err := p.askCase(ctx, p.tmpl.Question, question)
		if err != nil {
			return nil, err
		}
		ents, skipped, ok := authorsEntities(items, p.opts.Parse == ParseAuthorsCorrected)
		p.warnings.Add(int64(skipped))
		if !ok {
			p.warnings.Add(1)
			return nil, nil
		}
		// dict.fromkeys: exact repeats only.
		seen := map[string]bool{}
		out := ents[:0]
		for _, e := range ents {
			if !seen[e] {
				seen[e] = true
				out = append(out, e)
			}
		}
		return out, nil
	}
	rows, err := p.ask(ctx, p.tmpl.Question, question)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, row := range rows {
		for _, s := range row {
			if strings.TrimSpace(s) == "" {
				p.warnings.Add(1)
				continue
			}
			out = append(out, s)
		}
	}
	return dedupe(out), nil
}

// Triplets asks the sentence template. Rows of three strings are triples, rows of two are (head,
// relation) pairs; other rows, and rows with an empty head or relation, are skipped and counted in
// Warnings. Under ParseAuthors the rows are parse_case's items, and an item holding a nested list is
// skipped too.
func (p *Prompted) Triplets(ctx context.Context, sentence string) ([]Triplet, error) {
	if p.opts.Parse != ParseLenient {
		items, err := p.askCase(ctx, p.tmpl.Sentence, sentence)
		if err != nil {
			return nil, err
		}
		out, skipped := authorsTriplets(items)
		p.warnings.Add(int64(skipped))
		return out, nil
	}
	rows, err := p.ask(ctx, p.tmpl.Sentence, sentence)
	if err != nil {
		return nil, err
	}
	out := make([]Triplet, 0, len(rows))
	for _, row := range rows {
		var t Triplet
		switch len(row) {
		case 2:
			t = Triplet{Head: strings.TrimSpace(row[0]), Relation: strings.TrimSpace(row[1])}
		case 3:
			t = Triplet{Head: strings.TrimSpace(row[0]), Relation: strings.TrimSpace(row[1]), Tail: strings.TrimSpace(row[2])}
		default:
			p.warnings.Add(1)
			continue
		}
		if t.Head == "" || t.Relation == "" {
			p.warnings.Add(1)
			continue
		}
		out = append(out, t)
	}
	return out, nil
}
