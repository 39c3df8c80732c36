package datasets

import (
	"context"
	"math"
	"sort"
	"strings"
)

// Report summarises a dataset for `ragbench datasets inspect`.
type Report struct {
	Name   string   `json:"name"`
	Layout string   `json:"layout"`
	Files  []string `json:"files"`
	// Rows is the number of examples after Limit/Sample; Total before.
	Rows  int `json:"rows"`
	Total int `json:"total"`
	// Columns are the leaf columns of the first file with their types.
	Columns []ColumnInfo `json:"columns"`
	// AnswersPerExample counts the gold answers (aliases included) per example.
	AnswersPerExample Stats `json:"answers_per_example"`
	// AnswerWords and AnswerChars measure the canonical (first) gold answer.
	AnswerWords Stats `json:"answer_words"`
	AnswerChars Stats `json:"answer_chars"`
	// ContextsPerExample counts the context passages per example.
	ContextsPerExample Stats `json:"contexts_per_example"`
	// Labels counts the examples per label, for datasets with labels.
	Labels   map[string]int `json:"labels,omitempty"`
	Warnings []Warning      `json:"warnings,omitempty"`
	// Example is the first selected example.
	Example *Example `json:"example,omitempty"`
}

// ColumnInfo names a leaf column (list wrappers removed) and its type.
type ColumnInfo struct {
	Name string `json:"name"`
	Type string `json:"type"`
}

// Stats summarises a sample of numbers.
type Stats struct {
	N    int     `json:"n"`
	Min  float64 `json:"min"`
	P50  float64 `json:"p50"`
	Mean float64 `json:"mean"`
	Max  float64 `json:"max"`
}

// statsOf computes Stats (the median is the lower middle value for an even count).
func statsOf(xs []float64) Stats {
	if len(xs) == 0 {
		return Stats{}
	}
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	sum := 0.0
	for _, x := range s {
		sum += x
	}
	return Stats{N: len(s), Min: s[0], P50: s[(len(s)-1)/2], Mean: math.Round(sum/float64(len(s))*100) / 100, Max: s[len(s)-1]}
}

// Inspect loads a dataset and summarises it.
func Inspect(ctx context.Context, spec string, opts LoadOptions) (*Report, error) {
	ds, err := Load(ctx, spec, opts)
	if err != nil {
		return nil, err
	}
	r := &Report{Name: ds.Name, Layout: ds.Layout, Files: ds.Files, Rows: len(ds.Examples), Total: ds.Total, Warnings: ds.Warnings}
	if len(ds.Files) > 0 {
		t, err := openTable(ds.Files[0])
		if err != nil {
			return nil, err
		}
		for _, name := range t.columns() {
			typ := "?"
			if c, err := t.find(name); err == nil && c != nil {
				typ = c.describe()
			}
			r.Columns = append(r.Columns, ColumnInfo{Name: name, Type: typ})
		}
		t.Close()
	}
	var per, words, chars, ctxs []float64
	for _, ex := range ds.Examples {
		per = append(per, float64(len(ex.Answers)))
		ctxs = append(ctxs, float64(len(ex.Contexts)))
		if len(ex.Answers) > 0 {
			words = append(words, float64(len(strings.Fields(ex.Answers[0]))))
			chars = append(chars, float64(len([]rune(ex.Answers[0]))))
		}
		if ex.Label != "" {
			if r.Labels == nil {
				r.Labels = map[string]int{}
			}
			r.Labels[ex.Label]++
		}
	}
	r.AnswersPerExample, r.AnswerWords, r.AnswerChars, r.ContextsPerExample = statsOf(per), statsOf(words), statsOf(chars), statsOf(ctxs)
	if len(ds.Examples) > 0 {
		ex := ds.Examples[0]
		r.Example = &ex
	}
	return r, nil
}
