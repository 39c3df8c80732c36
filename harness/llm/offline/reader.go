package offline

import (
	"context"
	"math"
	"strings"
	"time"

	"github.com/ragbench/ragbench/harness/llm"
	"github.com/ragbench/ragbench/harness/text"
)

// Name is how the offline reader is named in every report, table and log.
const Name = "offline reader (no LLM)"

// Backend is the backend name under which the reader is registered ("offline").
const Backend = "offline"

// Options configure a Reader.
type Options struct {
	// MaxHops bounds the reasoning chain: 1 answers from the best sentence only; 2 (the default, also
	// for 0) also follows a bridge entity to a second sentence.
	MaxHops int
}

// Reader is the offline reader (no LLM). It is stateless and safe for concurrent use.
type Reader struct {
	opts Options
}

// New returns an offline reader.
func New(opts Options) *Reader {
	if opts.MaxHops <= 0 || opts.MaxHops > 2 {
		opts.MaxHops = 2
	}
	return &Reader{opts: opts}
}

// answerLead joins the evidence to the answer, as in the papers' exemplars.
const answerLead = "So the answer is"

// segment kinds of the output, which decide the tokens' pseudo log-probabilities.
const (
	segEvidence = iota
	segFixed
	segAnswer
)

type segment struct {
	start, end int
	kind       int
	conf       float64
	qterms     map[string]bool
}

// Generate answers the prompt of req extractively. It honours MaxTokens (finish reason "length") and
// Stop (finish reason "stop"; the stop sequence is not included). Tokens with pseudo log-probabilities
// are returned when req.Logprobs is not 0, with up to req.Logprobs top alternatives.
func (r *Reader) Generate(ctx context.Context, req llm.Request) (llm.Response, error) {
	if err := ctx.Err(); err != nil {
		return llm.Response{}, err
	}
	start := time.Now()
	p := PromptOf(req)
	out, segs, alts := r.compose(p)

	finish := "stop"
	// Stop sequences: cut at the earliest.
	cut := len(out)
	for _, s := range req.Stop {
		if s == "" {
			continue
		}
		if i := strings.Index(out, s); i >= 0 && i < cut {
			cut = i
		}
	}
	out = out[:cut]
	toks := tokens(out, segs, alts, req.Logprobs)
	if req.MaxTokens > 0 && len(toks) > req.MaxTokens {
		toks = toks[:req.MaxTokens]
		var b strings.Builder
		for _, t := range toks {
			b.WriteString(t.Text)
		}
		out = b.String()
		finish = "length"
	}
	resp := llm.Response{
		Text:         out,
		FinishReason: finish,
		Model:        Name,
		Usage: llm.Usage{
			PromptTokens:     promptTokens(req),
			CompletionTokens: len(toks),
		},
		Latency: time.Since(start),
	}
	if req.Logprobs != 0 {
		resp.Tokens = toks
	}
	return resp, nil
}

func promptTokens(req llm.Request) int {
	n := 0
	count := func(s string) { text.EachSpan(s, func(int, int) { n++ }) }
	count(req.Prompt)
	for _, m := range req.Messages {
		count(m.Content)
	}
	return n
}

// compose builds the output text and its segments, continuing any partial answer: when the partial
// answer is the beginning of the reader's own answer (up to white space), the rest of it follows, cut
// mid-sentence or mid-word if need be, as a model would continue; otherwise the evidence sentences the
// partial answer lacks follow, then the answer. A partial answer that already gives an answer after
// "So the answer is" gets nothing more.
func (r *Reader) compose(p Prompt) (string, []segment, []candidate) {
	low := strings.ToLower(p.Partial)
	if i := strings.LastIndex(low, strings.ToLower(answerLead)); i >= 0 && strings.TrimSpace(strings.Trim(p.Partial[i+len(answerLead):], " .")) != "" {
		return "", nil, nil // already answered
	}
	pl := read(p, r.opts.MaxHops)
	qset := termSet(terms(p.Question))
	full, segs := build(pl, qset, nil, false)
	if p.Partial == "" {
		return full, segs, pl.alts
	}
	if cut, ok := prefixEnd(full, p.Partial); ok {
		return full[cut:], shift(segs, cut), pl.alts
	}
	partial := normSpace(p.Partial)
	lead := !strings.HasSuffix(p.Partial, " ") && !strings.HasSuffix(p.Partial, "\n")
	out, segs := build(pl, qset, func(e evidence) bool { return strings.Contains(partial, normSpace(e.text)) }, lead)
	return out, segs, pl.alts
}

// build writes the plan as "<evidence> So the answer is <answer>." with its segments, leaving out
// the evidence skip says to, and starting with a space when lead is set.
func build(pl plan, qset map[string]bool, skip func(evidence) bool, lead bool) (string, []segment) {
	var b strings.Builder
	var segs []segment
	add := func(s string, kind int, conf float64) {
		sep := ""
		if b.Len() > 0 || lead {
			sep = " "
		}
		start := b.Len()
		b.WriteString(sep)
		b.WriteString(s)
		segs = append(segs, segment{start: start, end: b.Len(), kind: kind, conf: conf, qterms: qset})
	}
	for _, e := range pl.evidence {
		if skip != nil && skip(e) {
			continue
		}
		add(e.text, segEvidence, e.conf)
	}
	add(answerLead, segFixed, 0.98)
	add(pl.answer, segAnswer, pl.conf)
	start := b.Len()
	b.WriteString(".")
	segs = append(segs, segment{start: start, end: b.Len(), kind: segFixed, conf: 0.98})
	return b.String(), segs
}

// prefixEnd reports whether partial is a beginning of full when white space is ignored, and where in
// full it ends.
func prefixEnd(full, partial string) (int, bool) {
	i, j := 0, 0
	for {
		for j < len(partial) && isSpaceByte(partial[j]) {
			j++
		}
		if j == len(partial) {
			return i, true
		}
		for i < len(full) && isSpaceByte(full[i]) {
			i++
		}
		if i == len(full) || full[i] != partial[j] {
			return 0, false
		}
		i++
		j++
	}
}

func isSpaceByte(c byte) bool { return c == ' ' || c == '\n' || c == '\t' || c == '\r' }

// shift moves segments to offsets in full[cut:], dropping those that end before cut.
func shift(segs []segment, cut int) []segment {
	var out []segment
	for _, s := range segs {
		if s.end <= cut {
			continue
		}
		s.start, s.end = max(s.start-cut, 0), s.end-cut
		out = append(out, s)
	}
	return out
}

func normSpace(s string) string { return strings.Join(strings.Fields(s), " ") }

// tokens cuts text into harness/text tokens that carry their leading white space (the last token
// also carries trailing white space), so that their concatenation is text, and gives each its pseudo
// log-probability (see the package documentation).
func tokens(out string, segs []segment, alts []candidate, top int) []llm.TokenLogprob {
	var spans []text.Span
	spans = text.AppendSpans(spans, out)
	toks := make([]llm.TokenLogprob, 0, len(spans))
	firstAnswer := true
	for i, sp := range spans {
		from := 0
		if i > 0 {
			from = spans[i-1].End
		}
		to := sp.End
		if i == len(spans)-1 {
			to = len(out)
		}
		core := out[sp.Start:sp.End]
		seg := segmentAt(segs, sp.Start)
		p := 0.95
		switch seg.kind {
		case segFixed:
			p = seg.conf
		case segAnswer:
			p = seg.conf
		case segEvidence:
			switch {
			case !isContent(core):
				p = 0.95
			case seg.qterms[stem(core)]:
				p = 0.5 + 0.5*seg.conf
			default:
				p = seg.conf
			}
		}
		lp := math.Log(clamp(p))
		t := llm.TokenLogprob{Text: out[from:to], Logprob: lp}
		if top > 0 {
			t.Top = []llm.Alternative{{Text: t.Text, Logprob: lp}}
			if seg.kind == segAnswer && firstAnswer {
				for _, a := range alts {
					if len(t.Top) >= top {
						break
					}
					w := text.Words(a.text)
					if len(w) == 0 {
						continue
					}
					t.Top = append(t.Top, llm.Alternative{Text: " " + w[0], Logprob: math.Log(clamp(a.conf))})
				}
			}
		}
		if seg.kind == segAnswer {
			firstAnswer = false
		}
		toks = append(toks, t)
	}
	return toks
}

func segmentAt(segs []segment, pos int) segment {
	for _, s := range segs {
		if pos >= s.start && pos < s.end {
			return s
		}
	}
	return segment{kind: segFixed, conf: 0.98}
}

func clamp(p float64) float64 {
	if math.IsNaN(p) {
		return 0.001
	}
	return math.Min(0.999, math.Max(0.001, p))
}
