package runner

import (
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"strings"
)

// Row is one line of the summary table: a dataset and cell.
type Row struct {
	Dataset string `json:"dataset"`
	Cell    string `json:"cell"`
	// Generator labels the model that answered ("offline reader (no LLM)" for the model-free
	// baseline, which is never a paper's model).
	Generator string `json:"generator"`
	// Questions is the number of questions planned; N counts the scored ones; Errors the failed ones
	// (not scored). Questions - N - Errors were not answered yet.
	Questions int `json:"questions"`
	N         int `json:"n"`
	Errors    int `json:"errors"`
	// EM, F1 and Acc are means over the scored questions, in percent. Acc is sub-EM, or, on a
	// classification dataset (PubMedQA), label accuracy.
	EM  float64 `json:"em"`
	F1  float64 `json:"f1"`
	Acc float64 `json:"acc"`
	// Ret, Call and Tok are #Ret, #Call and #Tok per question (retrieval calls, generator calls
	// without the answer-completion call, generated tokens).
	Ret  float64 `json:"ret"`
	Call float64 `json:"call"`
	Tok  float64 `json:"tok"`
}

type summaryRecord struct {
	Generator string             `json:"generator"`
	Error     string             `json:"error"`
	Scores    map[string]float64 `json:"scores"`
	Counters  struct {
		Retrievals      int `json:"retrievals"`
		Calls           int `json:"llm_calls"`
		GeneratedTokens int `json:"generated_tokens"`
	} `json:"counters"`
}

// Summarize reads the record files of a run directory (streaming) and returns a row per dataset and
// cell, in plan order.
func Summarize(dir string, p *Plan) ([]Row, error) {
	var rows []Row
	for _, d := range p.Datasets {
		for _, c := range p.cellsFor(d) {
			row, err := summarizeFile(filepath.Join(dir, d.Name, c.Name+".jsonl"))
			if err != nil {
				return nil, err
			}
			row.Dataset, row.Cell, row.Questions = d.Name, c.Name, len(d.Examples)
			rows = append(rows, row)
		}
	}
	return rows, nil
}

func summarizeFile(path string) (Row, error) {
	var row Row
	var em, f1, acc, ret, call, tok float64
	err := eachLine(path, func(off int64, line []byte) error {
		var r summaryRecord
		if err := json.Unmarshal(line, &r); err != nil {
			return fmt.Errorf("%s at byte %d: %w", path, off, err)
		}
		if row.Generator == "" {
			row.Generator = r.Generator
		} else if r.Generator != "" && r.Generator != row.Generator && !strings.HasSuffix(row.Generator, " (mixed)") {
			row.Generator += " (mixed)"
		}
		if r.Error != "" {
			row.Errors++
			return nil
		}
		row.N++
		em += r.Scores["em"]
		f1 += r.Scores["f1"]
		if la, ok := r.Scores["label_acc"]; ok {
			acc += la
		} else {
			acc += r.Scores["acc"]
		}
		ret += float64(r.Counters.Retrievals)
		call += float64(r.Counters.Calls)
		tok += float64(r.Counters.GeneratedTokens)
		return nil
	})
	if err != nil {
		return row, err
	}
	if row.N > 0 {
		n := float64(row.N)
		row.EM, row.F1, row.Acc = 100*em/n, 100*f1/n, 100*acc/n
		row.Ret, row.Call, row.Tok = ret/n, call/n, tok/n
	}
	return row, nil
}

// WriteTable writes the rows as a markdown table.
func WriteTable(w io.Writer, rows []Row) error {
	var b strings.Builder
	b.WriteString("| dataset | cell | generator | n | EM | F1 | Acc | #Ret | #Call | #Tok | errors |\n")
	b.WriteString("|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	for _, r := range rows {
		fmt.Fprintf(&b, "| %s | %s | %s | %d | %.1f | %.1f | %.1f | %.2f | %.2f | %.1f | %d |\n",
			r.Dataset, r.Cell, r.Generator, r.N, r.EM, r.F1, r.Acc, r.Ret, r.Call, r.Tok, r.Errors)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// WriteSummary writes summary.md and summary.json into a run directory.
func WriteSummary(dir string, rows []Row) error {
	var md strings.Builder
	WriteTable(&md, rows)
	if err := writeFileAtomic(filepath.Join(dir, "summary.md"), []byte(md.String())); err != nil {
		return err
	}
	if rows == nil {
		rows = []Row{}
	}
	js, err := json.MarshalIndent(struct {
		Rows []Row `json:"rows"`
	}{rows}, "", "  ")
	if err != nil {
		return err
	}
	return writeFileAtomic(filepath.Join(dir, "summary.json"), append(js, '\n'))
}
