package methods

import (
	"context"
	"fmt"
	"sync"

	"github.com/ragbench/ragbench/datasets"
	"github.com/ragbench/ragbench/harness/llm"
	"github.com/ragbench/ragbench/methods/prompts"
	"github.com/ragbench/ragbench/metrics"
)

// Gold-context reading, registered as "gold-context": no retrieval; each example's own shipped
// context (HotpotQA/2Wiki paragraphs, the PubMedQA abstract, the nq_longdoc document; prompts.Passages)
// goes into the QuCo-RAG authors' few-shot prompt (prompts.Builder: their exemplars, the "initial"
// context block, the test input), one greedy completion, and the dataset's extraction rule gives the
// prediction. An example without context is closed-book. `ragbench predict` runs it.

func init() {
	Register("gold-context", DefaultGoldContext, func(c GoldContextConfig) (Method, error) {
		return &GoldContext{cfg: c}, nil
	})
}

// GoldContextConfig configures gold-context.
type GoldContextConfig struct {
	// Exemplars is the exemplar set: "auto" (the dataset's own, prompts.ExemplarSet), "none" or ""
	// (no exemplars), or a set name of exemplars.json.
	Exemplars string `json:"exemplars"`
	// Shots is the number of exemplars (-1: the authors' count for the set; 0: none).
	Shots int `json:"shots"`
	// Extract is the answer extraction rule: "auto" (the QuCo-RAG rule of the dataset, its 2Wiki rule
	// elsewhere; metrics.ResolveAnswerRule) or a rule name.
	Extract string `json:"extract"`
	// MaxTokens bounds the completion (default 256).
	MaxTokens int `json:"max_tokens"`
	// Stop are the stop sequences (default a newline).
	Stop []string `json:"stop"`
	// Chat sends the prompt as one user message to the chat endpoint instead of a completion.
	Chat bool `json:"chat"`
}

// DefaultGoldContext returns gold-context's defaults: the dataset's exemplars at the authors' count,
// its extraction rule, 256 tokens, stop at a newline.
func DefaultGoldContext() GoldContextConfig {
	return GoldContextConfig{Exemplars: "auto", Shots: -1, Extract: "auto", MaxTokens: 256, Stop: []string{"\n"}}
}

// Validate reports the first invalid field.
func (c GoldContextConfig) Validate() error {
	if c.Shots < -1 {
		return fmt.Errorf("shots %d: want -1 (the authors' count), 0 or more", c.Shots)
	}
	if c.MaxTokens < 1 {
		return fmt.Errorf("max_tokens %d: want at least 1", c.MaxTokens)
	}
	if c.Extract != "auto" {
		if _, err := metrics.ParseAnswerRule(c.Extract); err != nil {
			return fmt.Errorf("extract: %w", err)
		}
	}
	return nil
}

// GoldContext is gold-context reading ("gold-context").
type GoldContext struct {
	cfg GoldContextConfig
	// prompt caches the builder and rule per prompt set and dataset.
	prompt sync.Map // goldKey → goldPrompt
}

type goldKey struct {
	set     *prompts.Set
	dataset string
}

type goldPrompt struct {
	b    *prompts.Builder
	rule metrics.AnswerRule
	err  error
}

// Name implements Method.
func (*GoldContext) Name() string { return "gold-context" }

// Settings implements Configured.
func (m *GoldContext) Settings() any { return m.cfg }

// Prompt returns the prompt builder and the extraction rule for examples of dataset with the
// templates of set: the settings' exemplars and rule, "auto" resolved for dataset. More shots than the
// set holds, or an unknown set, is an error.
func (m *GoldContext) Prompt(set *prompts.Set, dataset string) (*prompts.Builder, metrics.AnswerRule, error) {
	k := goldKey{set, dataset}
	if v, ok := m.prompt.Load(k); ok {
		p := v.(goldPrompt)
		return p.b, p.rule, p.err
	}
	var p goldPrompt
	p.b, p.err = set.Builder(prompts.Options{Exemplars: prompts.ResolveExemplars(m.cfg.Exemplars, dataset), Shots: m.cfg.Shots})
	if p.err == nil {
		p.rule, p.err = metrics.ResolveAnswerRule(m.cfg.Extract, dataset, metrics.ExtractQuCo2Wiki)
	}
	m.prompt.Store(k, p)
	return p.b, p.rule, p.err
}

// CheckEnv implements EnvChecker: a generator and the templates are needed.
func (m *GoldContext) CheckEnv(env Env) error {
	return env.Need(m.Name(), "generator", "prompts")
}

// Answer implements Method: the prompt with the example's own context, one generation (its error
// returned as it is), the extraction. Its trace: "context" (the passages' count), "generate".
func (m *GoldContext) Answer(ctx context.Context, env Env, ex datasets.Example) (Prediction, error) {
	var p Prediction
	if err := m.CheckEnv(env); err != nil {
		return p, err
	}
	b, rule, err := m.Prompt(env.Prompts, ex.Dataset)
	if err != nil {
		return p, fmt.Errorf("prompt: %w", err)
	}
	passages := prompts.Passages(ex)
	p.Trace = append(p.Trace, Event{Kind: "context", Reason: fmt.Sprintf("%d passage(s) of the example, %d shot(s)", len(passages), b.Shots())})
	seed := 0
	req := llm.Request{Endpoint: llm.Completions, MaxTokens: m.cfg.MaxTokens, Seed: &seed, Stop: m.cfg.Stop}
	prompt := b.Build(ex.Question, passages)
	if m.cfg.Chat {
		req.Endpoint = llm.Chat
		req.Messages = []llm.Message{{Role: "user", Content: prompt}}
	} else {
		req.Prompt = prompt
	}
	resp, err := env.Generator.Generate(ctx, req)
	if err != nil {
		return p, err
	}
	p.Trace = append(p.Trace, Event{Round: 1, Kind: "generate", Text: resp.Text})
	p.Raw, p.Answer = resp.Text, rule.Extract(resp.Text)
	return p, nil
}

// GoldContexts returns examples with oracle passages for those that ship no context (by question
// text, datasets.ReadOracle; nil: none), for gold-context reading, and counts the examples given
// oracle passages and those left without any passage (closed-book). The examples given are not
// modified.
func GoldContexts(examples []datasets.Example, oracle map[string][]datasets.Passage) (out []datasets.Example, oracled, noContext int) {
	out = make([]datasets.Example, len(examples))
	for i, ex := range examples {
		if len(ex.Contexts) == 0 && oracle != nil {
			if ps, ok := oracle[ex.Question]; ok {
				ex.Contexts = ps
				oracled++
			}
		}
		if len(prompts.Passages(ex)) == 0 {
			noContext++
		}
		out[i] = ex
	}
	return out, oracled, noContext
}
