package reports

import (
	"bytes"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ragbench/ragbench/datasets"
	"github.com/ragbench/ragbench/internal/testenv"
	"github.com/ragbench/ragbench/metrics"
)

func fixtureReport(t *testing.T, opts Options) *Report {
	t.Helper()
	r, err := Build(loadFixture(t, "offline", "olmo"), opts)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

var goldenOpts = Options{CI: CIOptions{Resamples: 200, Level: 0.95, Seed: 7}, Baseline: "SR-RAG", Rounds: 500,
	Prices: Prices{PromptPerM: 0.2, CompletionPerM: 0.6}}

// TestGoldenTables pins every table format on the fixture runs.
func TestGoldenTables(t *testing.T) {
	r := fixtureReport(t, goldenOpts)
	for _, f := range Formats {
		var b bytes.Buffer
		if err := r.WriteTables(&b, f); err != nil {
			t.Fatal(err)
		}
		golden(t, "tables."+f, b.Bytes())
	}
	var b bytes.Buffer
	for _, tb := range r.Tables {
		if err := tb.HTML(&b); err != nil {
			t.Fatal(err)
		}
	}
	golden(t, "tables.html", b.Bytes())
}

// TestGoldenPaper pins the side-by-side tables with the published numbers.
func TestGoldenPaper(t *testing.T) {
	ref, err := LoadReference(testenv.Reference(t, "paper-tables.json"))
	if err != nil {
		t.Fatal(err)
	}
	r := fixtureReport(t, Options{Paper: ref})
	var b bytes.Buffer
	if err := r.WriteTables(&b, "md"); err != nil {
		t.Fatal(err)
	}
	golden(t, "paper.md", b.Bytes())
	md := b.String()
	for _, want := range []string{
		"ours ran the offline reader (no LLM), not that model, so no difference is computed",
		"the same model as ours (allenai/OLMo-2-1124-7B-Instruct at http://127.0.0.1:8000/v1)",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("paper report lacks %q", want)
		}
	}
	// The offline reader's rows never get a difference; the OLMo rows do.
	main := r.Tables[0]
	for _, row := range main.Rows {
		for i, c := range main.Columns {
			if !strings.HasSuffix(c.Key, "_delta") {
				continue
			}
			g := groupOfColumn(main, i)
			v := row.Values[i]
			if strings.HasPrefix(g, "offline") && v.V != nil {
				t.Errorf("row %s column %s (%s): a difference against the paper for the offline reader", row.Label, c.Key, g)
			}
		}
	}
	found := false
	for _, row := range main.Rows {
		if row.Label != "quco" {
			continue
		}
		for i, c := range main.Columns {
			if c.Key == "em_paper" && strings.HasPrefix(groupOfColumn(main, i), "OLMo-2-1124") {
				found = true
				if row.Values[i].V == nil || *row.Values[i].V != 32.7 {
					t.Errorf("OLMo-2-7B quco EM paper value %v, want 32.7 (QuCo-RAG Table 1)", row.Values[i].V)
				}
				ours, d := row.Values[i-1], row.Values[i+1]
				if d.V == nil || math.Abs(*d.V-(*ours.V-32.7)) > 1e-9 {
					t.Errorf("Δ %v, want ours %v − 32.7", d.V, *ours.V)
				}
			}
		}
	}
	if !found {
		t.Error("no OLMo paper column for quco")
	}
}

func groupOfColumn(t *Table, col int) string {
	for _, g := range t.Groups {
		if col < g.Span {
			return g.Label
		}
		col -= g.Span
	}
	return ""
}

// TestTablesEqualScore checks the main table's EM/F1 against metrics.Score (what `ragbench score`
// runs) on the same records' predictions and gold answers.
func TestTablesEqualScore(t *testing.T) {
	r := fixtureReport(t, Options{})
	main := r.Tables[0]
	checked := 0
	for _, c := range r.Cells {
		if isPubMed(GroupKey{c.Generator, c.Dataset}) {
			continue
		}
		var exs []datasets.Example
		preds := map[string]string{}
		for _, rec := range c.Records {
			exs = append(exs, datasets.Example{ID: rec.ID, Question: rec.Question, Answers: rec.Gold})
			if rec.Error == "" {
				preds[rec.ID] = rec.Answer
			}
		}
		_, sum, _ := metrics.Score(exs, preds, nil, metrics.Options{Resamples: -1})
		label := groupLabel(GroupKey{c.Generator, c.Dataset}, r.multiGen())
		for _, row := range main.Rows {
			if row.Label != c.Name {
				continue
			}
			col := 0
			for _, g := range main.Groups {
				if g.Label == label {
					em, f1 := *row.Values[col].V, *row.Values[col+1].V
					if math.Abs(em-100*sum.EM.Mean) > 1e-9 || math.Abs(f1-100*sum.F1.Mean) > 1e-9 {
						t.Errorf("%s %s: table EM %.4f F1 %.4f, metrics.Score EM %.4f F1 %.4f", label, c.Name, em, f1, 100*sum.EM.Mean, 100*sum.F1.Mean)
					}
					checked++
				}
				col += g.Span
			}
		}
	}
	if checked != 13 {
		t.Errorf("checked %d cells, want 13", checked)
	}
}

// TestLaTeXCompiles compiles the LaTeX tables with a TeX engine when one is installed.
func TestLaTeXCompiles(t *testing.T) {
	engine := ""
	for _, e := range []string{"pdflatex", "lualatex", "xelatex"} {
		if _, err := exec.LookPath(e); err == nil {
			engine = e
			break
		}
	}
	if engine == "" {
		t.Skip("no TeX engine (pdflatex, lualatex, xelatex) installed")
	}
	var b bytes.Buffer
	b.WriteString("\\documentclass{article}\n\\usepackage[utf8]{inputenc}\n\\usepackage{booktabs}\n\\usepackage[margin=1cm,landscape]{geometry}\n\\begin{document}\n")
	opts := []Options{goldenOpts}
	if shared := testenv.SharedDir(); shared != "" {
		// With the published numbers too (Δ columns, notes), when the reference is there.
		if ref, err := LoadReference(filepath.Join(shared, "reference", "paper-tables.json")); err == nil {
			o := goldenOpts
			o.Paper = ref
			opts = append(opts, o)
		}
	}
	for _, o := range opts {
		if err := fixtureReport(t, o).WriteTables(&b, "tex"); err != nil {
			t.Fatal(err)
		}
	}
	b.WriteString("\\end{document}\n")
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "r.tex"), b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(engine, "-interaction=nonstopmode", "-halt-on-error", "r.tex")
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s: %v\n%s", engine, err, out)
	}
	if log, _ := os.ReadFile(filepath.Join(dir, "r.log")); bytes.Contains(log, []byte("Missing character")) {
		t.Errorf("%s: the tables use characters the font lacks (see r.log)", engine)
	}
	if _, err := os.Stat(filepath.Join(dir, "r.pdf")); err != nil {
		t.Errorf("no PDF: %v", err)
	}
}

// TestMarkdownTablesWellFormed checks what GitHub needs to render every markdown table: a header, a
// delimiter row, and rows with as many cells as the header (escaped pipes are not separators).
func TestMarkdownTablesWellFormed(t *testing.T) {
	r := fixtureReport(t, goldenOpts)
	var b bytes.Buffer
	if err := r.WriteTables(&b, "md"); err != nil {
		t.Fatal(err)
	}
	cells := func(line string) int { return strings.Count(strings.ReplaceAll(line, `\|`, ""), "|") - 1 }
	lines := strings.Split(b.String(), "\n")
	tables := 0
	for i := 0; i < len(lines); i++ {
		if !strings.HasPrefix(lines[i], "|") {
			continue
		}
		tables++
		if i > 0 && lines[i-1] != "" {
			t.Errorf("line %d: a table must follow a blank line", i+1)
		}
		n := cells(lines[i])
		if i+1 >= len(lines) || !strings.HasPrefix(lines[i+1], "|---") || cells(lines[i+1]) != n {
			t.Fatalf("line %d: no delimiter row of %d cells after the header", i+2, n)
		}
		for i += 2; i < len(lines) && strings.HasPrefix(lines[i], "|"); i++ {
			if got := cells(lines[i]); got != n {
				t.Errorf("line %d: %d cells, header has %d", i+1, got, n)
			}
		}
	}
	if tables != len(r.Tables) {
		t.Errorf("%d markdown tables, want %d", tables, len(r.Tables))
	}
}
