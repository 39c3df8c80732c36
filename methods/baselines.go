package methods

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/ragbench/ragbench/harness/text"
)

// The baselines of the dynamic-RAG papers, as the QuCo-RAG authors' generate_baselines.py runs them
// (see docs/methods.md): Wo-RAG ("wo-rag"), SR-RAG ("sr-rag"), FS-RAG ("fs-rag") and FL-RAG
// ("fl-rag"). Prompts are byte for byte those of the authors' code with the prompt template named
// by prompt_key ("llama-2" in every baseline row of their configs).

func init() {
	registerCore("wo-rag", DefaultWoRAG, woRAG, "generator", "prompts")
	registerCore("sr-rag", DefaultSRRAG, srRAG, "generator", "retriever", "prompts")
	registerCore("fs-rag", DefaultFSRAG, func(ctx context.Context, r *core, c FSRAGConfig) (Prediction, error) {
		return fixedLoop(ctx, r, c.RetrievalConfig, 0)
	}, "generator", "retriever", "prompts")
	registerCore("fl-rag", DefaultFLRAG, func(ctx context.Context, r *core, c FLRAGConfig) (Prediction, error) {
		return fixedLoop(ctx, r, c.RetrievalConfig, c.FixLength)
	}, "generator", "retriever", "prompts")
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
	case g.Complete:
		return firstErr(atLeast1("generate_max_length", g.MaxTokens), atLeast1("answer_completion_max_tokens", g.FinishOptions.MaxTokens))
	}
	return atLeast1("generate_max_length", g.MaxTokens)
}

// generation returns the settings the core's setup reads.
func (g GenerationConfig) generation() GenerationConfig { return g }

// atLeast1 is the error of a whole-number setting below 1, or nil.
func atLeast1(key string, v int) error {
	if v < 1 {
		return fmt.Errorf("%s %d: want at least 1", key, v)
	}
	return nil
}

// firstErr returns the first non-nil error.
func firstErr(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
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
	if c.Runner != RunnerBaselines && c.Runner != RunnerQuCo {
		return firstErr(c.GenerationConfig.Validate(), fmt.Errorf("runner %q: want %s or %s", c.Runner, RunnerBaselines, RunnerQuCo))
	}
	return c.GenerationConfig.Validate()
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
	return firstErr(r.GenerationConfig.Validate(), atLeast1("top_k", r.TopK))
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
	FixLength int `json:"fix_length" min:"1"`
}

// DefaultFLRAG returns FL-RAG's defaults.
func DefaultFLRAG() FLRAGConfig { return FLRAGConfig{blDefaultRetrieval(), 32} }

// woRAG answers without retrieval: demos, the template's initial instruction and the case; one call.
func woRAG(ctx context.Context, r *core, c WoRAGConfig) (Prediction, error) {
	if c.Runner == RunnerQuCo {
		// generate_quco.BasicRAG.inference: no instruction; its generator decodes with
		// skip_special_tokens=True, as servers return text; then filter_invalid_sentences.
		resp, err := r.generate(ctx, 1, r.demos+r.caseText, c.MaxTokens, false)
		if err != nil {
			return r.pred(""), err
		}
		return r.finish(ctx, r.filter(1, resp.Text), c.FinishOptions)
	}
	prompt := r.demos + r.tmpl.Initial.Instruction + r.caseText
	resp, err := r.generate(ctx, 1, prompt, c.MaxTokens, false)
	if err != nil {
		return r.pred(""), err
	}
	return r.finish(ctx, resp.Text, c.FinishOptions)
}

// srRAG retrieves once with the question and generates once from the template's initial section.
func srRAG(ctx context.Context, r *core, c SRRAGConfig) (Prediction, error) {
	docs, err := r.retrieve(ctx, 1, r.ex.Question, c.TopK, "the question")
	if err != nil {
		return r.pred(""), err
	}
	sec := r.tmpl.Initial
	prompt := r.demos + sec.Docs(docs) + sec.Instruction + r.caseText
	resp, err := r.generate(ctx, 1, prompt, c.MaxTokens, false)
	if err != nil {
		return r.pred(""), err
	}
	return r.finish(ctx, resp.Text, c.FinishOptions)
}

// fixedLoop is the authors' FixLengthRAG: FS-RAG (fixLength 0) retrieves before every step (first
// with the question, then with the last kept sentence) and keeps the first sentence of each
// generation; FL-RAG (fixLength > 0) retrieves before every step (first with the question, then with
// the previous step's text) and generates fix_length tokens per step.
func fixedLoop(ctx context.Context, r *core, cfg RetrievalConfig, fixLength int) (Prediction, error) {
	txt := ""
	query, why := r.ex.Question, "the question"
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
