package methods

import (
	"context"
	"fmt"
	"math"
	"strings"

	"github.com/ragbench/ragbench/harness/llm"
	"github.com/ragbench/ragbench/harness/text"
)

// Two of the algorithms called FLARE, labelled apart (docs/methods.md):
//
//   - "flare-token": DRAGIN's TokenRAG, which produced the FLARE rows of the DRAGIN and QuCo-RAG
//     tables (QuCo-RAG's configs call it "flare"; its code runs it as "token").
//   - "flare" (flare.go): the official look-ahead FLARE of jzbjyb/FLARE.

func init() {
	registerCore("flare-token", DefaultFlareToken, flareToken, "generator", "retriever", "prompts")
}

// FlareTokenConfig configures flare-token.
type FlareTokenConfig struct {
	RetrievalConfig
	// Threshold is hallucination_threshold: a sentence whose mean (1 − p) over its tokens exceeds it
	// triggers retrieval, and its tokens with 1 − p above it are masked out of the query. Default 0.1
	// (the authors' 2WikiMultihopQA configs, and HotpotQA with Llama-3-8B and Qwen2.5-32B; their
	// HotpotQA configs for OLMo-2 and Qwen2.5-7B use 0.08).
	Threshold float64 `json:"hallucination_threshold"`
	// SentenceSolver aggregates a sentence's (1 − p): avg (default, every authors' config), max or min.
	SentenceSolver string `json:"sentence_solver"`
	// QueryFormulation is direct (default: the trigger sentence with its uncertain tokens removed) or
	// forward_all (the question, the text so far and the kept sentences, joined by spaces).
	QueryFormulation string `json:"query_formulation"`
	// ExactTokenMapping corrects two quirks of the authors' code: tokens are mapped to sentences by
	// their character offsets, so that each sentence is scored on exactly its own tokens (the authors'
	// mapping advances with a wrong offset and scores each sentence one token past its end), and the
	// mask replaces exactly the uncertain tokens (the authors' can index from the sentence's end when
	// a token is not found). Default false: the authors' behaviour.
	ExactTokenMapping bool `json:"exact_token_mapping"`
}

// DefaultFlareToken returns flare-token's defaults.
func DefaultFlareToken() FlareTokenConfig {
	return FlareTokenConfig{RetrievalConfig: blDefaultRetrieval(), Threshold: 0.1, SentenceSolver: "avg", QueryFormulation: "direct"}
}

// Validate reports the first invalid field.
func (c FlareTokenConfig) Validate() error {
	if err := c.RetrievalConfig.Validate(); err != nil {
		return err
	}
	switch {
	case c.Threshold < 0 || c.Threshold > 1 || math.IsNaN(c.Threshold):
		return fmt.Errorf("hallucination_threshold %v: want a value in [0, 1]", c.Threshold)
	case c.SentenceSolver != "avg" && c.SentenceSolver != "max" && c.SentenceSolver != "min":
		return fmt.Errorf("sentence_solver %q: want avg, max or min", c.SentenceSolver)
	case c.QueryFormulation != "direct" && c.QueryFormulation != "forward_all":
		return fmt.Errorf("query_formulation %q: want direct or forward_all", c.QueryFormulation)
	}
	return nil
}

// flareToken is DRAGIN's TokenRAG ("flare-token"): generate the whole continuation with token
// probabilities; the first sentence whose mean (1 − p) exceeds the threshold triggers a retrieval
// with that sentence minus its uncertain tokens; the sentences before it are kept and the whole
// regeneration from the retrieved passages is appended; repeat until a stop rule fires.
func flareToken(ctx context.Context, r *core, cfg FlareTokenConfig) (Prediction, error) {
	sec := r.tmpl.Hallucination
	txt := ""
	for round := 1; ; round++ {
		oldLen := pyLen(txt)
		prompt := r.demos + r.caseText + " " + txt
		resp, err := r.generate(ctx, round, prompt, cfg.MaxTokens, true)
		if err != nil {
			return r.pred(txt), err
		}
		if err := r.needLogprobs(resp); err != nil {
			return r.pred(txt), err
		}
		var chk flTokenCheck
		if cfg.ExactTokenMapping {
			chk = flExactCheck(resp.Text, resp.Tokens, cfg.Threshold, cfg.SentenceSolver)
		} else {
			chk = flAuthorsCheck(resp.Text, resp.Tokens, cfg.Threshold, cfg.SentenceSolver)
		}
		for _, s := range chk.sentences {
			s.ev.Round = round
			r.event(s.ev)
		}
		if !chk.hallucinated {
			r.event(Event{Round: round, Kind: "no-trigger", Decision: "accept", Reason: "no sentence above the threshold; the whole generation is kept"})
			txt = strings.TrimSpace(txt) + " " + strings.TrimSpace(resp.Text)
		} else {
			var query string
			if cfg.QueryFormulation == "direct" {
				query = strings.ReplaceAll(chk.masked, "[xxx]", "")
			} else {
				var parts []string
				for _, s := range []string{r.ex.Question, txt, chk.prev} {
					if s != "" {
						parts = append(parts, s)
					}
				}
				query = strings.Join(parts, " ")
			}
			r.event(Event{Round: round, Kind: "query", Text: chk.masked, Query: query, Decision: "retrieve",
				Reason: fmt.Sprintf("%s query from the trigger sentence; kept before it: %q", cfg.QueryFormulation, chk.prev)})
			docs, err := r.retrieve(ctx, round, query, cfg.TopK, "the masked trigger sentence")
			if err != nil {
				return r.pred(txt), err
			}
			prev := strings.TrimSpace(chk.prev)
			prompt := r.demos + sec.Docs(docs) + sec.Instruction + r.caseText + " " + txt + " " + prev
			resp, err := r.generate(ctx, round, prompt, cfg.MaxTokens, false)
			if err != nil {
				return r.pred(txt), err
			}
			r.event(Event{Round: round, Kind: "regenerate", Text: strings.TrimSpace(resp.Text), Decision: "accept", Reason: "the whole regeneration is kept"})
			txt = strings.TrimSpace(txt) + " " + prev + " " + strings.TrimSpace(resp.Text)
		}
		if stop := loopStop(txt, oldLen, cfg.MaxTokens); stop != "" {
			r.event(Event{Round: round, Kind: "stop", Decision: "stop", Reason: stop})
			break
		}
	}
	return r.finish(ctx, txt, cfg.FinishOptions)
}

// flTokenCheck is the outcome of TokenRAG's check of one generation.
type flTokenCheck struct {
	sentences    []flCheckedSentence
	hallucinated bool
	// prev is the sentences before the trigger, joined by spaces; masked is the trigger sentence
	// with its uncertain tokens replaced by "[xxx]".
	prev, masked string
}

type flCheckedSentence struct {
	ev Event
}

// solve aggregates scores as numpy does: the mean of nothing is NaN (which exceeds no threshold);
// max and min of nothing are undefined (the authors' code raises), reported as ok false.
func flSolve(solver string, xs []float64) (float64, bool) {
	if len(xs) == 0 {
		return math.NaN(), false
	}
	v := xs[0]
	sum := 0.0
	for _, x := range xs {
		sum += x
		switch solver {
		case "max":
			v = max(v, x)
		case "min":
			v = min(v, x)
		}
	}
	if solver == "avg" {
		v = sum / float64(len(xs))
	}
	return v, true
}

func flSentenceEvent(sent string, toks []llm.TokenLogprob, scores []float64, p float64, ok bool, thr float64, solver string) Event {
	items := make([]Item, 0, len(toks))
	for i, t := range toks {
		it := Item{Name: t.Text, Value: flRound4(math.Exp(t.Logprob))}
		if i < len(scores) && scores[i] > thr {
			it.Flag = true
			it.Note = "uncertain"
		}
		items = append(items, it)
	}
	ev := Event{Kind: "sentence", Text: sent, Threshold: Threshold(thr), Items: items}
	switch {
	case !ok:
		ev.Decision = "accept"
		ev.Reason = fmt.Sprintf("no tokens mapped to the sentence (%s of nothing): not a trigger", solver)
	case p > thr:
		ev.Decision = "trigger"
		ev.Reason = fmt.Sprintf("%s(1-p) over %d token(s) = %.4f > %g", solver, len(scores), p, thr)
	default:
		ev.Decision = "accept"
		ev.Reason = fmt.Sprintf("%s(1-p) over %d token(s) = %.4f <= %g", solver, len(scores), p, thr)
	}
	return ev
}

func flRound4(x float64) float64 { return math.Round(x*1e4) / 1e4 }

// flAuthorsCheck is TokenRAG's modifier as the authors' code runs it, in Python string semantics
// (indices count code points, slices clamp, a negative start counts from the end):
//
//   - the generation is split into sentences (stripped, empty ones dropped);
//   - from token tid on, tokens are consumed while each is found in the sentence after pos, where
//     pos is set to the token's offset within the remainder (not within the sentence) plus its
//     length; the sentence is scored on tokens tid..tr inclusive (one past the last consumed), and
//     the next sentence starts at tr+1;
//   - in the trigger sentence each scored token is searched after pos and, when its 1 − p exceeds
//     the threshold, replaced by "[xxx]"; a token not found gives the position pos−1 (−1 at the
//     start, which slices from the end).
func flAuthorsCheck(gen string, toks []llm.TokenLogprob, thr float64, solver string) flTokenCheck {
	return flAuthorsCheckSentences(text.SplitSentences(gen), toks, thr, solver)
}

// flAuthorsCheckSentences is flAuthorsCheck on a generation already split into sentences.
func flAuthorsCheckSentences(sents []string, toks []llm.TokenLogprob, thr float64, solver string) flTokenCheck {
	var out flTokenCheck
	tid := 0
	for sid, sent := range sents {
		s := []rune(sent)
		pos, tr := 0, tid
		for tr < len(toks) {
			apr := flPyFind(flPySlice(s, pos, len(s)), []rune(toks[tr].Text))
			if apr == -1 {
				break
			}
			pos = apr + len([]rune(toks[tr].Text))
			tr++
		}
		lo, hi := min(tid, len(toks)), min(tr+1, len(toks))
		scored := toks[lo:hi]
		scores := make([]float64, len(scored))
		for i, t := range scored {
			scores[i] = 1 - math.Exp(t.Logprob)
		}
		p, ok := flSolve(solver, scores)
		ev := flSentenceEvent(sent, scored, scores, p, ok, thr, solver)
		out.sentences = append(out.sentences, flCheckedSentence{ev})
		if ok && p > thr {
			out.hallucinated = true
			out.prev = strings.Join(sents[:sid], " ")
			curr := s
			pos := 0
			for i, t := range scored {
				tok := []rune(t.Text)
				apr := flPyFind(flPySlice(curr, pos, len(curr)), tok) + pos
				if scores[i] > thr {
					var b []rune
					b = append(b, flPySlice(curr, 0, apr)...)
					b = append(b, []rune("[xxx]")...)
					b = append(b, flPySlice(curr, apr+len(tok), len(curr))...)
					curr = b
					pos = apr + len("[xxx]")
				} else {
					pos = apr + len(tok)
				}
			}
			out.masked = string(curr)
			return out
		}
		tid = tr + 1
	}
	return out
}

// pySlice is Python's s[i:j] for code points: negative indices count from the end, and both ends
// are clamped to [0, len(s)].
func flPySlice(s []rune, i, j int) []rune {
	n := len(s)
	norm := func(x int) int {
		if x < 0 {
			x += n
			if x < 0 {
				x = 0
			}
		}
		if x > n {
			x = n
		}
		return x
	}
	i, j = norm(i), norm(j)
	if i >= j {
		return nil
	}
	return s[i:j]
}

// pyFind is Python's s.find(sub) in code points.
func flPyFind(s, sub []rune) int {
	if len(sub) == 0 {
		return 0
	}
	i := strings.Index(string(s), string(sub))
	if i < 0 {
		return -1
	}
	return len([]rune(string(s)[:i]))
}

// flExactCheck is the corrected check (exact_token_mapping): each token belongs to the sentence
// that holds its first non-space character (found by its offset in the generation), each sentence
// is scored on exactly its tokens, and the trigger sentence's uncertain tokens are replaced by
// "[xxx]" at their own offsets.
func flExactCheck(gen string, toks []llm.TokenLogprob, thr float64, solver string) flTokenCheck {
	spans := text.SentenceSpans(gen)
	offs := flTokenOffsets(gen, toks)
	var out flTokenCheck
	var sents []string
	for _, sp := range spans {
		sents = append(sents, gen[sp.Start:sp.End])
	}
	for sid, sp := range spans {
		var own []int
		for i, t := range toks {
			if offs[i] < 0 {
				continue
			}
			core := offs[i] + len(t.Text) - len(strings.TrimLeft(t.Text, " \t\n\r"))
			if core >= sp.Start && core < sp.End {
				own = append(own, i)
			}
		}
		scored := make([]llm.TokenLogprob, len(own))
		scores := make([]float64, len(own))
		for k, i := range own {
			scored[k] = toks[i]
			scores[k] = 1 - math.Exp(toks[i].Logprob)
		}
		p, ok := flSolve(solver, scores)
		ev := flSentenceEvent(sents[sid], scored, scores, p, ok, thr, solver)
		out.sentences = append(out.sentences, flCheckedSentence{ev})
		if ok && p > thr {
			out.hallucinated = true
			out.prev = strings.Join(sents[:sid], " ")
			curr := sents[sid]
			for k := len(own) - 1; k >= 0; k-- {
				if scores[k] <= thr {
					continue
				}
				i := own[k]
				t := toks[i]
				a := offs[i] + len(t.Text) - len(strings.TrimLeft(t.Text, " \t\n\r")) - sp.Start
				b := min(offs[i]+len(t.Text)-sp.Start, len(curr))
				if a < 0 || a > b {
					continue
				}
				curr = curr[:a] + "[xxx]" + curr[b:]
			}
			out.masked = curr
			return out
		}
	}
	return out
}

// tokenOffsets returns the byte offset of each token in gen, searching forward from the end of the
// previous one (-1 when a token is not found; the search then goes on from the same place).
func flTokenOffsets(gen string, toks []llm.TokenLogprob) []int {
	offs := make([]int, len(toks))
	cur := 0
	for i, t := range toks {
		if t.Text == "" {
			offs[i] = -1
			continue
		}
		j := strings.Index(gen[cur:], t.Text)
		if j < 0 {
			offs[i] = -1
			continue
		}
		offs[i] = cur + j
		cur += j + len(t.Text)
	}
	return offs
}
