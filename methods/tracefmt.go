package methods

import (
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
)

// FormatTrace writes a prediction for a reader debugging one question: the answer, the counters, the
// retrievals, then the trace with one line per event ("[round] kind: decision — reason") and its
// text, query, ids and items indented beneath it. Texts are quoted (Go syntax) so that white space
// and newlines stay visible.
func FormatTrace(w io.Writer, p Prediction) error {
	b := &strings.Builder{}
	fmt.Fprintf(b, "answer: %q\n", p.Answer)
	fmt.Fprintf(b, "raw output: %q\n", p.Raw)
	c := p.Counters
	fmt.Fprintf(b, "counters: #Ret %d, #Call %d, #Tok %d, prompt tokens %d, answer calls %d (%d tokens), llm cache hits %d, n-gram queries %d, extractor calls %d\n",
		c.Retrievals, c.Calls, c.GeneratedTokens, c.PromptTokens, c.AnswerCalls, c.AnswerTokens, c.LLMCacheHits, c.NgramQueries, c.ExtractorCalls)
	if len(p.Signals) > 0 {
		keys := make([]string, 0, len(p.Signals))
		for k := range p.Signals {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		parts := make([]string, len(keys))
		for i, k := range keys {
			parts[i] = k + "=" + traceNum(p.Signals[k])
		}
		fmt.Fprintf(b, "signals: %s\n", strings.Join(parts, ", "))
	}
	for i, r := range p.Retrieved {
		name := r.Retriever
		if name == "" {
			name = "retriever"
		}
		fmt.Fprintf(b, "retrieval %d (%s, k=%d): %q -> %s\n", i+1, name, r.K, r.Query, strings.Join(r.IDs, ", "))
	}
	fmt.Fprintf(b, "trace (%d events):\n", len(p.Trace))
	for _, e := range p.Trace {
		fmt.Fprintf(b, "[%d] %s", e.Round, e.Kind)
		if e.Decision != "" {
			fmt.Fprintf(b, ": %s", e.Decision)
		}
		if e.Reason != "" {
			fmt.Fprintf(b, " — %s", e.Reason)
		}
		if e.Threshold != nil {
			fmt.Fprintf(b, " (threshold %s)", traceNum(*e.Threshold))
		}
		b.WriteString("\n")
		if e.Text != "" {
			fmt.Fprintf(b, "    text: %q\n", e.Text)
		}
		if e.Query != "" {
			fmt.Fprintf(b, "    query: %q\n", e.Query)
		}
		if len(e.IDs) > 0 {
			fmt.Fprintf(b, "    ids: %s\n", strings.Join(e.IDs, ", "))
		}
		for _, it := range e.Items {
			mark := " "
			if it.Flag {
				mark = "*"
			}
			fmt.Fprintf(b, "    %s %q %s", mark, it.Name, traceNum(it.Value))
			if it.Note != "" {
				fmt.Fprintf(b, " (%s)", it.Note)
			}
			b.WriteString("\n")
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func traceNum(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }
