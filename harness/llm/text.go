package llm

import (
	"fmt"
	"io"
	"math"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/ragbench/ragbench/internal/transport"
)

// Describe names the backend of c for messages: "backend NAME", or "backend openai at URL" with the
// URL's credentials redacted.
func (c Config) Describe() string {
	if c.Backend != "openai" {
		return "backend " + c.Backend
	}
	return fmt.Sprintf("backend openai at %s", transport.RedactURL(c.BaseURL))
}

// Describe renders u as "prompt P, completion C", noting when the counts are estimated.
func (u Usage) Describe() string {
	s := fmt.Sprintf("prompt %d, completion %d", u.PromptTokens, u.CompletionTokens)
	if u.Estimated {
		s += " (estimated: the server reported none)"
	}
	return s
}

// WriteText writes r readably: the text, model, finish reason, latency, usage, and a table of the
// tokens with their log-probabilities, probabilities and top alternatives.
func (r Response) WriteText(w io.Writer) {
	fmt.Fprintf(w, "text: %q\n", r.Text)
	fmt.Fprintf(w, "model: %s  finish: %s  latency: %v  retries: %d  cached: %v\n", r.Model, r.FinishReason, r.Latency.Round(time.Millisecond), r.Retries, r.Cached)
	fmt.Fprintf(w, "usage: %s\n", r.Usage.Describe())
	if len(r.Tokens) == 0 {
		fmt.Fprintln(w, "tokens: none (no log-probabilities asked for, or the server returned none)")
		return
	}
	fmt.Fprintf(w, "tokens: %d\n", len(r.Tokens))
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "#\ttoken\tlogprob\tp\ttop alternatives")
	for i, t := range r.Tokens {
		var alts []string
		for _, a := range t.Top {
			alts = append(alts, fmt.Sprintf("%q %.3f", a.Text, a.Logprob))
		}
		fmt.Fprintf(tw, "%d\t%q\t%.4f\t%.3f\t%s\n", i, t.Text, t.Logprob, Prob(t.Logprob), strings.Join(alts, ", "))
	}
	tw.Flush()
}

// Prob is exp(lp), or 0 for UnknownLogprob (and anything below it).
func Prob(lp float64) float64 {
	if lp <= UnknownLogprob {
		return 0
	}
	return math.Exp(lp)
}

// WriteText writes the bench result readably: calls per second, latency percentiles, and the token,
// retry and cache totals of the client's ledger (tot).
func (r BenchResult) WriteText(w io.Writer, tot Totals) {
	ok, el := len(r.Latencies), r.Elapsed
	fmt.Fprintf(w, "requests %d ok, %d failed in %v: %.1f calls/s\n", ok, r.Failed, el.Round(time.Millisecond), float64(ok)/el.Seconds())
	fmt.Fprintf(w, "latency p50 %v  p90 %v  p99 %v  max %v\n", r.Percentile(0.50).Round(time.Microsecond), r.Percentile(0.90).Round(time.Microsecond),
		r.Percentile(0.99).Round(time.Microsecond), r.Percentile(1).Round(time.Microsecond))
	fmt.Fprintf(w, "tokens prompt %d, completion %d (%.1f completion tokens/s); retries %d; cache hits %d\n", tot.PromptTokens, tot.CompletionTokens, float64(tot.CompletionTokens)/el.Seconds(), tot.Retries, tot.CacheHits)
}

// ParseStops turns stop sequences as typed on a command line into requests' stops: each \n (a
// backslash and n) becomes a newline.
func ParseStops(typed []string) []string {
	var out []string
	for _, s := range typed {
		out = append(out, strings.ReplaceAll(s, `\n`, "\n"))
	}
	return out
}
