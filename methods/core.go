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

// The per-question core of the methods that generate: the prompt parts (the authors' template,
// demos and case, or prompts.Builder's prompt over a retrieved context), the trace and signals, and
// the calls to the components that record what they did; and registerCore, which makes a method of a
// config and an answer function on it.

// core is one question's state, shared by every method of the package that generates (the
// baselines, both FLARE variants, ITER-RETGEN, Web-Tool, QuCo-RAG, and UMG-RAG, UMGP-RAG and their
// baselines through answerWithContext): the prompt parts, the trace, the signals, and the helpers
// that call the components and record what they did.
type core struct {
	method   string
	env      Env
	ex       datasets.Example
	tmpl     prompts.Template
	demos    string
	caseText string
	trace    []Event
	round    int
	// signals are the prediction's signals: "retrieved" (1 once a retrieval was made), and any the
	// method adds.
	signals map[string]float64
	// noPad keeps only the hits of a retrieval (QuCo-RAG's pad_top_k false); the default pads them
	// to k with empty passages, as the authors' retriever does.
	noPad bool
	// asIs hands the generated text to the answer step as it came (answerWithContext); the default
	// strips it, as the authors' runner does.
	asIs bool
	// words words the retrieve, generate and answer events and their errors.
	words wording
}

func newCore(method string, env Env, ex datasets.Example) *core {
	return &core{method: method, env: env, ex: ex, signals: map[string]float64{"retrieved": 0}, words: coreWords{method}}
}

// generationSettings is a config with the settings the core's setup reads (prompt_key, shots, ...).
type generationSettings interface{ generation() GenerationConfig }

// registerCore registers a method that answers on the per-question core: the registry decodes and
// validates its settings C (Register), and each question runs newCore, setup with the components
// need names and C's generation settings, then answer.
func registerCore[C generationSettings](name string, defaults func() C, answer func(context.Context, *core, C) (Prediction, error), need ...string) {
	Register(name, defaults, func(c C) (Method, error) { return &coreMethod[C]{name, c, need, answer}, nil })
}

// coreMethod is a method registered by registerCore.
type coreMethod[C generationSettings] struct {
	name   string
	cfg    C
	need   []string
	answer func(context.Context, *core, C) (Prediction, error)
}

// Name implements Method.
func (m *coreMethod[C]) Name() string { return m.name }

// Settings implements Configured.
func (m *coreMethod[C]) Settings() any { return m.cfg }

// Answer implements Method.
func (m *coreMethod[C]) Answer(ctx context.Context, env Env, ex datasets.Example) (Prediction, error) {
	r := newCore(m.name, env, ex)
	if err := r.setup(m.cfg.generation(), m.need...); err != nil {
		return r.pred(""), err
	}
	return m.answer(ctx, r, m.cfg)
}

// wording is how a method's trace and errors word the core's retrieve, generate and answer steps:
// each of its functions completes the event the core made (Round, Kind, Query and IDs, or Text, set)
// and returns err wrapped, or nil; one that clears the event's Kind records none. coreWords is every
// method's but QuCo-RAG's and the context methods', whose records keep their own (qucoWords,
// quco.go; umgWords, umg.go).
type wording interface {
	// retrieved: why is the query's reason with its padding note.
	retrieved(ev *Event, why string, err error) error
	generated(ev *Event, resp llm.Response, req llm.Request, err error) error
	// answered: raw is the generated text, asked whether Finish asked the answer-completion call
	// for it, ans the extracted answer.
	answered(ev *Event, raw, ans string, asked bool, err error) error
}

// coreWords is the core's wording (method is the method's name).
type coreWords struct{ method string }

func (w coreWords) retrieved(ev *Event, why string, err error) error {
	if err != nil {
		ev.Decision, ev.Reason = "error", err.Error()
		return fmt.Errorf("%s: retrieve %q: %w", w.method, ev.Query, err)
	}
	ev.Decision, ev.Reason = "retrieve", "query: "+why
	return nil
}

func (w coreWords) generated(ev *Event, resp llm.Response, req llm.Request, err error) error {
	if err != nil {
		ev.Decision, ev.Reason = "error", err.Error()
		return fmt.Errorf("%s: generate: %w", w.method, err)
	}
	ev.Reason = fmt.Sprintf("finish %s, %d token(s), max %d", resp.FinishReason, resp.Usage.CompletionTokens, req.MaxTokens)
	if req.Endpoint == llm.Responses { // Web-Tool's call: its bound may be unsent; its web searches count
		ev.Reason = fmt.Sprintf("finish %s, %d token(s), %d web search call(s)", resp.FinishReason, resp.Usage.CompletionTokens, resp.WebSearchCalls)
	}
	return nil
}

func (w coreWords) answered(ev *Event, raw, ans string, _ bool, err error) error {
	ev.Decision, ev.Reason = ans, "answer extracted from the text"
	if len(ev.Text) > len(raw) {
		ev.Reason = "one answer-completion call (the text lacked \"answer is\")"
	}
	if err != nil {
		return fmt.Errorf("%s: %w", w.method, err)
	}
	return nil
}

// setup checks the needed components and builds the prompt parts (prompt) and the "question"
// event; a dataset without exemplars asked for shots is an error.
func (r *core) setup(g GenerationConfig, need ...string) error {
	if err := r.env.Need(r.method, need...); err != nil {
		return err
	}
	set, err := r.prompt(g.PromptKey, g.Shots, true)
	if err != nil {
		return err
	}
	r.event(Event{Kind: "question", Text: r.ex.Question, Reason: fmt.Sprintf("prompt template %s, exemplar set %q", g.PromptKey, set)})
	return nil
}

// prompt builds the prompt parts: the template named key (r.tmpl), the first shots demos of the
// dataset's exemplar set (r.demos) and the case ("Question: …\nAnswer:", r.caseText). With
// needSet, shots asked for on a dataset without exemplars is an error; without it they are none.
func (r *core) prompt(key string, shots int, needSet bool) (set string, err error) {
	if r.tmpl, err = r.env.Prompts.Template(key); err != nil {
		return "", err
	}
	set = prompts.ExemplarSet(r.ex.Dataset)
	if needSet && set == "" && shots > 0 {
		return "", fmt.Errorf("shots %d asked for, but dataset %q has no exemplar set (the authors have them for 2WikiMultihopQA and HotpotQA)", shots, r.ex.Dataset)
	}
	if r.demos, err = demos(r.env.Prompts, set, shots); err != nil {
		return set, err
	}
	r.caseText = r.env.Prompts.Case(set, r.ex.Question)
	return set, nil
}

// builtPrompt is the prompt of a method that answers from a retrieved context (answerWithContext),
// in place of the template's parts: the dataset's exemplars (the authors' count; none for a dataset
// without a set), the context block of the units' texts (white space folded) and the question, as
// prompts.Builder builds them.
func (r *core) builtPrompt(units []ContextUnit) (string, error) {
	b, err := r.env.Prompts.Builder(prompts.Options{Exemplars: prompts.ExemplarSet(r.ex.Dataset), Shots: -1})
	if err != nil {
		return "", err
	}
	passages := make([]string, len(units))
	for i, u := range units {
		passages[i] = strings.Join(strings.Fields(u.Text), " ")
	}
	return b.Build(r.ex.Question, passages), nil
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

// event records e; an event without a Kind (one a wording cleared) is not recorded.
func (r *core) event(e Event) {
	if e.Kind == "" {
		return
	}
	r.round = max(r.round, e.Round)
	r.trace = append(r.trace, e)
}

// retrieve retrieves k passages for query, pads them to k with empty passages (unless noPad), and
// records it; it returns their texts.
func (r *core) retrieve(ctx context.Context, round int, query string, k int, why string) ([]string, error) {
	ps, err := r.retrievePassages(ctx, round, query, k, why)
	return texts(ps), err
}

// retrievePassages is retrieve returning the passages with their ids.
func (r *core) retrievePassages(ctx context.Context, round int, query string, k int, why string) ([]passage, error) {
	hits, err := r.env.Retriever.Retrieve(ctx, query, k)
	r.signals["retrieved"] = 1
	ev := Event{Round: round, Kind: "retrieve", Query: query}
	if err != nil {
		err = r.words.retrieved(&ev, why, err)
		r.event(ev)
		return nil, err
	}
	ps, padded := passages(hits, k, !r.noPad)
	ev.IDs = hitIDs(hits)
	_ = r.words.retrieved(&ev, why+padded, nil)
	r.event(ev)
	return ps, nil
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
	return r.generateReq(ctx, Event{Round: round}, req)
}

// generateReq makes the generator call req and records it as ev (its Round set, and whatever else
// the method's event carries).
func (r *core) generateReq(ctx context.Context, ev Event, req llm.Request) (llm.Response, error) {
	resp, err := r.env.Generator.Generate(ctx, req)
	ev.Kind = "generate"
	if err == nil {
		ev.Text = resp.Text
	}
	err = r.words.generated(&ev, resp, req, err)
	r.event(ev)
	return resp, err
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
	return Prediction{Raw: raw, Trace: r.trace, Signals: r.signals}
}

// finish strips the generated text (unless asIs), as the authors' runner does, applies Finish and
// records the "answer" event.
func (r *core) finish(ctx context.Context, txt string, o FinishOptions) (Prediction, error) {
	raw := txt
	if !r.asIs {
		raw = strings.TrimSpace(txt)
	}
	final, ans, err := Finish(ctx, r.env, r.ex.Dataset, r.ex.Question, raw, o)
	asked := o.Complete && prompts.ExemplarSet(r.ex.Dataset) != "" && needsCompletion(raw)
	ev := Event{Round: r.round, Kind: "answer", Text: final}
	err = r.words.answered(&ev, raw, ans, asked, err)
	r.event(ev)
	p := r.pred(final)
	p.Answer = ans
	return p, err
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
