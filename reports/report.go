package reports

import (
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/ragbench/ragbench/methods"
)

// Options control a report.
type Options struct {
	// CI computes bootstrap intervals for every cell when CI.Resamples > 0.
	CI CIOptions
	// Baseline names a row (a cell name, a method name, or a paper name such as "SR-RAG"); every
	// other row's scores get the p-value of a paired randomization test against it.
	Baseline string
	// Rounds are the randomization rounds of the paired test (default 1000).
	Rounds int
	// Paper, when set, puts the published numbers beside ours.
	Paper *Reference
	// PaperModel chooses the paper's model when our generator is none of the paper's models
	// (default: the first model the paper's table lists).
	PaperModel string
	// Prices, when configured, add money per question to the cost table (default: the first run's
	// config.yaml prices).
	Prices Prices
	// RecordBudget caps the bytes of the records embedded in the HTML page (default
	// DefaultRecordBudget); records are shortened to fit.
	RecordBudget int
}

// GroupKey is a column group of the grouped tables: one generator on one dataset.
type GroupKey struct{ Generator, Dataset string }

// Report is the set of tables built from runs.
type Report struct {
	// Runs are the runs reported; Cells all their cells.
	Runs  []*Run
	Cells []*Cell
	// Groups are the column groups (generator, dataset), sorted.
	Groups []GroupKey
	// Summary holds the cells' statistics.
	Summary *Summary
	// Tables are the built tables, in report order.
	Tables []*Table
	// Warnings are the runs' counted loading problems.
	Warnings []string
	opts     Options
	cell     map[GroupKey]map[string]*Cell
	rows     []string
	freqOnce sync.Once
	freq     map[string]map[string]float64 // dataset → question id → entity frequency
}

// pKeys are the metrics the paired test against the baseline applies to.
var pKeys = []string{"em", "f1", "acc", "label_acc"}

// ciKeys are the metrics that get bootstrap intervals (the cost table shows plain means).
var ciKeys = []string{"em", "f1", "acc", "label_acc", "answer_recall", "ar@5", "tok", "call", "ret", "ms_retrieval"}

// methodOrder is the row order of the papers' tables (by normalised name); other methods follow,
// sorted.
var methodOrder = []string{"wo", "sr", "standard", "fs", "flare", "dragin", "etc", "seakr", "hybrid", "umg", "umgp", "quco"}

// ShortGenerator drops a server address from a generator label ("M at http://..." → "M").
func ShortGenerator(g string) string {
	if i := strings.Index(g, " at "); i > 0 {
		return g[:i]
	}
	return g
}

// ModelName is the short name of a generator for column headers: the label without the server
// and without an organisation prefix ("allenai/OLMo-2-1124-7B-Instruct at http://..." →
// "OLMo-2-1124-7B-Instruct"). Notes and titles carry the full label.
func ModelName(g string) string {
	g = ShortGenerator(g)
	if i := strings.LastIndexByte(g, '/'); i >= 0 && i+1 < len(g) {
		return g[i+1:]
	}
	return g
}

func groupLabel(g GroupKey, multiGen bool) string {
	if multiGen {
		return ModelName(g.Generator) + " · " + g.Dataset
	}
	return g.Dataset
}

// Build loads nothing: it summarises runs already loaded and builds every table.
func Build(runs []*Run, opts Options) (*Report, error) {
	if opts.Rounds == 0 {
		opts.Rounds = 1000
	}
	if opts.CI.Level == 0 {
		opts.CI.Level = 0.95
	}
	if !opts.Prices.Configured() {
		for _, run := range runs {
			if run.Prices.Configured() {
				opts.Prices = run.Prices
				break
			}
		}
	}
	r := &Report{Runs: runs, opts: opts, cell: map[GroupKey]map[string]*Cell{}}
	where := map[string]string{}
	rowSet := map[string]bool{}
	for _, run := range runs {
		r.Warnings = append(r.Warnings, run.Warnings...)
		for _, c := range run.Cells {
			g := GroupKey{c.Generator, c.Dataset}
			k := g.Generator + "\x00" + g.Dataset + "\x00" + c.Row
			if prev, dup := where[k]; dup {
				return nil, fmt.Errorf("row %s on %s with %s comes twice (%s and %s/%s)", c.Row, c.Dataset, c.Generator, prev, run.Dir, c.Name)
			}
			where[k] = run.Dir + "/" + c.Name
			if r.cell[g] == nil {
				r.cell[g] = map[string]*Cell{}
				r.Groups = append(r.Groups, g)
			}
			r.cell[g][c.Row] = c
			r.Cells = append(r.Cells, c)
			rowSet[c.Row] = true
		}
	}
	sort.Slice(r.Groups, func(i, j int) bool {
		a, b := r.Groups[i], r.Groups[j]
		if a.Generator != b.Generator {
			return a.Generator < b.Generator
		}
		return a.Dataset < b.Dataset
	})
	for n := range rowSet {
		r.rows = append(r.rows, n)
	}
	sortRows(r.rows)
	keys := []string{"em", "f1", "acc", "label_acc", "answer_recall", "ar@5", "ret", "call", "tok", "prompt_tok", "answer_tok",
		"ms_total", "ms_llm", "ms_retrieval", "ms_ngram", "ms_extract"}
	if opts.Prices.Configured() {
		keys = append(keys, "usd")
	}
	r.Summary = Summarize(r.Cells, keys, ciKeys, opts.CI, opts.Prices)
	// The paired tests against the baseline, in parallel; the tables read them from the cache.
	type pair struct {
		a, b *Cell
		key  string
	}
	var pairs []pair
	for _, g := range r.Groups {
		b := r.baselineCell(g)
		if b == nil {
			continue
		}
		// The tables show p for EM and F1 on QA datasets and for accuracy on PubMedQA.
		keys := []string{"em", "f1"}
		if isPubMed(g) {
			keys = []string{r.pubmedAccKey()}
		}
		for _, c := range r.cell[g] {
			if c == b {
				continue
			}
			for _, k := range keys {
				if _, ok := r.Summary.Get(c, k); ok {
					pairs = append(pairs, pair{c, b, k})
				}
			}
		}
	}
	parallel(len(pairs), func(i int) { r.Summary.PValue(pairs[i].a, pairs[i].b, pairs[i].key, opts.Rounds) })
	r.buildTables()
	return r, nil
}

func sortRows(rows []string) {
	rank := func(name string) int {
		m, _ := ParseCell(name)
		n := normCellMethod(m)
		for i, o := range methodOrder {
			if n == o {
				return i
			}
		}
		return len(methodOrder)
	}
	sort.SliceStable(rows, func(i, j int) bool {
		ri, rj := rank(rows[i]), rank(rows[j])
		if ri != rj {
			return ri < rj
		}
		return lessCell(rows[i], rows[j])
	})
}

// lessCell orders cell names by method, then the default cell (no settings) first, then settings
// compared key by key, numbers by value ("window=50" before "window=1000").
func lessCell(a, b string) bool {
	ma, sa := ParseCell(a)
	mb, sb := ParseCell(b)
	if ma != mb {
		return ma < mb
	}
	if len(sa) != len(sb) {
		return len(sa) < len(sb)
	}
	keys := make([]string, 0, len(sa))
	for k := range sa {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		va, vb := sa[k], sb[k]
		if va == vb {
			continue
		}
		fa, ea := strconv.ParseFloat(va, 64)
		fb, eb := strconv.ParseFloat(vb, 64)
		if ea == nil && eb == nil && fa != fb {
			return fa < fb
		}
		return va < vb
	}
	return a < b
}

func (r *Report) multiGen() bool {
	for _, g := range r.Groups {
		if g.Generator != r.Groups[0].Generator {
			return true
		}
	}
	return false
}

// baselineCell finds the baseline row's cell in group g.
func (r *Report) baselineCell(g GroupKey) *Cell {
	b := r.opts.Baseline
	if b == "" {
		return nil
	}
	cells := r.cell[g]
	if c, ok := cells[b]; ok {
		return c
	}
	for _, name := range r.rows {
		if c, ok := cells[name]; ok && len(c.Settings) == 0 && (c.Method == b || SameMethod(name, b)) {
			return c
		}
	}
	return nil
}

// grouped builds a table with one column group per group in groups and the metrics as columns.
func (r *Report) grouped(id, title string, groups []GroupKey, rows []string, keys []string, paperTables []string) *Table {
	t := &Table{ID: id, Title: title, Stub: "Method"}
	multi := r.multiGen()
	type colSpec struct {
		g     GroupKey
		key   string
		kind  int // 0 ours, 1 paper, 2 delta
		paper paperSide
	}
	var cols []colSpec
	for _, g := range groups {
		label := groupLabel(g, multi)
		var side paperSide
		hasPaper := false
		if r.opts.Paper != nil && len(paperTables) > 0 {
			side, hasPaper = r.opts.Paper.side(paperTables, g.Generator, g.Dataset, r.opts.PaperModel)
			if hasPaper {
				t.Notes = append(t.Notes, side.note(label, g.Generator))
			}
		}
		span := 0
		for _, k := range keys {
			m := Metrics[k]
			cols = append(cols, colSpec{g: g, key: k})
			t.Columns = append(t.Columns, Column{Key: k, Label: m.Label, Decimals: m.Decimals})
			span++
			if hasPaper {
				if _, ok := paperKey[k]; ok {
					cols = append(cols, colSpec{g: g, key: k, kind: 1, paper: side}, colSpec{g: g, key: k, kind: 2, paper: side})
					t.Columns = append(t.Columns, Column{Key: k + "_paper", Label: m.Label + " paper", Decimals: m.Decimals},
						Column{Key: k + "_delta", Label: "Δ " + m.Label, Decimals: m.Decimals})
					span += 2
				}
			}
		}
		t.Groups = append(t.Groups, Group{Label: label, Span: span})
	}
	for _, name := range rows {
		row := Row{Label: name}
		any := false
		for _, cs := range cols {
			c := r.cell[cs.g][name]
			var ours Value
			var st Stat
			ok := false
			if c != nil {
				st, ok = r.Summary.Get(c, cs.key)
				ours = fromStat(st, ok)
				any = any || ok
			}
			switch cs.kind {
			case 0:
				if ok && slices.Contains(pKeys, cs.key) {
					if b := r.baselineCell(cs.g); b != nil && b != c {
						if p, ok := r.Summary.PValue(c, b, cs.key, r.opts.Rounds); ok {
							ours.P = &p
						}
					}
				}
				row.Values = append(row.Values, ours)
			case 1, 2:
				pv, pok := cs.paper.value(name, cs.key)
				switch {
				case !pok:
					row.Values = append(row.Values, Value{})
				case cs.kind == 1:
					row.Values = append(row.Values, num(pv))
				case !cs.paper.comparable:
					row.Values = append(row.Values, Value{Text: "n/a"})
				case !ok:
					row.Values = append(row.Values, Value{})
				default:
					d := num(st.Mean - pv)
					d.Delta = true
					row.Values = append(row.Values, d)
				}
			}
		}
		if any {
			t.Rows = append(t.Rows, row)
		}
	}
	if r.opts.Baseline != "" {
		t.Notes = append(t.Notes, fmt.Sprintf("p: two-sided paired approximate randomization test (%d rounds) of each row against %s on the same questions.", r.opts.Rounds, r.opts.Baseline))
	}
	if r.opts.CI.Resamples > 0 {
		t.Notes = append(t.Notes, fmt.Sprintf("[lo, hi]: %g%% percentile bootstrap interval over questions (%d resamples, seed %d).", 100*r.opts.CI.Level, r.opts.CI.Resamples, r.opts.CI.Seed))
	}
	return t
}

func (r *Report) groupsWhere(f func(GroupKey) bool) []GroupKey {
	var out []GroupKey
	for _, g := range r.Groups {
		if f(g) {
			out = append(out, g)
		}
	}
	return out
}

// freqKey returns the entity-frequency key for cell c's records: a record's own signal, else the
// signal another cell recorded for the same question on the same dataset (the first in cell order:
// group, then row). Entity frequency is a property of the question, so every method can be broken
// down by it even if only QuCo-RAG measures it.
func (r *Report) freqKey(c *Cell) func(*methods.Record) (string, bool) {
	r.freqOnce.Do(func() {
		r.freq = map[string]map[string]float64{}
		for _, g := range r.Groups {
			for _, name := range r.rows {
				cc := r.cell[g][name]
				if cc == nil {
					continue
				}
				m := r.freq[cc.Dataset]
				if m == nil {
					m = map[string]float64{}
					r.freq[cc.Dataset] = m
				}
				for i := range cc.Records {
					rec := &cc.Records[i]
					if f, ok := rec.Signals["entity_freq"]; ok {
						if _, seen := m[rec.ID]; !seen {
							m[rec.ID] = f
						}
					}
				}
			}
		}
	})
	known := r.freq[c.Dataset]
	return func(rec *methods.Record) (string, bool) {
		if k, ok := FreqKey(rec); ok {
			return k, true
		}
		f, ok := known[rec.ID]
		if !ok {
			return "", false
		}
		return FreqBins[FreqBin(f)].Label, true
	}
}

// pubmedAccKey is the PubMedQA table's accuracy: label accuracy when some PubMedQA cell has it,
// else sub-EM accuracy.
func (r *Report) pubmedAccKey() string {
	for _, g := range r.groupsWhere(isPubMed) {
		for _, c := range r.cell[g] {
			if c.hasScore("label_acc") {
				return "label_acc"
			}
		}
	}
	return "acc"
}

func isPubMed(g GroupKey) bool { return strings.HasPrefix(strings.ToLower(g.Dataset), "pubmedqa") }

func (r *Report) buildTables() {
	qa := r.groupsWhere(func(g GroupKey) bool { return !isPubMed(g) })
	pm := r.groupsWhere(isPubMed)
	if len(qa) > 0 {
		r.Tables = append(r.Tables,
			r.grouped("main", "Main results: EM and F1 (%) per generator and dataset (QuCo-RAG Table 1 layout)", qa, r.rows, []string{"em", "f1"}, []string{"Table 1", "Table 2"}),
			r.grouped("efficiency", "Efficiency: generated tokens (#Tok), generator calls (#Call) and retrievals (#Ret) per question", qa, r.rows, []string{"tok", "call", "ret"}, []string{"Table 8"}))
		if abl := r.ablationRows(); len(abl) > 0 {
			r.Tables = append(r.Tables, r.grouped("ablation", "Ablation and settings: EM, F1 (%) and #Ret per question", qa, abl, []string{"em", "f1", "ret"}, []string{"Table 3", "Sensitivity"}))
		}
	}
	if len(pm) > 0 {
		acc := r.pubmedAccKey()
		r.Tables = append(r.Tables, r.grouped("pubmedqa", "PubMedQA: accuracy (%), #Ret and #Tok per question", pm, r.rows, []string{acc, "ret", "tok"}, []string{"PubMedQA"}))
	}
	if len(qa) > 0 {
		// Answer recall and AR@5 are columns only when some cell's records carry them.
		keys := []string{"f1"}
		for _, k := range []string{"answer_recall", "ar@5"} {
			for _, c := range r.Cells {
				if _, ok := r.Summary.Get(c, k); ok {
					keys = append(keys, k)
					break
				}
			}
		}
		keys = append(keys, "ms_retrieval")
		r.Tables = append(r.Tables, r.grouped("umg", "UMG-RAG layout: F1, answer recall (AR), AR@5 (%) and retrieval time per question (ms)", qa, r.rows, keys, []string{"NQ,"}))
	}
	r.Tables = append(r.Tables, r.costTable())
	same := func(k func(*methods.Record) (string, bool)) func(*Cell) func(*methods.Record) (string, bool) {
		return func(*Cell) func(*methods.Record) (string, bool) { return k }
	}
	freq := r.breakdown("by_entity_freq", "EM (%) by entity-frequency bin of the question (signals.entity_freq; QuCo-RAG's bins)", r.freqKey, freqOrder())
	freq.Notes = append([]string{"A question's entity frequency is its record's signals.entity_freq, or, for a method that does not measure it, the one another cell measured for the same question on the same dataset."}, freq.Notes...)
	r.Tables = append(r.Tables, freq)
	r.Tables = append(r.Tables, r.breakdown("by_type", "EM (%) by question type", same(TypeKey), nil))
	r.Tables = append(r.Tables, r.breakdown("by_retrieval", "EM (%) by whether retrieval fired", same(FiredKey), []string{"retrieved", "no retrieval"}))
	for _, t := range r.Tables {
		t.Notes = append(t.Notes, "Generator: "+r.generatorsText()+".")
	}
}

func (r *Report) generatorsText() string {
	var gens []string
	seen := map[string]bool{}
	for _, g := range r.Groups {
		if !seen[g.Generator] {
			seen[g.Generator] = true
			gens = append(gens, g.Generator)
		}
	}
	return strings.Join(gens, "; ")
}

func freqOrder() []string {
	out := make([]string, len(FreqBins))
	for i, b := range FreqBins {
		out[i] = b.Label
	}
	return out
}

// ablationRows are the cells of every method that has more than one cell, plus the baseline.
func (r *Report) ablationRows() []string {
	count := map[string]int{}
	for _, name := range r.rows {
		m, _ := ParseCell(name)
		count[m]++
	}
	var out []string
	variants := false
	for _, name := range r.rows {
		m, _ := ParseCell(name)
		switch {
		case count[m] > 1:
			out = append(out, name)
			variants = true
		case r.opts.Baseline != "" && (name == r.opts.Baseline || SameMethod(name, r.opts.Baseline)):
			out = append(out, name)
		}
	}
	if !variants {
		return nil
	}
	return out
}

// longRows iterates groups × rows where the cell exists.
func (r *Report) longRows(f func(g GroupKey, c *Cell, label string)) {
	multi := r.multiGen()
	for _, g := range r.Groups {
		for _, name := range r.rows {
			if c := r.cell[g][name]; c != nil {
				f(g, c, groupLabel(g, multi)+" · "+name)
			}
		}
	}
}

func (r *Report) costTable() *Table {
	keys := []string{"ms_total", "ms_llm", "ms_retrieval", "ms_ngram", "ms_extract", "prompt_tok", "tok", "answer_tok", "call", "ret"}
	if r.opts.Prices.Configured() {
		keys = append(keys, "usd")
	}
	t := &Table{ID: "cost", Title: "Cost and latency per question: wall time by stage (ms), tokens in and out, calls", Stub: "Dataset · method"}
	for _, k := range keys {
		m := Metrics[k]
		t.Columns = append(t.Columns, Column{Key: k, Label: m.Label, Decimals: m.Decimals})
	}
	untimed := 0
	r.longRows(func(g GroupKey, c *Cell, label string) {
		row := Row{Label: label}
		for _, k := range keys {
			v := fromStat(r.Summary.Get(c, k))
			v.Lo, v.Hi = nil, nil // plain means: the intervals are in the other tables
			row.Values = append(row.Values, v)
		}
		untimed += len(c.Records) - len(c.Timings)
		t.Rows = append(t.Rows, row)
	})
	t.Notes = append(t.Notes, "Times are measured wall times (timings files; they vary between runs); Tok in are prompt tokens, #Tok generated tokens, Ans. tok the answer-completion call's prompt and completion tokens.")
	if untimed > 0 {
		t.Notes = append(t.Notes, fmt.Sprintf("%d questions have no timing line and are left out of the times.", untimed))
	}
	if p := r.opts.Prices; p.Configured() {
		t.Notes = append(t.Notes, fmt.Sprintf("USD at %g per 1M prompt tokens and %g per 1M completion tokens (answer-completion tokens at the prompt price).", p.PromptPerM, p.CompletionPerM))
	}
	return t
}

func (r *Report) breakdown(id, title string, keyOf func(*Cell) func(*methods.Record) (string, bool), order []string) *Table {
	t := &Table{ID: id, Title: title, Stub: "Dataset · method"}
	em := Metrics["em"]
	type rowData struct {
		label string
		b     Breakdown
	}
	var data []rowData
	present := map[string]bool{}
	missing := 0
	r.longRows(func(g GroupKey, c *Cell, label string) {
		b := BreakdownBy(c, em, keyOf(c), order)
		if len(b.Keys) == 0 {
			missing += b.Missing
			return
		}
		missing += b.Missing
		for _, k := range b.Keys {
			present[k] = true
		}
		data = append(data, rowData{label, b})
	})
	var cols []string
	inOrder := map[string]bool{}
	for _, k := range order {
		inOrder[k] = true
		if present[k] {
			cols = append(cols, k)
		}
	}
	var rest []string
	for k := range present {
		if !inOrder[k] {
			rest = append(rest, k)
		}
	}
	sort.Strings(rest)
	cols = append(cols, rest...)
	for _, k := range cols {
		t.Columns = append(t.Columns, Column{Key: k, Label: k, Decimals: 1})
	}
	for _, d := range data {
		row := Row{Label: d.label}
		for _, k := range cols {
			if n := d.b.Count[k]; n > 0 {
				v := num(d.b.Mean[k])
				v.N, v.ShowN = n, true
				row.Values = append(row.Values, v)
			} else {
				row.Values = append(row.Values, Value{})
			}
		}
		t.Rows = append(t.Rows, row)
	}
	t.Notes = append(t.Notes, "Each cell: EM (%) over the questions in the column's class, with their number n.")
	if missing > 0 {
		t.Notes = append(t.Notes, fmt.Sprintf("%d questions lack the key this table splits by and are left out.", missing))
	}
	return t
}

// Baseline returns the number of column groups in which the baseline row was found (0 when no
// baseline is set or it matches no row).
func (r *Report) Baseline() int {
	n := 0
	for _, g := range r.Groups {
		if r.baselineCell(g) != nil {
			n++
		}
	}
	return n
}
