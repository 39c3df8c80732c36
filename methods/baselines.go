package methods

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/ragbench/ragbench/datasets"
	"github.com/ragbench/ragbench/harness/llm"
	"github.com/ragbench/ragbench/harness/text"
	"github.com/ragbench/ragbench/methods/prompts"
)

// The baselines of the dynamic-RAG papers, as the QuCo-RAG authors' generate_baselines.py runs them
// (see docs/methods.md): Wo-RAG ("wo-rag"), SR-RAG ("sr-rag"), FS-RAG ("fs-rag") and FL-RAG
// ("fl-rag"). Prompts are byte for byte those of the authors' code with the prompt template named
// by prompt_key ("llama-2" in every baseline row of their configs).

func init() {
	Register("wo-rag", func(s map[string]any) (Method, error) {
		c := DefaultWoRAG()
		if err := blDecode(s, &c); err != nil {
			return nil, err
		}
		return &WoRAG{cfg: c}, nil
	})
	Register("sr-rag", func(s map[string]any) (Method, error) {
		c := DefaultSRRAG()
		if err := blDecode(s, &c); err != nil {
			return nil, err
		}
		return &SRRAG{cfg: c}, nil
	})
	Register("fs-rag", func(s map[string]any) (Method, error) {
		c := DefaultFSRAG()
		if err := blDecode(s, &c); err != nil {
			return nil, err
		}
		return &FSRAG{cfg: c}, nil
	})
	Register("fl-rag", func(s map[string]any) (Method, error) {
		c := DefaultFLRAG()
		if err := blDecode(s, &c); err != nil {
			return nil, err
		}
		return &FLRAG{cfg: c}, nil
	})
}

// blValidator is a config with a Validate method.
type blValidator interface{ Validate() error }

// blDecode decodes settings strictly over the defaults already in dst and validates the result.
func blDecode(settings map[string]any, dst blValidator) error {
	if err := DecodeSettings(settings, dst); err != nil {
		return err
	}
	return dst.Validate()
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
	r := newBLRun(m.Name(), env, ex)
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
	r := newBLRun(m.Name(), env, ex)
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
	r := newBLRun(name, env, ex)
	if err := r.setup(cfg.GenerationConfig, "generator", "retriever", "prompts"); err != nil {
		return r.pred(""), err
	}
	txt := ""
	query, why := ex.Question, "the question"
	sec := r.tmpl.Hallucination
	for round := 1; ; round++ {
		oldLen := blPyLen(txt)
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
		if stop := blStop(txt, oldLen, cfg.MaxTokens); stop != "" {
			r.event(Event{Round: round, Kind: "stop", Decision: "stop", Reason: stop})
			break
		}
	}
	return r.finish(ctx, txt, cfg.FinishOptions)
}

// blStop returns why the authors' loop stops after a step ("" to go on): the text holds more than
// maxTokens tokens, did not grow, or contains "the answer is" or "Question:".
func blStop(txt string, oldLen, maxTokens int) string {
	n := llm.CountTokens(txt)
	switch {
	case n > maxTokens:
		return fmt.Sprintf("length: %d tokens > %d", n, maxTokens)
	case blPyLen(txt) <= oldLen:
		return "no growth"
	case strings.Contains(txt, "the answer is"):
		return `contains "the answer is"`
	case strings.Contains(txt, "Question:"):
		return `contains "Question:"`
	}
	return ""
}

// blPyLen is Python's len of a string: its code points.
func blPyLen(s string) int { return utf8.RuneCountInString(s) }

// blRun is one question's state shared by the baselines and both FLARE variants: the prompt parts,
// the trace, and the helpers that call the components and record what they did.
type blRun struct {
	method   string
	env      Env
	ex       datasets.Example
	tmpl     prompts.Template
	demos    string
	caseText string
	trace    []Event
	ret      bool
	round    int
}

func newBLRun(method string, env Env, ex datasets.Example) *blRun {
	return &blRun{method: method, env: env, ex: ex}
}

// setup checks the needed components and builds the prompt parts: the demos ("Question: …\nAnswer:
// … So the answer is ….\n" each, the dataset's exemplar set) and the case ("Question: …\nAnswer:").
func (r *blRun) setup(g GenerationConfig, need ...string) error {
	if err := r.env.Need(r.method, need...); err != nil {
		return err
	}
	t, err := r.env.Prompts.Template(g.PromptKey)
	if err != nil {
		return err
	}
	r.tmpl = t
	set := prompts.ExemplarSet(r.ex.Dataset)
	if set != "" {
		exs, err := r.env.Prompts.Exemplars(set, g.Shots)
		if err != nil {
			return err
		}
		var b strings.Builder
		for _, e := range exs {
			b.WriteString(r.env.Prompts.Demo(e))
			b.WriteString("\n")
		}
		r.demos = b.String()
	} else if g.Shots > 0 {
		return fmt.Errorf("shots %d asked for, but dataset %q has no exemplar set (the authors have them for 2WikiMultihopQA and HotpotQA)", g.Shots, r.ex.Dataset)
	}
	r.caseText = r.env.Prompts.Case(set, r.ex.Question)
	r.event(Event{Kind: "question", Text: r.ex.Question, Reason: fmt.Sprintf("prompt template %s, exemplar set %q", g.PromptKey, set)})
	return nil
}

func (r *blRun) event(e Event) {
	r.round = max(r.round, e.Round)
	r.trace = append(r.trace, e)
}

// retrieve retrieves k passages for query, pads them to k with empty passages, and records it.
func (r *blRun) retrieve(ctx context.Context, round int, query string, k int, why string) ([]string, error) {
	hits, err := r.env.Retriever.Retrieve(ctx, query, k)
	r.ret = true
	if err != nil {
		r.event(Event{Round: round, Kind: "retrieve", Query: query, Decision: "error", Reason: err.Error()})
		return nil, fmt.Errorf("%s: retrieve %q: %w", r.method, query, err)
	}
	ids := make([]string, len(hits))
	docs := make([]string, 0, k)
	for i, h := range hits {
		ids[i] = h.ID
		if i < k {
			docs = append(docs, h.Text)
		}
	}
	reason := "query: " + why
	if len(docs) < k {
		reason += fmt.Sprintf("; %d hit(s), padded to %d with empty passages", len(docs), k)
	}
	for len(docs) < k {
		docs = append(docs, "")
	}
	r.event(Event{Round: round, Kind: "retrieve", Query: query, Decision: "retrieve", Reason: reason, IDs: ids})
	return docs, nil
}

// generate makes one generator call (greedy, raw completion prompt) and records it.
func (r *blRun) generate(ctx context.Context, round int, prompt string, maxTokens int, logprobs bool) (llm.Response, error) {
	req := llm.Request{Endpoint: llm.Completions, Prompt: prompt, MaxTokens: maxTokens}
	if logprobs {
		req.Logprobs = -1
	}
	return r.generateReq(ctx, round, req)
}

func (r *blRun) generateReq(ctx context.Context, round int, req llm.Request) (llm.Response, error) {
	resp, err := r.env.Generator.Generate(ctx, req)
	if err != nil {
		r.event(Event{Round: round, Kind: "generate", Decision: "error", Reason: err.Error()})
		return resp, fmt.Errorf("%s: generate: %w", r.method, err)
	}
	reason := fmt.Sprintf("finish %s, %d token(s), max %d", resp.FinishReason, resp.Usage.CompletionTokens, req.MaxTokens)
	r.event(Event{Round: round, Kind: "generate", Text: resp.Text, Reason: reason})
	return resp, nil
}

// needLogprobs returns the error of a generation that came back without token log-probabilities.
func (r *blRun) needLogprobs(resp llm.Response) error {
	if len(resp.Tokens) > 0 || resp.Text == "" {
		return nil
	}
	name := r.env.GeneratorName
	if name == "" {
		name = "the generator"
	}
	return fmt.Errorf("%s needs token log-probabilities, and %s returned none (FLARE's trigger reads them; use a server that returns logprobs on /v1/completions, such as vLLM, the llama.cpp server or the offline reader)", r.method, name)
}

// pred returns the prediction so far (for a failed question).
func (r *blRun) pred(raw string) Prediction {
	return Prediction{Raw: raw, Trace: r.trace, Signals: r.signals()}
}

func (r *blRun) signals() map[string]float64 {
	v := 0.0
	if r.ret {
		v = 1
	}
	return map[string]float64{"retrieved": v}
}

// finish strips the generated text, as the authors' runner does, and applies Finish.
func (r *blRun) finish(ctx context.Context, txt string, o FinishOptions) (Prediction, error) {
	raw := strings.TrimSpace(txt)
	final, ans, err := Finish(ctx, r.env, r.ex.Dataset, r.ex.Question, raw, o)
	how := "answer extracted from the text"
	if len(final) > len(raw) {
		how = "one answer-completion call (the text lacked \"answer is\")"
	}
	r.event(Event{Round: r.round, Kind: "answer", Text: final, Decision: ans, Reason: how})
	p := r.pred(final)
	p.Answer = ans
	if err != nil {
		return p, fmt.Errorf("%s: %w", r.method, err)
	}
	return p, nil
}
