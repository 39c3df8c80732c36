package reports

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ragbench/ragbench/internal/testenv"
	"github.com/ragbench/ragbench/reports/reportstest"
)

func mustBuild(t *testing.T, opts Options, runs ...*Run) *Report {
	t.Helper()
	r, err := Build(runs, opts)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func tableByID(r *Report, id string) *Table {
	for _, tb := range r.Tables {
		if tb.ID == id {
			return tb
		}
	}
	return nil
}

func colIndex(tb *Table, key, group string) int {
	for i, c := range tb.Columns {
		if c.Key == key && (group == "" || groupOfColumn(tb, i) == group) {
			return i
		}
	}
	return -1
}

func rowByLabel(tb *Table, label string) *Row {
	for i := range tb.Rows {
		if tb.Rows[i].Label == label && !tb.Rows[i].Section {
			return &tb.Rows[i]
		}
	}
	return nil
}

func loadReference(t *testing.T) *Reference {
	t.Helper()
	ref, err := LoadReference(testenv.Reference(t, "paper-tables.json"))
	if err != nil {
		t.Fatal(err)
	}
	return ref
}

// TestFailedQuestionsNotScored: failed questions (HTTP 500s) are left out of EM and counted in the
// Err. column; a cell whose every question failed still has its row, with its errors.
func TestFailedQuestionsNotScored(t *testing.T) {
	spec := reportstest.Spec{Generator: "test-model", Datasets: []string{"hotpotqa"}, Cells: []string{"sr-rag", "quco"},
		Questions: 20, Seed: 4, Fail: map[string]int{"quco": 5, "sr-rag": 20}}
	run := writeRun(t, "failed", spec)
	r := mustBuild(t, Options{}, run)
	main := tableByID(r, "main")
	quco, sr := rowByLabel(main, "quco"), rowByLabel(main, "sr-rag")
	if quco == nil || sr == nil {
		t.Fatalf("rows %+v: want quco and sr-rag (a cell whose every question failed keeps its row)", main.Rows)
	}
	errCol, emCol := colIndex(main, "errors", ""), colIndex(main, "em", "")
	if errCol < 0 {
		t.Fatal("no Err. column")
	}
	// Questions 0-4 fail by Fail, question 13 by the fixture's own rule.
	if v := quco.Values[errCol].V; v == nil || *v != 6 {
		t.Errorf("quco Err. %v, want 6", quco.Values[errCol].V)
	}
	if v := sr.Values[errCol].V; v == nil || *v != 20 {
		t.Errorf("sr-rag Err. %v, want 20", sr.Values[errCol].V)
	}
	if sr.Values[emCol].V != nil {
		t.Errorf("sr-rag EM %v: a cell without an answered question has no score", *sr.Values[emCol].V)
	}
	var c *Cell
	for _, cc := range run.Cells {
		if cc.Name == "quco" {
			c = cc
		}
	}
	sum, n := 0.0, 0
	for _, rec := range c.Records {
		if rec.Error == "" {
			sum += 100 * rec.Scores["em"]
			n++
		}
	}
	if got := *quco.Values[emCol].V; n != 14 || got != sum/float64(n) {
		t.Errorf("quco EM %v, want the mean over the %d answered questions, %v", got, n, sum/float64(n))
	}
	if v := quco.Values[emCol]; v.N != 14 {
		t.Errorf("quco EM over %d questions, want 14", v.N)
	}
}

// TestIncompleteRunFlagged: a cell with fewer records than planned (provenance.questions) is marked
// "n of planned" in every table.
func TestIncompleteRunFlagged(t *testing.T) {
	spec := reportstest.Spec{Generator: "test-model", Datasets: []string{"hotpotqa"}, Cells: []string{"sr-rag", "quco"},
		Questions: 20, Seed: 4, Keep: map[string]int{"quco": 7}, Planned: map[string]int{"hotpotqa": 20}}
	r := mustBuild(t, Options{}, writeRun(t, "partial", spec))
	for _, tb := range r.Tables {
		found := false
		for _, n := range tb.Notes {
			if strings.Contains(n, "quco on hotpotqa") && strings.Contains(n, "7 of 20") {
				found = true
			}
		}
		if !found {
			t.Errorf("table %s: no note flagging quco as 7 of 20: %q", tb.ID, tb.Notes)
		}
	}
	if w := strings.Join(r.Warnings, "\n"); !strings.Contains(w, "hotpotqa/quco: 7 of 20 planned questions have records") {
		t.Errorf("no warning for the incomplete cell: %q", w)
	}
	main := tableByID(r, "main")
	if i := colIndex(main, "answered", ""); i < 0 || rowByLabel(main, "quco").Values[i].Text != "7 of 20" || rowByLabel(main, "sr-rag").Values[i].Text != "20" {
		t.Errorf("main table's n column missing or wrong: %+v", main.Columns)
	}
	if rowByLabel(tableByID(r, "cost"), "hotpotqa · quco (7 of 20)") == nil {
		t.Error("cost table: no row labelled hotpotqa · quco (7 of 20)")
	}
	// Without provenance, the questions other cells answered are the plan.
	spec.Planned = nil
	r = mustBuild(t, Options{}, writeRun(t, "partial2", spec))
	if rowByLabel(tableByID(r, "cost"), "hotpotqa · quco (7 of 20)") == nil {
		t.Error("without provenance.questions: quco not flagged as 7 of the 20 questions sr-rag answered")
	}
}

// TestModelIdentity: models are matched by identity (id or alias), never by shared words.
func TestModelIdentity(t *testing.T) {
	cases := []struct {
		gen, model string
		want       bool
		why        string
	}{
		{"allenai/OLMo-2-1124-7B-Instruct at http://127.0.0.1:8000/v1", "OLMo-2-7B", true, "the alias table's id, server dropped"},
		{"OLMo-2-1124-7B-Instruct", "OLMo-2-7B", true, "the id without the organisation (a served model name)"},
		{"allenai/olmo-2-1124-7b-instruct", "OLMo-2-7B", true, "case does not matter"},
		{"allenai/OLMo-2-1124-13B-Instruct", "OLMo-2-7B", false, "13B is another model"},
		{"allenai/OLMo-2-0325-32B-Instruct", "OLMo-2-32B", true, "the 32B is the 0325 release"},
		{"meta-llama/Meta-Llama-3-8B-Instruct", "Llama-3-8B", true, "the paper's Llama 3 8B"},
		{"meta-llama/Llama-3.1-8B-Instruct", "Llama-3-8B", false, "Llama 3.1 shares words with Llama 3, but is another model"},
		{"gpt-4.1", "GPT-4.1", true, "the OpenAI id"},
		{"gpt-4.1-mini", "GPT-4.1", false, "the mini model is another model"},
		{"Qwen/Qwen2.5-7B-Instruct", "OLMo-2-7B", false, "another family"},
		{"Qwen/Qwen2.5-32B-Instruct", "Qwen2.5-32B", true, "Table 2's Qwen"},
		{OfflineReader, "OLMo-2-7B", false, "the offline reader is never a paper's model"},
	}
	for _, c := range cases {
		if got := SameModel(c.gen, c.model); got != c.want {
			t.Errorf("SameModel(%q, %q) = %v, want %v (%s)", c.gen, c.model, got, c.want, c.why)
		}
	}
}

// TestOtherModelNotCompared: a Qwen run whose config names OLMo-2-7B rows gets the paper numbers
// beside its own, no difference, and the reason.
func TestOtherModelNotCompared(t *testing.T) {
	spec := reportstest.Spec{Generator: "Qwen/Qwen2.5-7B-Instruct at http://127.0.0.1:8000/v1", Datasets: []string{"2wikimultihopqa"},
		Cells: []string{"quco"}, Questions: 20, Seed: 5, Model: "Qwen/Qwen2.5-7B-Instruct",
		Methods: []reportstest.Method{{Method: "quco", Paper: table1And8("QuCo-RAG", "2wikimultihopqa")}}}
	r := mustBuild(t, Options{Paper: loadReference(t)}, writeRun(t, "qwen", spec))
	main := tableByID(r, "main")
	row := rowByLabel(main, "quco")
	if i := colIndex(main, "em_paper", ""); i < 0 || row.Values[i].V == nil || *row.Values[i].V != 32.7 {
		t.Errorf("no paper EM 32.7 beside the Qwen row: %+v", main.Columns)
	}
	if i := colIndex(main, "em_delta", ""); i >= 0 {
		t.Errorf("a Δ column for a different model: %+v", main.Columns[i])
	}
	if !strings.Contains(strings.Join(main.Notes, "\n"), "ours ran Qwen/Qwen2.5-7B-Instruct, a different model, so the numbers are not comparable") {
		t.Errorf("notes give no reason: %q", main.Notes)
	}
}

// TestAblationAndSensitivityTables: the ablation config's labelled variants and the sensitivity
// sweeps (cooc_window, entity_aggregation) get the paper's tables, rows and numbers.
func TestAblationAndSensitivityTables(t *testing.T) {
	const m7 = "OLMo-2-7B"
	const win = "Sensitivity: window (later version)"
	const agg = "Sensitivity: stage-1 aggregation (later version)"
	spec := reportstest.Spec{Generator: "allenai/OLMo-2-1124-7B-Instruct", Datasets: []string{"2wikimultihopqa"}, Questions: 20, Seed: 6,
		Model: "allenai/OLMo-2-1124-7B-Instruct",
		Cells: []string{"quco", "quco-no-stage1", "quco-no-stage2", "qw[cooc_window=50]", "qw[cooc_window=100]", "qw[cooc_window=1000]",
			"qa[entity_aggregation=avg]", "qa[entity_aggregation=max]", "qa[entity_aggregation=min]"},
		Methods: []reportstest.Method{
			{Method: "quco", Paper: [][4]string{{"Table 3 (ablation)", m7, "2wikimultihopqa", "QuCo-RAG"}}},
			{Method: "quco", Label: "quco-no-stage1", Paper: [][4]string{{"Table 3 (ablation)", m7, "2wikimultihopqa", "QuCo-RAG w/o initial check"}}},
			{Method: "quco", Label: "quco-no-stage2", Paper: [][4]string{{"Table 3 (ablation)", m7, "2wikimultihopqa", "QuCo-RAG w/o runtime check"}}},
			{Method: "quco", Label: "qw", Sweep: true, Paper: [][4]string{{win, m7, "2wikimultihopqa", "QuCo-RAG window=50"}, {win, m7, "2wikimultihopqa", "QuCo-RAG window=100"},
				{win, m7, "2wikimultihopqa", "QuCo-RAG window=1000"}, {win, m7, "2wikimultihopqa", "QuCo-RAG window=2000"}}},
			{Method: "quco", Label: "qa", Sweep: true, Paper: [][4]string{{agg, m7, "2wikimultihopqa", "QuCo-RAG agg=min"}, {agg, m7, "2wikimultihopqa", "QuCo-RAG agg=avg"},
				{agg, m7, "2wikimultihopqa", "QuCo-RAG agg=max"}}},
		}}
	ref := loadReference(t)
	r := mustBuild(t, Options{Paper: ref}, writeRun(t, "abl", spec))
	want := map[string][]string{
		"ablation":            {"QuCo-RAG (quco)", "QuCo-RAG w/o initial check (quco-no-stage1)", "QuCo-RAG w/o runtime check (quco-no-stage2)"},
		"sensitivity-window":  {"QuCo-RAG window=50 (qw[cooc_window=50])", "QuCo-RAG window=100 (qw[cooc_window=100])", "QuCo-RAG window=1000 (qw[cooc_window=1000])"},
		"sensitivity-stage-1": {"QuCo-RAG agg=min (qa[entity_aggregation=min])", "QuCo-RAG agg=avg (qa[entity_aggregation=avg])", "QuCo-RAG agg=max (qa[entity_aggregation=max])"},
	}
	for id, rows := range want {
		tb := tableByID(r, id)
		if tb == nil {
			t.Errorf("no %s table", id)
			continue
		}
		var got []string
		for _, row := range tb.Rows {
			got = append(got, row.Label)
		}
		if strings.Join(got, "|") != strings.Join(rows, "|") {
			t.Errorf("%s rows %q, want %q (the paper's row names, in its order)", id, got, rows)
		}
	}
	checkPlaced(t, r, ref)
}

// TestReportDeterministic: four reports of the same runs are byte-identical, sweep rows in the
// numeric order of the swept setting.
func TestReportDeterministic(t *testing.T) {
	spec := reportstest.Spec{Generator: "test-model", Datasets: []string{"2wikimultihopqa"}, Questions: 10, Seed: 8,
		Cells: []string{"quco[tau_entity=1000000]", "quco[cooc_window=1000]", "quco[tau_entity=1000]", "quco[cooc_window=50]", "quco[entity_aggregation=min]",
			"quco[cooc_window=500]", "quco[tau_cooc=5]", "quco[tau_cooc=10]", "quco", "sr-rag", "quco-window-1000", "quco-window-50", "quco-window-250"}}
	dir := filepath.Join(t.TempDir(), "det")
	if err := reportstest.Write(dir, spec); err != nil {
		t.Fatal(err)
	}
	var first []byte
	for i := 0; i < 4; i++ {
		runs, err := LoadRuns(t.Context(), []string{dir})
		if err != nil {
			t.Fatal(err)
		}
		var b bytes.Buffer
		if err := mustBuild(t, Options{}, runs...).WriteTables(&b, "md"); err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			first = b.Bytes()
		} else if !bytes.Equal(first, b.Bytes()) {
			t.Fatalf("report %d differs from the first:\n%s", i+1, firstDiff(b.Bytes(), first))
		}
	}
	r := mustBuild(t, Options{}, writeRun(t, "det2", spec))
	var rows []string
	for _, row := range tableByID(r, "main").Rows {
		rows = append(rows, row.Label)
	}
	want := "sr-rag|quco|quco[cooc_window=50]|quco[cooc_window=500]|quco[cooc_window=1000]|quco[entity_aggregation=min]|quco[tau_cooc=5]|quco[tau_cooc=10]|quco[tau_entity=1000]|quco[tau_entity=1000000]|quco-window-50|quco-window-250|quco-window-1000"
	if strings.Join(rows, "|") != want {
		t.Errorf("rows %s, want %s", strings.Join(rows, "|"), want)
	}
}

// TestSharedTimeCounted: a cell whose retrievals came from the question memo shows the time they
// took when made (shared_ms), not the memo's near-zero.
func TestSharedTimeCounted(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "shared")
	spec := reportstest.Spec{Generator: "test-model", Datasets: []string{"nq_open"}, Cells: []string{"umg", "umgp"}, Questions: 3, Seed: 9, NoTimings: true}
	if err := reportstest.Write(dir, spec); err != nil {
		t.Fatal(err)
	}
	lines := map[string]string{
		"umg":  `{"id":"%s","cell":"umg","total_ms":60,"stages_ms":{"retrieval":50,"llm":10}}`,
		"umgp": `{"id":"%s","cell":"umgp","total_ms":10.1,"stages_ms":{"retrieval":0.1,"llm":10},"shared_ms":{"retrieval":50}}`,
	}
	for cell, l := range lines {
		var b strings.Builder
		for i := 0; i < 3; i++ {
			b.WriteString(strings.Replace(l, "%s", "nq_o-000"+itoa(i), 1) + "\n")
		}
		if err := os.WriteFile(filepath.Join(dir, "nq_open", cell+".timings.jsonl"), []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	runs, err := LoadRuns(t.Context(), []string{dir})
	if err != nil {
		t.Fatal(err)
	}
	r := mustBuild(t, Options{}, runs...)
	umgTable := tableByID(r, "umg")
	i := colIndex(umgTable, "ms_retrieval", "")
	for _, cell := range []string{"umg", "umgp"} {
		row := rowByLabel(umgTable, cell)
		// Question 0 of nq_open fails by the fixture's rule only at i=13; all three are answered.
		if row == nil || row.Values[i].V == nil || *row.Values[i].V < 50 {
			t.Errorf("%s retrieval ms %v, want ≥ 50 (its own retrievals, shared or not)", cell, row)
		}
	}
	for _, id := range []string{"cost", "umg"} {
		if tb := tableByID(r, id); !strings.Contains(strings.Join(tb.Notes, "\n"), "question memo") {
			t.Errorf("%s notes do not say that shared time is included: %q", id, tb.Notes)
		}
	}
}

// TestUMGRowsPlaced: UMG-RAG's NQ rows (fractions in the reference) are placed in the umg table in
// percent, with a Δ for the paper's Llama-3.2-3B; rows of another dataset than the cell's are not
// placed, and the report says so.
func TestUMGRowsPlaced(t *testing.T) {
	const table = "NQ, Qwen3-Embedding-4B + Llama-3.2-3B (secondary source, provisional)"
	spec := reportstest.Spec{Generator: "meta-llama/Llama-3.2-3B-Instruct at http://127.0.0.1:8000/v1", Model: "meta-llama/Llama-3.2-3B-Instruct",
		Datasets: []string{"nq_open"}, Cells: []string{"standard-rag", "hybrid", "umgp"}, Questions: 20, Seed: 12,
		Methods: []reportstest.Method{
			{Method: "standard-rag", Paper: [][4]string{{table, "Llama-3.2-3B", "nq_open", "Standard RAG"}}},
			{Method: "hybrid", Paper: [][4]string{{table, "Llama-3.2-3B", "nq_open", "Hybrid"}}},
			{Method: "umgp", Paper: [][4]string{{table, "Llama-3.2-3B", "nq_open", "UMGP-RAG"}}},
		}}
	ref := loadReference(t)
	r := mustBuild(t, Options{Paper: ref}, writeRun(t, "umg", spec))
	checkPlaced(t, r, ref)
	umg := tableByID(r, "umg")
	if i := colIndex(umg, "f1_paper", ""); i < 0 || *rowByLabel(umg, "umgp").Values[i].V != 52.2 {
		t.Errorf("UMGP-RAG F1 paper not 52.2 (0.522 in percent): %+v", umg.Columns)
	}
	if colIndex(umg, "f1_delta", "") < 0 {
		t.Error("no Δ for the paper's own model")
	}
	spec.Datasets = []string{"nq_longdoc"}
	run := writeRun(t, "umg-longdoc", spec)
	if !strings.Contains(strings.Join(run.Warnings, "\n"), "names 1 published rows of another dataset (not nq_longdoc); they are not placed") {
		t.Errorf("no warning for rows of another dataset: %q", run.Warnings)
	}
	for _, c := range run.Cells {
		if len(c.Paper) > 0 {
			t.Errorf("%s carries %v, rows of nq_open", c.Name, c.Paper)
		}
	}
	// The config says where the rows are reproduced (umg-nq: on the nq_longdoc pages): then they are
	// placed there, with no warning.
	for i := range spec.Methods {
		spec.Methods[i].On = "nq_longdoc"
	}
	on := writeRun(t, "umg-longdoc-on", spec)
	if len(on.Warnings) > 0 {
		t.Errorf("warnings with on: nq_longdoc: %q", on.Warnings)
	}
	for _, c := range on.Cells {
		if len(c.Paper) != 1 || c.Paper[0].Dataset != "nq_open" {
			t.Errorf("%s carries %v, want its one nq_open row placed on nq_longdoc", c.Name, c.Paper)
		}
	}
	r = mustBuild(t, Options{Paper: ref}, on)
	checkPlaced(t, r, ref)
	umg = tableByID(r, "umg")
	if i := colIndex(umg, "f1_paper", ""); i < 0 || *rowByLabel(umg, "umgp").Values[i].V != 52.2 {
		t.Errorf("on nq_longdoc: UMGP-RAG F1 paper not 52.2: %+v", umg.Columns)
	}
}
