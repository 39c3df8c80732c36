package datasets

import (
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"text/tabwriter"
	"unicode/utf8"
)

// WriteText prints the report for reading: name and layout, files, row counts, the columns with
// their types, the answer and context statistics, the label counts and the first example (at most
// three contexts, each shortened to about 300 bytes). Warnings are not printed.
func (r *Report) WriteText(w io.Writer) error {
	fmt.Fprintf(w, "dataset  %s (layout %s)\n", r.Name, r.Layout)
	for _, f := range r.Files {
		fmt.Fprintf(w, "file     %s\n", f)
	}
	if r.Rows != r.Total {
		fmt.Fprintf(w, "rows     %d selected of %d\n", r.Rows, r.Total)
	} else {
		fmt.Fprintf(w, "rows     %d\n", r.Rows)
	}
	fmt.Fprintln(w, "\ncolumns:")
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	for _, col := range r.Columns {
		fmt.Fprintf(tw, "  %s\t%s\n", col.Name, col.Type)
	}
	tw.Flush()
	fmt.Fprintf(w, "\n%-22s %7s %7s %7s %7s\n", "statistics:", "min", "p50", "mean", "max")
	for _, s := range []struct {
		name string
		s    Stats
	}{{"answers per example", r.AnswersPerExample}, {"answer words", r.AnswerWords}, {"answer characters", r.AnswerChars}, {"contexts per example", r.ContextsPerExample}} {
		fmt.Fprintf(w, "  %-20s %7g %7g %7g %7g\n", s.name, s.s.Min, s.s.P50, s.s.Mean, s.s.Max)
	}
	if len(r.Labels) > 0 {
		var ls []string
		for l := range r.Labels {
			ls = append(ls, l)
		}
		sort.Strings(ls)
		fmt.Fprint(w, "\nlabels: ")
		for i, l := range ls {
			if i > 0 {
				fmt.Fprint(w, ", ")
			}
			fmt.Fprintf(w, "%s %d", l, r.Labels[l])
		}
		fmt.Fprintln(w)
	}
	if r.Example != nil {
		ex := *r.Example
		// Keep the example readable: shorten long passages.
		ex.Contexts = append([]Passage(nil), ex.Contexts...)
		for i := range ex.Contexts {
			if len(ex.Contexts[i].Text) > 300 {
				ex.Contexts[i].Text = truncateUTF8(ex.Contexts[i].Text, 300) + " …"
			}
		}
		if len(ex.Contexts) > 3 {
			ex.Contexts = ex.Contexts[:3]
		}
		b, err := json.MarshalIndent(ex, "  ", "  ")
		if err != nil {
			return err
		}
		fmt.Fprintf(w, "\nfirst example (at most 3 contexts shown, long texts shortened):\n  %s\n", b)
	}
	return nil
}

// truncateUTF8 cuts s to at most n bytes without splitting a UTF-8 sequence.
func truncateUTF8(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}
