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
	"github.com/ragbench/ragbench/harness/runner"
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
		"ours ran the offline reader (no LLM), not that model, so the numbers are not comparable and no difference is computed",
		"the same model as ours (allenai/OLMo-2-1124-7B-Instruct): Δ = ours − paper",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("paper report lacks %q", want)
		}
	}
	// The offline reader's rows never get a difference; the OLMo rows do.
	main := r.Tables[0]
	block, found := "", false
	for _, row := range main.Rows {
		if row.Section {
			block = row.Label
			continue
		}
		for i, c := range main.Columns {
			g := groupOfColumn(main, i)
			v := row.Values[i]
			if strings.HasSuffix(c.Key, "_delta") && strings.HasPrefix(block, "offline") && v.V != nil {
				t.Errorf("row %s column %s (%s): a difference against the paper for the offline reader", row.Label, c.Key, g)
			}
			if row.Label == "quco" && c.Key == "em_paper" && g == "2wikimultihopqa" && strings.HasPrefix(block, "OLMo-2-1124") {
				found = true
				if v.V == nil || *v.V != 32.7 {
					t.Errorf("OLMo-2-7B quco EM paper value %v, want 32.7 (QuCo-RAG Table 1)", v.V)
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
	checkPlaced(t, r, ref)
}

// checkPlaced checks that every published row a cell names is placed beside the cell: in some table,
// in the cell's block and row (labelled with our row name, or the paper's with ours in parentheses),
// under its dataset, every metric of the row has a paper column holding the published number. A cell
// that names the rows of several models (a model sweep's entry) is checked against those of the
// model it was planned with (else of the first model named).
func checkPlaced(t *testing.T, r *Report, ref *Reference) {
	t.Helper()
	type at struct{ block, row, dataset, key string }
	placed := map[at]float64{}
	multi := r.multiGen()
	for _, tb := range r.Tables {
		block := ""
		for _, row := range tb.Rows {
			if row.Section {
				block = row.Label
				continue
			}
			label := row.Label
			if i := strings.LastIndex(label, " ("); i >= 0 && strings.HasSuffix(label, ")") {
				label = label[i+2 : len(label)-1]
			}
			for i, c := range tb.Columns {
				if k, ok := strings.CutSuffix(c.Key, "_paper"); ok && row.Values[i].V != nil {
					placed[at{block, label, groupOfColumn(tb, i), k}] = *row.Values[i].V
				}
			}
		}
	}
	n := 0
	for _, c := range r.Cells {
		block := ""
		if multi {
			block = blockLabel(GroupKey{c.Generator, cellModel(c.Name), c.Dataset})
		}
		planned := c.Model
		if planned == "" {
			planned = c.Generator
		}
		var own []runner.PaperRef
		for _, pref := range c.Paper {
			if ModelIdentity(pref.Model) == ModelIdentity(planned) {
				own = append(own, pref)
			}
		}
		if len(own) == 0 {
			// None of its own model: per table, the first model named.
			first := map[string]string{}
			for _, pref := range c.Paper {
				if _, ok := first[pref.Table]; !ok {
					first[pref.Table] = pref.Model
				}
				if pref.Model == first[pref.Table] {
					own = append(own, pref)
				}
			}
		}
		for _, pref := range own {
			pr, ok := ref.lookup(pref)
			if !ok {
				t.Errorf("%s/%s names %v, not in the reference", c.Dataset, c.Name, pref)
				continue
			}
			for mk := range pr.Metrics {
				key := mk
				switch mk {
				case "ar":
					key = "answer_recall"
				case "acc":
					key = "label_acc"
					if _, ok := placed[at{block, c.Row, c.Dataset, "label_acc"}]; !ok {
						key = "acc"
					}
				}
				want, _ := pr.value(key)
				got, ok := placed[at{block, c.Row, c.Dataset, key}]
				if !ok {
					t.Errorf("%s/%s (%s): %s %s %s %s %s not placed", c.Dataset, c.Name, block, pref.Table, pref.Model, pref.Dataset, pref.Method, mk)
				} else if got != want {
					t.Errorf("%s/%s: %s %s placed as %v, want %v", c.Dataset, c.Name, pref.Method, mk, got, want)
				}
				n++
			}
		}
	}
	if n == 0 {
		t.Error("no published number named by any cell")
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
// runs) on the same records' answered questions (failed ones are counted apart, never scored).
func TestTablesEqualScore(t *testing.T) {
	r := fixtureReport(t, Options{})
	main := r.Tables[0]
	checked := 0
	for _, c := range r.Cells {
		g := GroupKey{c.Generator, cellModel(c.Name), c.Dataset}
		if isPubMed(g) {
			continue
		}
		var exs []datasets.Example
		preds := map[string]string{}
		for _, rec := range c.Records {
			if rec.Error == "" {
				exs = append(exs, datasets.Example{ID: rec.ID, Question: rec.Question, Answers: rec.Gold})
				preds[rec.ID] = rec.Answer
			}
		}
		_, sum, _ := metrics.Score(exs, preds, nil, metrics.Options{Resamples: -1})
		block := ""
		for _, row := range main.Rows {
			if row.Section {
				block = row.Label
				continue
			}
			if row.Label != c.Name || (r.multiGen() && block != blockLabel(g)) {
				continue
			}
			col := 0
			for _, gr := range main.Groups {
				if gr.Label == c.Dataset {
					em, f1 := *row.Values[col].V, *row.Values[col+1].V
					if math.Abs(em-100*sum.EM.Mean) > 1e-9 || math.Abs(f1-100*sum.F1.Mean) > 1e-9 {
						t.Errorf("%s %s: table EM %.4f F1 %.4f, metrics.Score EM %.4f F1 %.4f", block, c.Name, em, f1, 100*sum.EM.Mean, 100*sum.F1.Mean)
					}
					checked++
				}
				col += gr.Span
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
