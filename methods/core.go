package methods

import (
	"context"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/ragbench/ragbench/datasets"
	"github.com/ragbench/ragbench/harness/llm"
	"github.com/ragbench/ragbench/harness/retrieval"
	"github.com/ragbench/ragbench/methods/prompts"
)

// The per-question core every method of the package shares: the prompt parts (template, demos,
// case), the trace, and the calls to the components that record what they did.

// core is one question's state, shared by the baselines, both FLARE variants and Web-Tool: the
// prompt parts, the trace, and the helpers that call the components and record what they did.
type core struct {
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

func newCore(method string, env Env, ex datasets.Example) *core {
	return &core{method: method, env: env, ex: ex}
}

// setup checks the needed components and builds the prompt parts: the template, the demos
// (demos) and the case ("Question: …\nAnswer:").
func (r *core) setup(g GenerationConfig, need ...string) error {
	if err := r.env.Need(r.method, need...); err != nil {
		return err
	}
	t, err := r.env.Prompts.Template(g.PromptKey)
	if err != nil {
		return err
	}
	r.tmpl = t
	set := prompts.ExemplarSet(r.ex.Dataset)
	if set == "" && g.Shots > 0 {
		return fmt.Errorf("shots %d asked for, but dataset %q has no exemplar set (the authors have them for 2WikiMultihopQA and HotpotQA)", g.Shots, r.ex.Dataset)
	}
	if r.demos, err = demos(r.env.Prompts, set, g.Shots); err != nil {
		return err
	}
	r.caseText = r.env.Prompts.Case(set, r.ex.Question)
	r.event(Event{Kind: "question", Text: r.ex.Question, Reason: fmt.Sprintf("prompt template %s, exemplar set %q", g.PromptKey, set)})
	return nil
}

// demos returns the first shots exemplars of set (-1: the authors' count) as the authors' prompts
// hold them: "Question: …\nAnswer: … So the answer is ….\n" each; "" for no set.
func demos(p *prompts.Set, set string, shots int) (string, error) {
	if set == "" {
		return "", nil
	}
	exs, err := p.Exemplars(set, shots)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	for _, e := range exs {
		b.WriteString(p.Demo(e))
		b.WriteString("\n")
	}
	return b.String(), nil
}

func (r *core) event(e Event) {
	r.round = max(r.round, e.Round)
	r.trace = append(r.trace, e)
}

// retrieve retrieves k passages for query, pads them to k with empty passages, and records it.
func (r *core) retrieve(ctx context.Context, round int, query string, k int, why string) ([]string, error) {
	hits, err := r.env.Retriever.Retrieve(ctx, query, k)
	r.ret = true
	if err != nil {
		r.event(Event{Round: round, Kind: "retrieve", Query: query, Decision: "error", Reason: err.Error()})
		return nil, fmt.Errorf("%s: retrieve %q: %w", r.method, query, err)
	}
	ps, padded := passages(hits, k, true)
	reason := "query: " + why + padded
	r.event(Event{Round: round, Kind: "retrieve", Query: query, Decision: "retrieve", Reason: reason, IDs: hitIDs(hits)})
	return texts(ps), nil
}

// passage is a retrieved passage: its id and the text that goes into prompts.
type passage struct{ id, text string }

// passages returns the first k hits as passages and, with pad, fills them up to k with empty ones,
// as the authors' retriever always returns k texts; padded says so ("; N hit(s), padded to K with
// empty passages", or "").
func passages(hits []retrieval.Hit, k int, pad bool) (ps []passage, padded string) {
	ps = make([]passage, 0, k)
	for _, h := range hits[:min(len(hits), k)] {
		ps = append(ps, passage{h.ID, h.Text})
	}
	if pad && len(ps) < k {
		padded = fmt.Sprintf("; %d hit(s), padded to %d with empty passages", len(ps), k)
		for len(ps) < k {
			ps = append(ps, passage{})
		}
	}
	return ps, padded
}

// texts returns the passages' texts.
func texts(ps []passage) []string {
	out := make([]string, len(ps))
	for i, p := range ps {
		out[i] = p.text
	}
	return out
}

// hitIDs returns the hits' ids.
func hitIDs(hits []retrieval.Hit) []string {
	ids := make([]string, len(hits))
	for i, h := range hits {
		ids[i] = h.ID
	}
	return ids
}

// generate makes one generator call (greedy, raw completion prompt) and records it.
func (r *core) generate(ctx context.Context, round int, prompt string, maxTokens int, logprobs bool) (llm.Response, error) {
	req := llm.Request{Endpoint: llm.Completions, Prompt: prompt, MaxTokens: maxTokens}
	if logprobs {
		req.Logprobs = -1
	}
	return r.generateReq(ctx, round, req)
}

func (r *core) generateReq(ctx context.Context, round int, req llm.Request) (llm.Response, error) {
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
func (r *core) needLogprobs(resp llm.Response) error {
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
func (r *core) pred(raw string) Prediction {
	return Prediction{Raw: raw, Trace: r.trace, Signals: r.signals()}
}

func (r *core) signals() map[string]float64 {
	v := 0.0
	if r.ret {
		v = 1
	}
	return map[string]float64{"retrieved": v}
}

// finish strips the generated text, as the authors' runner does, and applies Finish.
func (r *core) finish(ctx context.Context, txt string, o FinishOptions) (Prediction, error) {
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

// loopStop returns why the authors' loop stops after a step ("" to go on): the text holds more than
// maxTokens tokens, did not grow, or contains "the answer is" or "Question:".
func loopStop(txt string, oldLen, maxTokens int) string {
	n := llm.CountTokens(txt)
	switch {
	case n > maxTokens:
		return fmt.Sprintf("length: %d tokens > %d", n, maxTokens)
	case pyLen(txt) <= oldLen:
		return "no growth"
	case strings.Contains(txt, "the answer is"):
		return `contains "the answer is"`
	case strings.Contains(txt, "Question:"):
		return `contains "Question:"`
	}
	return ""
}

// pyLen is Python's len of a string: its code points.
func pyLen(s string) int { return utf8.RuneCountInString(s) }
