package main

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/ragbench/ragbench/datasets"
	"github.com/ragbench/ragbench/metrics"
)

func init() {
	register(&cli.Command{
		Name:      "score",
		Usage:     "score predictions made elsewhere against a dataset's gold answers (EM, F1, acc, CIs)",
		ArgsUsage: " ",
		Description: `Reads predictions as JSONL ({"id": ..., "prediction": ...}; "qid"/"_id" and "pred"/"answer"
are accepted too, so DRAGIN/QuCo-RAG output files work as they are) or as the official HotpotQA
prediction JSON ({"answer": {id: text}}), and prints one table row: n, n missing, EM, F1 and acc
(sub-EM) with seeded bootstrap 95% intervals; for PubMedQA also accuracy and macro-F1.

A dataset example without a prediction scores 0 and is counted in "n missing". A prediction whose
id is not in the dataset is not scored and is reported on stderr as a counted warning. A duplicate
prediction id is an error (it is ambiguous which one to score).

With --baseline, a second predictions file is scored the same way and compared with a paired
approximate randomization test (EM and F1).`,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "dataset", Aliases: []string{"d"}, Usage: "dataset name, parquet file/directory, or custom spec (required)"},
			&cli.StringFlag{Name: "predictions", Aliases: []string{"p"}, Usage: "predictions file (JSONL or HotpotQA JSON; - for stdin) (required)"},
			&cli.StringFlag{Name: "format", Aliases: []string{"f"}, Value: "md", Usage: "table format: md, csv, json or tex"},
			&cli.StringFlag{Name: "out", Usage: "write per-example scores as JSONL to this file"},
			&cli.StringFlag{Name: "extract", Value: "none", Usage: "answer extraction rule: none, auto (QuCo-RAG rule for the dataset), or one of " + strings.Join(metrics.AnswerRules(), ", ")},
			&cli.StringFlag{Name: "baseline", Usage: "a second predictions file to compare against (paired test)"},
			&cli.IntFlag{Name: "limit", Usage: "score only the first N examples in file order"},
			&cli.IntFlag{Name: "sample", Usage: "score a deterministic sample of N examples (see --seed)"},
			&cli.Int64Flag{Name: "seed", Usage: "seed of --sample"},
			&cli.IntFlag{Name: "resamples", Value: 1000, Usage: "bootstrap resamples for the intervals (0 disables them)"},
			&cli.Float64Flag{Name: "level", Value: 0.95, Usage: "confidence level of the intervals"},
			&cli.Uint64Flag{Name: "ci-seed", Usage: "seed of the bootstrap and the randomization test"},
		},
		Action: scoreAction,
	})
}

// scoreReport is what the score command prints in JSON.
type scoreReport struct {
	Dataset     string           `json:"dataset"`
	Predictions string           `json:"predictions"`
	Summary     metrics.Summary  `json:"summary"`
	Baseline    *baselineReport  `json:"baseline,omitempty"`
	Warnings    []string         `json:"warnings,omitempty"`
	records     []metrics.Record `json:"-"`
}

type baselineReport struct {
	Predictions string          `json:"predictions"`
	Summary     metrics.Summary `json:"summary"`
	EM          metrics.Paired  `json:"em_vs_baseline"`
	F1          metrics.Paired  `json:"f1_vs_baseline"`
}

func scoreAction(c *cli.Context) error {
	if c.NArg() > 0 {
		return usagef("score takes no arguments, got %q", c.Args().Slice())
	}
	if c.String("dataset") == "" || c.String("predictions") == "" {
		return usagef("score needs --dataset and --predictions")
	}
	format := c.String("format")
	switch format {
	case "md", "csv", "json", "tex":
	default:
		return usagef("--format %q: want md, csv, json or tex", format)
	}
	if c.Int("limit") < 0 || c.Int("sample") < 0 || c.Int("resamples") < 0 {
		return usagef("--limit, --sample and --resamples must not be negative")
	}
	if l := c.Float64("level"); l <= 0 || l >= 1 {
		return usagef("--level %v: want a number between 0 and 1", l)
	}
	// Load everything, so that predictions for examples outside --limit/--sample are not "unknown".
	ds, examples, err := loadSelected(c)
	if err != nil {
		return err
	}

	ext := metrics.AnswerRule(c.String("extract"))
	if ext == "auto" {
		ext = metrics.DefaultAnswerRule(ds.Name)
	} else if ext, err = metrics.ParseAnswerRule(string(ext)); err != nil {
		return usagef("--extract: %v", err)
	}
	opts := metrics.Options{Extractor: ext, Resamples: c.Int("resamples"), Level: c.Float64("level"), Seed: c.Uint64("ci-seed")}
	if opts.Resamples == 0 {
		opts.Resamples = -1
	}
	all := make(map[string]bool, len(ds.Examples))
	for _, ex := range ds.Examples {
		all[ex.ID] = true
	}

	rep := &scoreReport{Dataset: ds.Name, Predictions: c.String("predictions")}
	rep.records, rep.Summary, err = scoreFile(c, rep.Predictions, examples, all, opts, &rep.Warnings)
	if err != nil {
		return err
	}
	if b := c.String("baseline"); b != "" {
		br := &baselineReport{Predictions: b}
		var brecs []metrics.Record
		brecs, br.Summary, err = scoreFile(c, b, examples, all, opts, &rep.Warnings)
		if err != nil {
			return err
		}
		em, bem := column(rep.records, func(r metrics.Record) float64 { return r.EM }), column(brecs, func(r metrics.Record) float64 { return r.EM })
		f1, bf1 := column(rep.records, func(r metrics.Record) float64 { return r.F1 }), column(brecs, func(r metrics.Record) float64 { return r.F1 })
		rounds := 10000
		if br.EM, err = metrics.PairedTest(em, bem, rounds, max(opts.Resamples, 0), opts.Level, opts.Seed); err != nil {
			return fmt.Errorf("compare with %s: %w", b, err)
		}
		if br.F1, err = metrics.PairedTest(f1, bf1, rounds, max(opts.Resamples, 0), opts.Level, opts.Seed); err != nil {
			return fmt.Errorf("compare with %s: %w", b, err)
		}
		rep.Baseline = br
	}
	if out := c.String("out"); out != "" {
		if err := writeRecords(out, rep.records); err != nil {
			return err
		}
	}
	return writeScoreTable(c.App.Writer, format, rep)
}

// loadSelected loads the whole dataset of --dataset, reports its first warnings on stderr, and
// returns it with the examples selected by --limit or --sample/--seed.
func loadSelected(c *cli.Context) (*datasets.Dataset, []datasets.Example, error) {
	ds, err := datasets.Load(c.Context, c.String("dataset"), datasets.LoadOptions{})
	if err != nil {
		return nil, nil, err
	}
	for i, w := range ds.Warnings {
		if i == 5 {
			fmt.Fprintf(c.App.ErrWriter, "warning: %s: %d more dataset warnings not shown\n", ds.Name, len(ds.Warnings)-5)
			break
		}
		fmt.Fprintf(c.App.ErrWriter, "warning: %s\n", w)
	}
	return ds, datasets.Subset(ds.Examples, c.Int("limit"), c.Int("sample"), c.Int64("seed")), nil
}

// scoreFile reads one predictions file and scores it, reporting unknown ids as a counted warning.
func scoreFile(c *cli.Context, path string, examples []datasets.Example, all map[string]bool, opts metrics.Options, warnings *[]string) ([]metrics.Record, metrics.Summary, error) {
	var r io.Reader = c.App.Reader
	name := "stdin"
	if path != "-" {
		f, err := os.Open(path)
		if err != nil {
			return nil, metrics.Summary{}, fmt.Errorf("score: %w", err)
		}
		defer f.Close()
		r, name = f, path
	}
	preds, err := metrics.ReadPredictions(r, name)
	if err != nil {
		return nil, metrics.Summary{}, err
	}
	if preds.Errored > 0 {
		fmt.Fprintf(c.App.ErrWriter, "note: %s: %d record(s) carry an error and are not predictions (their examples count as missing unless retried)\n", name, preds.Errored)
	}
	recs, sum, unknown := metrics.Score(examples, preds.Text, preds.IDs, opts)
	// Predictions for examples that exist but fall outside --limit/--sample are not unknown.
	var stray []string
	outside := 0
	for _, id := range unknown {
		if all[id] {
			outside++
		} else {
			stray = append(stray, id)
		}
	}
	sum.Unknown = len(stray)
	sum.Models = preds.Models
	if len(stray) > 0 {
		shown := stray[:min(len(stray), 5)]
		msg := fmt.Sprintf("%s: %d prediction(s) for ids not in the dataset were not scored (first: %s)", name, len(stray), strings.Join(quoteAll(shown), ", "))
		fmt.Fprintf(c.App.ErrWriter, "warning: %s\n", msg)
		*warnings = append(*warnings, msg)
	}
	if outside > 0 {
		fmt.Fprintf(c.App.ErrWriter, "note: %s: %d prediction(s) for examples outside --limit/--sample were ignored\n", name, outside)
	}
	if sum.Missing > 0 {
		fmt.Fprintf(c.App.ErrWriter, "note: %s: %d of %d examples have no prediction and score 0\n", name, sum.Missing, sum.N)
	}
	return recs, sum, nil
}

func quoteAll(xs []string) []string {
	out := make([]string, len(xs))
	for i, x := range xs {
		out[i] = strconv.Quote(x)
	}
	return out
}

func column(recs []metrics.Record, f func(metrics.Record) float64) []float64 {
	out := make([]float64, len(recs))
	for i, r := range recs {
		out[i] = f(r)
	}
	return out
}

// writeRecords writes the per-example scores as JSONL, atomically.
func writeRecords(path string, recs []metrics.Record) error {
	tmp, err := os.CreateTemp(dirOf(path), ".score-*.jsonl")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	enc := json.NewEncoder(tmp)
	enc.SetEscapeHTML(false)
	for _, r := range recs {
		if err := enc.Encode(r); err != nil {
			tmp.Close()
			os.Remove(tmp.Name())
			return fmt.Errorf("write %s: %w", path, err)
		}
	}
	if err := tmp.Close(); err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

func dirOf(path string) string {
	if i := strings.LastIndexAny(path, "/"); i >= 0 {
		return path[:i+1]
	}
	return "."
}

// tableRow is one row of the score table.
type tableRow struct {
	name    string
	sum     metrics.Summary
	cols    []string // column names
	metrics []metrics.Interval
}

func rowsOf(rep *scoreReport) []tableRow {
	mk := func(name string, s metrics.Summary) tableRow {
		if len(s.Models) > 0 {
			// Every report says which system answered; the offline reader is never mistaken for an LLM.
			name += " [" + strings.Join(s.Models, ", ") + "]"
		}
		r := tableRow{name: name, sum: s, cols: []string{"EM", "F1", "acc"}, metrics: []metrics.Interval{s.EM, s.F1, s.Acc}}
		if s.Classification != nil {
			r.cols = append(r.cols, "accuracy", "macro-F1")
			r.metrics = append(r.metrics, s.Classification.Accuracy, s.Classification.MacroF1)
		}
		return r
	}
	rows := []tableRow{mk(rep.Predictions, rep.Summary)}
	if rep.Baseline != nil {
		rows = append(rows, mk(rep.Baseline.Predictions, rep.Baseline.Summary))
	}
	return rows
}

func f4(x float64) string { return strconv.FormatFloat(x, 'f', 4, 64) }

func cell(iv metrics.Interval, ci bool) string {
	if !ci {
		return f4(iv.Mean)
	}
	return fmt.Sprintf("%s [%s, %s]", f4(iv.Mean), f4(iv.Lo), f4(iv.Hi))
}

// writeScoreTable prints the report in the chosen format.
func writeScoreTable(w io.Writer, format string, rep *scoreReport) error {
	rows := rowsOf(rep)
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
				rec = append(rec, f4(m.Mean), f4(m.Lo), f4(m.Hi))
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
			b.WriteString(" & " + texEscape(c))
		}
		b.WriteString(" \\\\\n\\hline\n")
		for _, r := range rows {
			fmt.Fprintf(&b, "%s & %s & %d & %d", texEscape(rep.Dataset), texEscape(r.name), r.sum.N, r.sum.Missing)
			for _, m := range r.metrics {
				if ci {
					fmt.Fprintf(&b, " & %s {\\scriptsize [%s, %s]}", f4(m.Mean), f4(m.Lo), f4(m.Hi))
				} else {
					fmt.Fprintf(&b, " & %s", f4(m.Mean))
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
		fmt.Fprintf(&b, "| %s | %s | %d | %d |", mdEscape(rep.Dataset), mdEscape(r.name), r.sum.N, r.sum.Missing)
		for _, m := range r.metrics {
			b.WriteString(" " + cell(m, ci) + " |")
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
		fmt.Fprintf(&b, "\nPaired comparison with %s (approximate randomization, %d rounds):\n\n", mdEscape(bl.Predictions), bl.EM.Rounds)
		b.WriteString("| metric | Δ (predictions − baseline) | p |\n|---|---:|---:|\n")
		fmt.Fprintf(&b, "| EM | %s | %s |\n", cell(bl.EM.Delta, ci), f4(bl.EM.P))
		fmt.Fprintf(&b, "| F1 | %s | %s |\n", cell(bl.F1.Delta, ci), f4(bl.F1.P))
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func mdEscape(s string) string { return strings.ReplaceAll(s, "|", "\\|") }

func texEscape(s string) string {
	r := strings.NewReplacer("\\", "\\textbackslash{}", "&", "\\&", "%", "\\%", "$", "\\$", "#", "\\#", "_", "\\_", "{", "\\{", "}", "\\}", "~", "\\textasciitilde{}", "^", "\\textasciicircum{}")
	return r.Replace(s)
}
