package methods

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"

	"github.com/ragbench/ragbench/harness/llm"
	"github.com/ragbench/ragbench/harness/text"
)

func init() {
	registerCore("flare", DefaultFlare, flare, "generator", "retriever", "prompts")
}

// FlareConfig configures the official look-ahead FLARE ("flare"). The defaults are those of the
// authors' 2WikiMultihopQA config (jzbjyb/FLARE configs/2wikihop_flare_config.json and openai.sh).
type FlareConfig struct {
	// PromptKey, Shots and the answer step as for the baselines; the prompt is the demos, the
	// template's hallucination section with the current passages, its instruction, the case and the
	// text generated so far. generate_max_length is not used: MaxGenerationLen bounds the answer.
	PromptKey string `json:"prompt_key"`
	Shots     int    `json:"shots"`
	FinishOptions
	// TopK is the number of passages per retrieval (default 2); each retrieval replaces the passages.
	TopK int `json:"top_k"`
	// RetrieveQuestionFirst retrieves with the question before the first step (look_ahead_pre_retrieval
	// "first"; default true).
	RetrieveQuestionFirst bool `json:"retrieve_question_first"`
	// LookAheadTokens bounds each look-ahead (look_ahead_steps, default 64) and each step.
	LookAheadTokens int `json:"look_ahead_steps"`
	// FilterProb: a look-ahead with some token of probability <= it triggers retrieval
	// (look_ahead_filter_prob, default 0.8; 0 turns the filter off, so every step retrieves).
	FilterProb float64 `json:"look_ahead_filter_prob"`
	// MaskProb: tokens of probability <= it are blanked out of the query (look_ahead_mask_prob,
	// default 0.4; 0 keeps the whole look-ahead).
	MaskProb float64 `json:"look_ahead_mask_prob"`
	// MaxGenerationLen bounds the generated tokens (max_generation_len, default 256).
	MaxGenerationLen int `json:"max_generation_len"`
	// MinSentenceChars: a look-ahead is cut at the end of its first sentence that ends at least this
	// many characters in (min_sent_len, default 5).
	MinSentenceChars int `json:"min_sentence_chars"`
	// Stop is the final stop sequence sent with every call (final_stop_sym, default "\n\n").
	Stop string `json:"stop"`
}

// DefaultFlare returns the official FLARE's defaults.
func DefaultFlare() FlareConfig {
	return FlareConfig{PromptKey: "llama-2", Shots: -1, FinishOptions: DefaultFinish, TopK: 2, RetrieveQuestionFirst: true,
		LookAheadTokens: 64, FilterProb: 0.8, MaskProb: 0.4, MaxGenerationLen: 256, MinSentenceChars: 5, Stop: "\n\n"}
}

// Validate reports the first invalid field.
func (c FlareConfig) Validate() error {
	g := c.generation()
	g.MaxTokens = 1 // max_generation_len is checked below, by its own name
	if err := g.Validate(); err != nil {
		return err
	}
	switch {
	case c.TopK < 1:
		return fmt.Errorf("top_k %d: want at least 1", c.TopK)
	case c.LookAheadTokens < 1:
		return fmt.Errorf("look_ahead_steps %d: want at least 1", c.LookAheadTokens)
	case c.MaxGenerationLen < 1:
		return fmt.Errorf("max_generation_len %d: want at least 1", c.MaxGenerationLen)
	case !(c.FilterProb >= 0 && c.FilterProb <= 1):
		return fmt.Errorf("look_ahead_filter_prob %v: want a value in [0, 1]", c.FilterProb)
	case !(c.MaskProb >= 0 && c.MaskProb <= 1):
		return fmt.Errorf("look_ahead_mask_prob %v: want a value in [0, 1]", c.MaskProb)
	case c.MinSentenceChars < 0:
		return errors.New("min_sentence_chars must not be negative")
	}
	return nil
}

// generation returns the settings the core's setup reads.
func (c FlareConfig) generation() GenerationConfig {
	return GenerationConfig{PromptKey: c.PromptKey, Shots: c.Shots, MaxTokens: c.MaxGenerationLen, FinishOptions: c.FinishOptions}
}

// flareStep is one generation cut at its first sentence end.
type flareStep struct {
	text   string
	toks   []llm.TokenLogprob
	reason string // stop, length or boundary
}

// flare is the official look-ahead FLARE ("flare"): retrieve with the question; then, step by step,
// generate a look-ahead of up to look_ahead_steps tokens cut at its first sentence end; if some token
// of it has probability <= look_ahead_filter_prob, retrieve with the look-ahead minus its tokens of
// probability <= look_ahead_mask_prob and regenerate the step from the new passages, else keep the
// look-ahead; one sentence per step, until the model stops or max_generation_len tokens.
func flare(ctx context.Context, r *core, cfg FlareConfig) (Prediction, error) {
	sec := r.tmpl.Hallucination
	var docs []string
	if cfg.RetrieveQuestionFirst {
		var err error
		if docs, err = r.retrieve(ctx, 0, r.ex.Question, cfg.TopK, "the question (before the first step)"); err != nil {
			return r.pred(""), err
		}
	}
	txt := ""
	used := 0
	call := func(round, maxTok int) (flareStep, error) {
		prompt := r.demos + sec.Docs(docs) + sec.Instruction + r.caseText + txt
		req := llm.Request{Endpoint: llm.Completions, Prompt: prompt, MaxTokens: max(2, maxTok), Logprobs: -1}
		if cfg.Stop != "" {
			req.Stop = []string{cfg.Stop}
		}
		resp, err := r.generateReq(ctx, Event{Round: round}, req)
		if err != nil {
			return flareStep{}, err
		}
		if err := r.needLogprobs(resp); err != nil {
			return flareStep{}, err
		}
		return flareCut(resp, cfg.MinSentenceChars, cfg.Stop), nil
	}
	for round := 1; used < cfg.MaxGenerationLen && round <= cfg.MaxGenerationLen+1; round++ {
		la, err := call(round, cfg.LookAheadTokens)
		if err != nil {
			return r.pred(txt), err
		}
		query, low := flareQuery(la, cfg.FilterProb, cfg.MaskProb)
		ev := Event{Round: round, Kind: "lookahead", Text: la.text, Threshold: Threshold(cfg.FilterProb)}
		for _, t := range la.toks {
			p := math.Exp(t.Logprob)
			it := Item{Name: t.Text, Value: flRound4(p)}
			if p <= cfg.MaskProb {
				it.Flag, it.Note = true, "masked"
			} else if p <= cfg.FilterProb {
				it.Note = "low"
			}
			ev.Items = append(ev.Items, it)
		}
		step := la
		if query != "" {
			ev.Decision = "retrieve"
			ev.Query = query
			ev.Reason = fmt.Sprintf("%d token(s) with p <= %g; masked tokens with p <= %g", low, cfg.FilterProb, cfg.MaskProb)
			r.event(ev)
			if docs, err = r.retrieve(ctx, round, query, cfg.TopK, "the masked look-ahead"); err != nil {
				return r.pred(txt), err
			}
			if step, err = call(round, min(cfg.MaxGenerationLen-used, cfg.LookAheadTokens)); err != nil {
				return r.pred(txt), err
			}
			r.event(Event{Round: round, Kind: "regenerate", Text: step.text, Decision: "accept", Reason: "step regenerated from the new passages, cut at its first sentence end"})
		} else {
			ev.Decision = "accept"
			switch {
			case low == 0 && cfg.FilterProb > 0:
				ev.Reason = fmt.Sprintf("every token has p > %g", cfg.FilterProb)
			default:
				ev.Reason = "empty query"
			}
			r.event(ev)
			if rest := cfg.MaxGenerationLen - used; len(step.toks) > max(2, rest) {
				step = flareTrim(step, max(2, rest))
			}
		}
		used += len(step.toks)
		txt += step.text
		if step.reason == "stop" || len(step.toks) == 0 {
			r.event(Event{Round: round, Kind: "stop", Decision: "stop", Reason: "the model stopped (end of text or the stop sequence)"})
			break
		}
		if used >= cfg.MaxGenerationLen {
			r.event(Event{Round: round, Kind: "stop", Decision: "stop", Reason: fmt.Sprintf("length: %d generated tokens >= %d", used, cfg.MaxGenerationLen)})
		}
	}
	return r.finish(ctx, txt, cfg.FinishOptions)
}

// flareCut applies the official truncate_at_boundary to a response: the text is cut at the end of
// its first sentence ending at least minChars characters in (trailing spaces excluded), moved to the
// start of the first token at or after that point, and the tokens from that token on are dropped;
// a cut step has reason "boundary". A response of at most one token is left whole. The stop
// sequence, if present, ends the step.
func flareCut(resp llm.Response, minChars int, stop string) flareStep {
	st := flareStep{text: resp.Text, toks: resp.Tokens, reason: resp.FinishReason}
	if st.reason != "length" {
		st.reason = "stop"
	}
	if len(st.toks) > 1 {
		breakAt := len(st.text)
		for _, sp := range text.SentenceSpans(st.text) {
			if pyLen(st.text[:sp.End]) >= minChars {
				breakAt = sp.End
				break
			}
		}
		if breakAt > 0 && breakAt < len(st.text) {
			offs := flTokenOffsets(st.text, st.toks)
			i := 0
			for i = range st.toks {
				if offs[i] >= breakAt {
					breakAt = offs[i]
					break
				}
			}
			if i > 0 {
				st.toks = st.toks[:i]
			}
			st.text = st.text[:breakAt]
			st.reason = "boundary"
		}
	}
	if stop != "" {
		if p := strings.Index(st.text, stop); p >= 0 {
			st.text = st.text[:p]
			offs := flTokenOffsets(resp.Text, st.toks)
			n := 0
			for n < len(st.toks) && offs[n] >= 0 && offs[n] < p {
				n++
			}
			st.toks = st.toks[:n]
			st.reason = "stop"
		}
	}
	return st
}

// flareTrim keeps the first n tokens of a step (a look-ahead longer than the tokens left).
func flareTrim(st flareStep, n int) flareStep {
	var b strings.Builder
	for _, t := range st.toks[:n] {
		b.WriteString(t.Text)
	}
	return flareStep{text: b.String(), toks: st.toks[:n], reason: "length"}
}

// flareQuery is the official use_as_query with the "simple" mask: "" (no retrieval) when no token
// has probability <= filter (filter > 0); else the tokens with probability > mask, the others
// replaced by a space, joined and stripped (mask 0: the whole text). It also returns the number of
// tokens at or under the filter.
func flareQuery(st flareStep, filter, mask float64) (string, int) {
	low := 0
	for _, t := range st.toks {
		if math.Exp(t.Logprob) <= filter {
			low++
		}
	}
	if filter == 0 && mask == 0 {
		return st.text, low
	}
	if filter > 0 && low == 0 {
		return "", 0
	}
	if mask == 0 {
		return st.text, low
	}
	var b strings.Builder
	for _, t := range st.toks {
		if math.Exp(t.Logprob) > mask {
			b.WriteString(t.Text)
		} else {
			b.WriteString(" ")
		}
	}
	return strings.TrimSpace(b.String()), low
}
