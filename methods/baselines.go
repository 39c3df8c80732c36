package methods

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/ragbench/ragbench/datasets"
	"github.com/ragbench/ragbench/harness/text"
)

// The baselines of the dynamic-RAG papers, as the QuCo-RAG authors' generate_baselines.py runs them
// (see docs/methods.md): Wo-RAG ("wo-rag"), SR-RAG ("sr-rag"), FS-RAG ("fs-rag") and FL-RAG
// ("fl-rag"). Prompts are byte for byte those of the authors' code with the prompt template named
// by prompt_key ("llama-2" in every baseline row of their configs).

func init() {
	Register("wo-rag", DefaultWoRAG, func(c WoRAGConfig) (Method, error) { return &WoRAG{c}, nil })
	Register("sr-rag", DefaultSRRAG, func(c SRRAGConfig) (Method, error) { return &SRRAG{c}, nil })
	Register("fs-rag", DefaultFSRAG, func(c FSRAGConfig) (Method, error) { return &FSRAG{c}, nil })
	Register("fl-rag", DefaultFLRAG, func(c FLRAGConfig) (Method, error) { return &FLRAG{c}, nil })
}

// GenerationConfig holds the settings every baseline and both FLARE variants share.
type GenerationConfig struct {
	// PromptKey names the prompt template of prompt_templates.json (default "llama-2", as in every
	// baseline row of the authors' configs).
	PromptKey string `json:"prompt_key"`
	// Shots is the number of exemplars in each prompt (-1, the default: the authors' count, 6 for
	// 2WikiMultihopQA and 8 for HotpotQA; datasets without an exemplar set get none).
	Shots int `json:"shots"`
	// MaxTokens is generate_max_length: the completion bound of each call and the length stop of the
	// loops (default 128).
	MaxTokens int `json:"generate_max_length"`
	// FinishOptions configure the answer step (Finish): the answer-completion call and its length.
	FinishOptions
}

func blDefaultGeneration() GenerationConfig {
	f := DefaultFinish
	return GenerationConfig{PromptKey: "llama-2", Shots: -1, MaxTokens: 128, FinishOptions: f}
}

// Validate reports the first invalid field.
func (g GenerationConfig) Validate() error {
	switch {
	case strings.TrimSpace(g.PromptKey) == "":
		return errors.New("prompt_key is empty")
	case g.Shots < -1:
		return fmt.Errorf("shots %d: want -1 (the authors' count), 0 or more", g.Shots)
	case g.MaxTokens < 1:
		return fmt.Errorf("generate_max_length %d: want at least 1", g.MaxTokens)
	case g.Complete && g.FinishOptions.MaxTokens < 1:
		return fmt.Errorf("answer_completion_max_tokens %d: want at least 1", g.FinishOptions.MaxTokens)
	}
	return nil
}

// The authors' two non-retrieval runners (WoRAGConfig.Runner).
const (
	// RunnerBaselines is generate_baselines.BasicRAG (main_baseline.py, their wo-RAG.json rows): demos,
	// the template's initial instruction, the case.
	RunnerBaselines = "baselines"
	// RunnerQuCo is generate_quco.BasicRAG (main_quco.py with method non-retrieval): demos and the case
	// (no instruction), special tokens skipped, assistant-style sentences filtered out of the output.
	RunnerQuCo = "quco"
)

// WoRAGConfig configures Wo-RAG.
type WoRAGConfig struct {
	GenerationConfig
	// Runner names which of the authors' non-retrieval runners to reproduce: "baselines" (default)
	// or "quco".
	Runner string `json:"runner"`
}

// DefaultWoRAG returns Wo-RAG's defaults.
func DefaultWoRAG() WoRAGConfig { return WoRAGConfig{blDefaultGeneration(), RunnerBaselines} }

// Validate reports the first invalid field.
func (c WoRAGConfig) Validate() error {
	if err := c.GenerationConfig.Validate(); err != nil {
		return err
	}
	if c.Runner != RunnerBaselines && c.Runner != RunnerQuCo {
		return fmt.Errorf("runner %q: want %s or %s", c.Runner, RunnerBaselines, RunnerQuCo)
	}
	return nil
}

// RetrievalConfig adds the retrieval depth to GenerationConfig.
type RetrievalConfig struct {
	GenerationConfig
	// TopK is the number of passages per retrieval (default 3). Fewer hits are padded with empty
	// passages, as the authors' retriever does.
	TopK int `json:"top_k"`
}

// Validate reports the first invalid field.
func (r RetrievalConfig) Validate() error {
	if err := r.GenerationConfig.Validate(); err != nil {
		return err
	}
	if r.TopK < 1 {
		return fmt.Errorf("top_k %d: want at least 1", r.TopK)
	}
	return nil
}

func blDefaultRetrieval() RetrievalConfig { return RetrievalConfig{blDefaultGeneration(), 3} }

// SRRAGConfig configures SR-RAG.
type SRRAGConfig struct {
	RetrievalConfig
}

// DefaultSRRAG returns SR-RAG's defaults.
func DefaultSRRAG() SRRAGConfig { return SRRAGConfig{blDefaultRetrieval()} }

// FSRAGConfig configures FS-RAG.
type FSRAGConfig struct {
	RetrievalConfig
}

// DefaultFSRAG returns FS-RAG's defaults.
func DefaultFSRAG() FSRAGConfig { return FSRAGConfig{blDefaultRetrieval()} }

// FLRAGConfig configures FL-RAG.
type FLRAGConfig struct {
	RetrievalConfig
	// FixLength is the number of tokens generated per step and the length of the next query
	// (default 32).
	FixLength int `json:"fix_length"`
}

// DefaultFLRAG returns FL-RAG's defaults.
func DefaultFLRAG() FLRAGConfig { return FLRAGConfig{blDefaultRetrieval(), 32} }

// Validate reports the first invalid field.
func (c FLRAGConfig) Validate() error {
	if err := c.RetrievalConfig.Validate(); err != nil {
		return err
	}
	if c.FixLength < 1 {
		return fmt.Errorf("fix_length %d: want at least 1", c.FixLength)
	}
	return nil
}

// WoRAG answers without retrieval: demos, the template's initial instruction and the case; one call.
type WoRAG struct{ cfg WoRAGConfig }

// SRRAG retrieves once with the question and generates once from the template's initial section.
type SRRAG struct{ cfg SRRAGConfig }

// FSRAG retrieves before every step (first with the question, then with the last kept sentence) and
// keeps the first sentence of each generation.
type FSRAG struct{ cfg FSRAGConfig }

// FLRAG retrieves before every step (first with the question, then with the previous step's text)
// and generates fix_length tokens per step.
type FLRAG struct{ cfg FLRAGConfig }

// Name implements Method.
func (*WoRAG) Name() string { return "wo-rag" }

// Name implements Method.
func (*SRRAG) Name() string { return "sr-rag" }

// Name implements Method.
func (*FSRAG) Name() string { return "fs-rag" }

// Name implements Method.
func (*FLRAG) Name() string { return "fl-rag" }

// Settings implements Configured.
func (m *WoRAG) Settings() any { return m.cfg }

// Settings implements Configured.
func (m *SRRAG) Settings() any { return m.cfg }

// Settings implements Configured.
func (m *FSRAG) Settings() any { return m.cfg }

// Settings implements Configured.
func (m *FLRAG) Settings() any { return m.cfg }

// Answer implements Method.
func (m *WoRAG) Answer(ctx context.Context, env Env, ex datasets.Example) (Prediction, error) {
	r := newCore(m.Name(), env, ex)
	if err := r.setup(m.cfg.GenerationConfig, "generator", "prompts"); err != nil {
		return r.pred(""), err
	}
	if m.cfg.Runner == RunnerQuCo {
		// generate_quco.BasicRAG.inference: no instruction; its generator decodes with
		// skip_special_tokens=True, as servers return text; then filter_invalid_sentences.
		resp, err := r.generate(ctx, 1, r.demos+r.caseText, m.cfg.MaxTokens, false)
		if err != nil {
			return r.pred(""), err
		}
		kept, dropped := filterAssistant(resp.Text)
		for _, d := range dropped {
			r.event(Event{Round: 1, Kind: "filter", Text: d[0], Decision: "drop", Reason: fmt.Sprintf("assistant phrase %q", d[1])})
		}
		return r.finish(ctx, kept, m.cfg.FinishOptions)
	}
	prompt := r.demos + r.tmpl.Initial.Instruction + r.caseText
	resp, err := r.generate(ctx, 1, prompt, m.cfg.MaxTokens, false)
	if err != nil {
		return r.pred(""), err
	}
	return r.finish(ctx, resp.Text, m.cfg.FinishOptions)
}

// Answer implements Method.
func (m *SRRAG) Answer(ctx context.Context, env Env, ex datasets.Example) (Prediction, error) {
	r := newCore(m.Name(), env, ex)
	if err := r.setup(m.cfg.GenerationConfig, "generator", "retriever", "prompts"); err != nil {
		return r.pred(""), err
	}
	docs, err := r.retrieve(ctx, 1, ex.Question, m.cfg.TopK, "the question")
	if err != nil {
		return r.pred(""), err
	}
	sec := r.tmpl.Initial
	prompt := r.demos + sec.Docs(docs) + sec.Instruction + r.caseText
	resp, err := r.generate(ctx, 1, prompt, m.cfg.MaxTokens, false)
	if err != nil {
		return r.pred(""), err
	}
	return r.finish(ctx, resp.Text, m.cfg.FinishOptions)
}

// Answer implements Method.
func (m *FSRAG) Answer(ctx context.Context, env Env, ex datasets.Example) (Prediction, error) {
	return blFixedLoop(ctx, m.Name(), env, ex, m.cfg.RetrievalConfig, 0)
}

// Answer implements Method.
func (m *FLRAG) Answer(ctx context.Context, env Env, ex datasets.Example) (Prediction, error) {
	return blFixedLoop(ctx, m.Name(), env, ex, m.cfg.RetrievalConfig, m.cfg.FixLength)
}

// blFixedLoop is FS-RAG (fixLength 0) and FL-RAG (fixLength > 0), the authors' FixLengthRAG.
func blFixedLoop(ctx context.Context, name string, env Env, ex datasets.Example, cfg RetrievalConfig, fixLength int) (Prediction, error) {
	r := newCore(name, env, ex)
	if err := r.setup(cfg.GenerationConfig, "generator", "retriever", "prompts"); err != nil {
		return r.pred(""), err
	}
	txt := ""
	query, why := ex.Question, "the question"
	sec := r.tmpl.Hallucination
	for round := 1; ; round++ {
		oldLen := pyLen(txt)
		docs, err := r.retrieve(ctx, round, query, cfg.TopK, why)
		if err != nil {
			return r.pred(txt), err
		}
		prompt := r.demos + sec.Docs(docs) + sec.Instruction + r.caseText + " " + txt
		if fixLength > 0 {
			resp, err := r.generate(ctx, round, prompt, fixLength, false)
			if err != nil {
				return r.pred(txt), err
			}
			nt := strings.TrimSpace(resp.Text)
			txt = strings.TrimSpace(txt) + " " + nt
			query, why = nt, "the previous step's text"
		} else {
			resp, err := r.generate(ctx, round, prompt, cfg.MaxTokens, false)
			if err != nil {
				return r.pred(txt), err
			}
			sents := text.SplitSentences(strings.TrimSpace(resp.Text))
			if len(sents) == 0 {
				r.event(Event{Round: round, Kind: "stop", Decision: "stop", Reason: "empty generation"})
				break
			}
			txt = strings.TrimSpace(txt) + " " + sents[0]
			r.event(Event{Round: round, Kind: "keep", Text: sents[0], Decision: "accept",
				Reason: fmt.Sprintf("first of %d sentence(s)", len(sents))})
			query, why = sents[0], "the last kept sentence"
		}
		if stop := loopStop(txt, oldLen, cfg.MaxTokens); stop != "" {
			r.event(Event{Round: round, Kind: "stop", Decision: "stop", Reason: stop})
			break
		}
	}
	return r.finish(ctx, txt, cfg.FinishOptions)
}
