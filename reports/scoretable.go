// The score table: the summary of one predictions file (and of a baseline it is compared with) in
// Markdown, CSV, LaTeX or JSON, as `ragbench score` prints it. It computes nothing: the scores,
// intervals and paired tests come from package metrics.

package reports

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/ragbench/ragbench/metrics"
)

// ScoreFormats are the table formats WriteScore writes.
var ScoreFormats = []string{"md", "csv", "json", "tex"}

// Score is the report of one scored predictions file, optionally compared with a baseline.
type Score struct {
	Dataset     string          `json:"dataset"`
	Predictions string          `json:"predictions"`
	Summary     metrics.Summary `json:"summary"`
	Baseline    *Baseline       `json:"baseline,omitempty"`
	// Warnings are the counted warnings of scoring (predictions for ids not in the dataset).
	Warnings []string `json:"warnings,omitempty"`
}

// Baseline is a second predictions file scored the same way and its paired tests against the first.
type Baseline struct {
	Predictions string          `json:"predictions"`
	Summary     metrics.Summary `json:"summary"`
	EM          metrics.Paired  `json:"em_vs_baseline"`
	F1          metrics.Paired  `json:"f1_vs_baseline"`
}

// scoreRow is one row of the score table.
type scoreRow struct {
	name    string
	sum     metrics.Summary
	cols    []string // column names
	metrics []metrics.Interval
}

func scoreRows(rep *Score) []scoreRow {
	mk := func(name string, s metrics.Summary) scoreRow {
		if len(s.Models) > 0 {
			// Every report says which system answered; the offline reader is never mistaken for an LLM.
			name += " [" + strings.Join(s.Models, ", ") + "]"
		}
		r := scoreRow{name: name, sum: s, cols: []string{"EM", "F1", "acc"}, metrics: []metrics.Interval{s.EM, s.F1, s.Acc}}
		if s.Classification != nil {
			r.cols = append(r.cols, "accuracy", "macro-F1")
			r.metrics = append(r.metrics, s.Classification.Accuracy, s.Classification.MacroF1)
		}
		return r
	}
	rows := []scoreRow{mk(rep.Predictions, rep.Summary)}
	if rep.Baseline != nil {
		rows = append(rows, mk(rep.Baseline.Predictions, rep.Baseline.Summary))
	}
	return rows
}

func scoreF4(x float64) string { return strconv.FormatFloat(x, 'f', 4, 64) }

func scoreCell(iv metrics.Interval, ci bool) string {
	if !ci {
		return scoreF4(iv.Mean)
	}
	return fmt.Sprintf("%s [%s, %s]", scoreF4(iv.Mean), scoreF4(iv.Lo), scoreF4(iv.Hi))
}

// WriteScore prints rep in format (one of ScoreFormats): one row per predictions file with n, n missing,
// EM, F1 and acc (and accuracy and macro-F1 for a classification dataset), each with its bootstrap
// interval when the summary has one; Markdown adds the extraction rule and the paired comparison with
// the baseline; JSON is rep itself, indented.
func WriteScore(w io.Writer, format string, rep *Score) error {
	if !slices.Contains(ScoreFormats, format) {
		return fmt.Errorf("score table: unknown format %q (want %s)", format, strings.Join(ScoreFormats, ", "))
	}
	rows := scoreRows(rep)
	ci := rep.Summary.Resamples > 0
	level := fmt.Sprintf("%g%%", 100*rep.Summary.Level)
	switch format {
	case "json":
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		enc.SetEscapeHTML(false)
		return enc.Encode(rep)
	case "csv":
		cw := csv.NewWriter(w)
		head := []string{"dataset", "predictions", "n", "n_missing", "n_unknown"}
		for _, c := range rows[0].cols {
			head = append(head, c, c+"_lo", c+"_hi")
		}
		cw.Write(head)
		for _, r := range rows {
			rec := []string{rep.Dataset, r.name, strconv.Itoa(r.sum.N), strconv.Itoa(r.sum.Missing), strconv.Itoa(r.sum.Unknown)}
			for _, m := range r.metrics {
				rec = append(rec, scoreF4(m.Mean), scoreF4(m.Lo), scoreF4(m.Hi))
			}
			cw.Write(rec)
		}
		cw.Flush()
		return cw.Error()
	case "tex":
		var b strings.Builder
		b.WriteString("\\begin{tabular}{ll" + strings.Repeat("r", 2+len(rows[0].cols)) + "}\n\\hline\n")
		b.WriteString("Dataset & Predictions & $n$ & missing")
		for _, c := range rows[0].cols {
			b.WriteString(" & " + scoreTeX(c))
		}
		b.WriteString(" \\\\\n\\hline\n")
		for _, r := range rows {
			fmt.Fprintf(&b, "%s & %s & %d & %d", scoreTeX(rep.Dataset), scoreTeX(r.name), r.sum.N, r.sum.Missing)
			for _, m := range r.metrics {
				if ci {
					fmt.Fprintf(&b, " & %s {\\scriptsize [%s, %s]}", scoreF4(m.Mean), scoreF4(m.Lo), scoreF4(m.Hi))
				} else {
					fmt.Fprintf(&b, " & %s", scoreF4(m.Mean))
				}
			}
			b.WriteString(" \\\\\n")
		}
		b.WriteString("\\hline\n\\end{tabular}\n")
		if ci {
			fmt.Fprintf(&b, "%% intervals: %s percentile bootstrap, %d resamples, seed %d\n", level, rep.Summary.Resamples, rep.Summary.Seed)
		}
		_, err := io.WriteString(w, b.String())
		return err
	}
	// Markdown.
	var b strings.Builder
	b.WriteString("| dataset | predictions | n | n missing |")
	for _, c := range rows[0].cols {
		b.WriteString(" " + c + " |")
	}
	b.WriteString("\n|---|---|---:|---:|" + strings.Repeat("---:|", len(rows[0].cols)) + "\n")
	for _, r := range rows {
		fmt.Fprintf(&b, "| %s | %s | %d | %d |", scoreMD(rep.Dataset), scoreMD(r.name), r.sum.N, r.sum.Missing)
		for _, m := range r.metrics {
			b.WriteString(" " + scoreCell(m, ci) + " |")
		}
		b.WriteString("\n")
	}
	if ci {
		fmt.Fprintf(&b, "\nIntervals: %s percentile bootstrap over examples, %d resamples, seed %d. Extraction: %s.\n",
			level, rep.Summary.Resamples, rep.Summary.Seed, rep.Summary.Extractor)
	} else {
		fmt.Fprintf(&b, "\nExtraction: %s.\n", rep.Summary.Extractor)
	}
	if bl := rep.Baseline; bl != nil {
		fmt.Fprintf(&b, "\nPaired comparison with %s (approximate randomization, %d rounds):\n\n", scoreMD(bl.Predictions), bl.EM.Rounds)
		b.WriteString("| metric | Δ (predictions − baseline) | p |\n|---|---:|---:|\n")
		fmt.Fprintf(&b, "| EM | %s | %s |\n", scoreCell(bl.EM.Delta, ci), scoreF4(bl.EM.P))
		fmt.Fprintf(&b, "| F1 | %s | %s |\n", scoreCell(bl.F1.Delta, ci), scoreF4(bl.F1.P))
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func scoreMD(s string) string { return strings.ReplaceAll(s, "|", "\\|") }

func scoreTeX(s string) string {
	r := strings.NewReplacer("\\", "\\textbackslash{}", "&", "\\&", "%", "\\%", "$", "\\$", "#", "\\#", "_", "\\_", "{", "\\{", "}", "\\}", "~", "\\textasciitilde{}", "^", "\\textasciicircum{}")
	return r.Replace(s)
}
