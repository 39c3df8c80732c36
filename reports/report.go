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

// GroupKey is one generator on one dataset: the generator label of the records, the model the cells
// were planned with when the run sweeps models (the cell name's "@MODEL" part, "" otherwise), and
// the dataset. The grouped tables stack one block of rows per (Generator, Model), in the papers'
// model order, with one column group per dataset.
type GroupKey struct{ Generator, Model, Dataset string }

// block is the (generator, planned model) part of a group key.
func (g GroupKey) block() GroupKey { return GroupKey{Generator: g.Generator, Model: g.Model} }

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

// blockLabel names a block of rows: the generator's short name, and the planned model when the
// generator is not it (the offline reader standing in for a model sweep's model).
func blockLabel(g GroupKey) string {
	name := ModelName(g.Generator)
	if g.Model != "" && ModelIdentity(g.Model) != ModelIdentity(g.Generator) {
		return name + " (planned: " + g.Model + ")"
	}
	return name
}

func groupLabel(g GroupKey, multiGen bool) string {
	if multiGen {
		return blockLabel(g) + " · " + g.Dataset
	}
	return g.Dataset
}

// datasetOrder is the papers' column order (canonical dataset names); others follow, sorted.
var datasetOrder = []string{"2wikimultihopqa", "hotpotqa", "nq_open", "pubmedqa"}

func datasetRank(d string) int {
	c := canonicalDataset(d)
	for i, o := range datasetOrder {
		if c == o {
			return i
		}
	}
	return len(datasetOrder)
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
			g := GroupKey{c.Generator, cellModel(c.Name), c.Dataset}
			k := g.Generator + "\x00" + g.Model + "\x00" + g.Dataset + "\x00" + c.Row
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
		if ra, rb := r.blockRank(a), r.blockRank(b); ra != rb {
			return ra < rb
		}
		if a.Generator != b.Generator {
			return a.Generator < b.Generator
		}
		if a.Model != b.Model {
			return a.Model < b.Model
		}
		if da, db := datasetRank(a.Dataset), datasetRank(b.Dataset); da != db {
			return da < db
		}
		return a.Dataset < b.Dataset
	})
	if opts.Paper != nil {
		for _, c := range r.Cells {
			for _, ref := range c.Paper {
				if _, ok := opts.Paper.lookup(ref); !ok {
					r.Warnings = append(r.Warnings, fmt.Sprintf("%s/%s names a published row that the reference does not hold: %s / %s / %s / %s", c.Dataset, c.Name, ref.Table, ref.Model, ref.Dataset, ref.Method))
				}
			}
		}
	}
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

// blockRank orders blocks by the papers' model order: the generator's model, or for the offline
// reader the model it stands in for (then after the real model).
func (r *Report) blockRank(g GroupKey) int {
	m := g.Generator
	off := 0
	if ShortGenerator(g.Generator) == OfflineReader {
		m, off = g.Model, 1
	} else if g.Model != "" {
		m = g.Model
	}
	return 2*r.opts.Paper.modelRank(m) + off
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

// lessCell orders cell names by method, then the default cell (no settings) first, then by which
// settings vary (their sorted keys), then the settings' values key by key, numbers by value
// ("window=50" before "window=1000"), then by name: a total order, so rows never change places
// between two reports.
func lessCell(a, b string) bool {
	ma, sa := ParseCell(a)
	mb, sb := ParseCell(b)
	if ma != mb {
		return naturalLess(ma, mb)
	}
	if len(sa) != len(sb) {
		return len(sa) < len(sb)
	}
	ka, kb := sortedKeys(sa), sortedKeys(sb)
	if ja, jb := strings.Join(ka, ","), strings.Join(kb, ","); ja != jb {
		return ja < jb
	}
	for _, k := range ka {
		va, vb := sa[k], sb[k]
		if va == vb {
			continue
		}
		fa, ea := strconv.ParseFloat(va, 64)
		fb, eb := strconv.ParseFloat(vb, 64)
		if ea == nil && eb == nil && fa != fb {
			return fa < fb
		}
		if (ea == nil) != (eb == nil) {
			return ea == nil
		}
		return va < vb
	}
	return a < b
}

// naturalLess orders strings with their digit runs compared as numbers ("quco-window-50" before
// "quco-window-250" before "quco-window-1000"), then bytewise.
func naturalLess(a, b string) bool {
	i, j := 0, 0
	for i < len(a) && j < len(b) {
		if isDigit(a[i]) && isDigit(b[j]) {
			si, sj := i, j
			for i < len(a) && isDigit(a[i]) {
				i++
			}
			for j < len(b) && isDigit(b[j]) {
				j++
			}
			na, nb := strings.TrimLeft(a[si:i], "0"), strings.TrimLeft(b[sj:j], "0")
			if len(na) != len(nb) {
				return len(na) < len(nb)
			}
			if na != nb {
				return na < nb
			}
			continue
		}
		if a[i] != b[j] {
			return a[i] < b[j]
		}
		i++
		j++
	}
	if len(a)-i != len(b)-j {
		return len(a)-i < len(b)-j
	}
	return a < b
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// sortedKeys returns a map's keys, sorted.
func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func (r *Report) multiGen() bool {
	for _, g := range r.Groups {
		if g.block() != r.Groups[0].block() {
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

// paperRow returns the published row cell c reproduces in one of tables (prefixes of the
// reference's table names), from the rows its config names (Cell.Paper): the one of the cell's
// planned model, else of --paper-model, else the first named. comparable is true only when the
// generator that answered is that very model (never for the offline reader).
func (r *Report) paperRow(c *Cell, tables []string) (row PaperRow, comparable, ok bool) {
	if r.opts.Paper == nil || c == nil {
		return PaperRow{}, false, false
	}
	var cands []PaperRow
	for _, ref := range c.Paper {
		for _, t := range tables {
			if strings.HasPrefix(ref.Table, t) {
				if pr, found := r.opts.Paper.lookup(ref); found {
					cands = append(cands, pr)
				}
				break
			}
		}
	}
	if len(cands) == 0 {
		return PaperRow{}, false, false
	}
	row = cands[0]
	planned := c.Model
	if planned == "" {
		planned = c.Generator
	}
	found := false
	for _, pr := range cands {
		if ModelIdentity(pr.Model) == ModelIdentity(planned) {
			row, found = pr, true
			break
		}
	}
	// A cell that names rows of its own model (a model sweep's entry names each model's rows) takes
	// no other model's: the entry's Table 3 rows of OLMo-2-7B are not the 32B cell's.
	if !found {
		for _, ref := range c.Paper {
			if ModelIdentity(ref.Model) == ModelIdentity(planned) {
				return PaperRow{}, false, false
			}
		}
	}
	if !found && r.opts.PaperModel != "" {
		for _, pr := range cands {
			if ModelIdentity(pr.Model) == ModelIdentity(r.opts.PaperModel) {
				row = pr
				break
			}
		}
	}
	return row, SameModel(c.Generator, row.Model), true
}

// paperNote says what a block's paper columns are and whether a difference is shown.
func paperNote(block GroupKey, c *Cell, pr PaperRow, comparable bool) string {
	src := pr.Paper + " " + pr.Table + ", " + pr.Model
	switch {
	case comparable:
		return fmt.Sprintf("%s: the paper columns are %s, the same model as ours (%s): Δ = ours − paper.", blockLabel(block), src, ShortGenerator(c.Generator))
	case ShortGenerator(c.Generator) == OfflineReader:
		return fmt.Sprintf("%s: the paper columns are %s, shown for reference; ours ran the %s, not that model, so the numbers are not comparable and no difference is computed.", blockLabel(block), src, OfflineReader)
	default:
		return fmt.Sprintf("%s: the paper columns are %s, shown for reference; ours ran %s, a different model, so the numbers are not comparable and no difference is computed.", blockLabel(block), src, ShortGenerator(c.Generator))
	}
}

// grouped builds a table of the cells of groups: one column group per dataset with the metrics in
// keys (each followed by the paper's number and, for the identical model, the difference, when some
// cell names a published row of paperTables), and one block of rows per generator (and planned
// model), in the papers' model order, headed by a section row when there are several. An errors
// column ("Err.") and an answered-of-planned column ("n") are added when some cell has failed
// questions or fewer records than planned. labels, when set, rename rows (the paper's row names).
func (r *Report) grouped(id, title string, groups []GroupKey, rows []string, keys []string, paperTables []string, labels map[string]string) *Table {
	t := &Table{ID: id, Title: title, Stub: "Method"}
	var blocks []GroupKey
	var dsets []string
	seenB, seenD := map[GroupKey]bool{}, map[string]bool{}
	for _, g := range groups {
		if !seenB[g.block()] {
			seenB[g.block()] = true
			blocks = append(blocks, g.block())
		}
		if !seenD[g.Dataset] {
			seenD[g.Dataset] = true
			dsets = append(dsets, g.Dataset)
		}
	}
	sort.SliceStable(dsets, func(i, j int) bool {
		if a, b := datasetRank(dsets[i]), datasetRank(dsets[j]); a != b {
			return a < b
		}
		return dsets[i] < dsets[j]
	})
	cellOf := func(b GroupKey, ds, name string) *Cell {
		return r.cell[GroupKey{b.Generator, b.Model, ds}][name]
	}
	// Which extra columns each dataset needs.
	type dsCols struct {
		paper, delta  map[string]bool
		errs, partial bool
	}
	need := map[string]*dsCols{}
	var notes []string
	seenNote := map[string]bool{}
	for _, ds := range dsets {
		dc := &dsCols{paper: map[string]bool{}, delta: map[string]bool{}}
		need[ds] = dc
		for _, b := range blocks {
			for _, name := range rows {
				c := cellOf(b, ds, name)
				if c == nil {
					continue
				}
				dc.errs = dc.errs || c.Errors > 0
				dc.partial = dc.partial || len(c.Records) < c.Planned
				pr, comparable, ok := r.paperRow(c, paperTables)
				if !ok {
					continue
				}
				for _, k := range keys {
					if _, has := pr.value(k); has {
						dc.paper[k] = true
						dc.delta[k] = dc.delta[k] || comparable
					}
				}
				if n := paperNote(b, c, pr, comparable); !seenNote[n] {
					seenNote[n] = true
					notes = append(notes, n)
				}
			}
		}
	}
	type colSpec struct {
		ds   string
		key  string
		kind int // 0 ours, 1 paper, 2 delta, 3 errors, 4 answered of planned
	}
	var cols []colSpec
	for _, ds := range dsets {
		span := 0
		add := func(cs colSpec, c Column) {
			cols = append(cols, cs)
			t.Columns = append(t.Columns, c)
			span++
		}
		dc := need[ds]
		for _, k := range keys {
			m := Metrics[k]
			add(colSpec{ds: ds, key: k}, Column{Key: k, Label: m.Label, Decimals: m.Decimals})
			if dc.paper[k] {
				add(colSpec{ds: ds, key: k, kind: 1}, Column{Key: k + "_paper", Label: m.Label + " paper", Decimals: m.Decimals, Paper: true})
			}
			if dc.delta[k] {
				add(colSpec{ds: ds, key: k, kind: 2}, Column{Key: k + "_delta", Label: "Δ " + m.Label, Decimals: m.Decimals, Paper: true})
			}
		}
		if dc.errs {
			add(colSpec{ds: ds, kind: 3}, Column{Key: "errors", Label: "Err.", Decimals: 0})
		}
		if dc.partial {
			add(colSpec{ds: ds, kind: 4}, Column{Key: "answered", Label: "n", Decimals: 0})
		}
		t.Groups = append(t.Groups, Group{Label: ds, Span: span})
	}
	for _, b := range blocks {
		var block []Row
		for _, name := range rows {
			label := name
			if l, ok := labels[name]; ok {
				label = l
			}
			row := Row{Label: label}
			exists := false
			for _, cs := range cols {
				c := cellOf(b, cs.ds, name)
				exists = exists || c != nil
				if c == nil {
					row.Values = append(row.Values, Value{})
					continue
				}
				st, ok := r.Summary.Get(c, cs.key)
				switch cs.kind {
				case 0:
					ours := fromStat(st, ok)
					if ok && slices.Contains(pKeys, cs.key) {
						g := GroupKey{b.Generator, b.Model, cs.ds}
						if bc := r.baselineCell(g); bc != nil && bc != c {
							if p, ok := r.Summary.PValue(c, bc, cs.key, r.opts.Rounds); ok {
								ours.P = &p
							}
						}
					}
					row.Values = append(row.Values, ours)
				case 1, 2:
					pr, comparable, pok := r.paperRow(c, paperTables)
					pv, vok := pr.value(cs.key)
					switch {
					case !pok || !vok:
						row.Values = append(row.Values, Value{})
					case cs.kind == 1:
						v := num(pv)
						v.Paper = true
						row.Values = append(row.Values, v)
					case !comparable:
						row.Values = append(row.Values, Value{Text: "n/a", Paper: true})
					case !ok:
						row.Values = append(row.Values, Value{})
					default:
						d := num(st.Mean - pv)
						d.Delta, d.Paper = true, true
						row.Values = append(row.Values, d)
					}
				case 3:
					row.Values = append(row.Values, num(float64(c.Errors)))
				case 4:
					if len(c.Records) < c.Planned {
						row.Values = append(row.Values, Value{Text: fmt.Sprintf("%d of %d", len(c.Records), c.Planned)})
					} else {
						row.Values = append(row.Values, Value{Text: strconv.Itoa(len(c.Records))})
					}
				}
			}
			if exists {
				block = append(block, row)
			}
		}
		if len(block) == 0 {
			continue
		}
		if len(blocks) > 1 {
			t.Rows = append(t.Rows, Row{Label: blockLabel(b), Section: true})
		}
		t.Rows = append(t.Rows, block...)
	}
	t.Notes = append(t.Notes, notes...)
	if r.opts.Paper != nil && len(paperTables) > 0 && len(notes) == 0 {
		t.Notes = append(t.Notes, fmt.Sprintf("No cell names a published row of %s (methods[].paper in the run's config.yaml), so no paper numbers are shown.", strings.Join(paperTables, ", ")))
	}
	for _, ds := range dsets {
		if need[ds].errs {
			t.Notes = append(t.Notes, "Err.: failed questions (the record carries an error), left out of every score and count; the other columns are over the answered questions.")
			break
		}
	}
	for _, ds := range dsets {
		if need[ds].partial {
			t.Notes = append(t.Notes, "n: records of the planned questions; \"23 of 100\" marks a cell of an interrupted run or a shard, whose numbers cover only the questions it answered.")
			break
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
			r.grouped("main", "Main results: EM and F1 (%) per generator and dataset (QuCo-RAG Table 1 layout)", qa, r.rows, []string{"em", "f1"}, []string{"Table 1", "Table 2"}, nil),
			r.grouped("efficiency", "Efficiency: generated tokens (#Tok), generator calls (#Call) and retrievals (#Ret) per question", qa, r.rows, []string{"tok", "call", "ret"}, []string{"Table 8"}, nil))
		if abl, labels := r.paperRows("Table 3"); len(abl) > 0 {
			r.Tables = append(r.Tables, r.grouped("ablation", "Ablation (QuCo-RAG Table 3): EM, F1 (%) and #Ret per question", qa, abl, []string{"em", "f1", "ret"}, []string{"Table 3"}, labels))
		} else if abl := r.ablationRows(); len(abl) > 0 {
			r.Tables = append(r.Tables, r.grouped("ablation", "Ablation and settings: EM, F1 (%) and #Ret per question", qa, abl, []string{"em", "f1", "ret"}, nil, nil))
		}
		for _, st := range r.sensitivityTables() {
			rows, labels := r.paperRows(st)
			what := strings.TrimSpace(strings.TrimPrefix(st, "Sensitivity:"))
			r.Tables = append(r.Tables, r.grouped("sensitivity-"+slug(strings.Fields(what)[0]), "Sensitivity ("+what+"): EM, F1 (%) and #Ret per question", qa, rows, []string{"em", "f1", "ret"}, []string{st}, labels))
		}
	}
	if len(pm) > 0 {
		acc := r.pubmedAccKey()
		r.Tables = append(r.Tables, r.grouped("pubmedqa", "PubMedQA: accuracy (%), #Ret and #Tok per question", pm, r.rows, []string{acc, "ret", "tok"}, []string{"PubMedQA"}, nil))
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
		r.Tables = append(r.Tables, r.grouped("umg", "UMG-RAG layout: F1, answer recall (AR), AR@5 (%) and retrieval time per question (ms)", qa, r.rows, keys, []string{"NQ,"}, nil))
		if r.sharedTime() {
			t := r.Tables[len(r.Tables)-1]
			t.Notes = append(t.Notes, "Retr. ms is the retrieval time each method needs on its own: retrievals a cell took from the runner's question memo (made first by another cell) count with the time they took then (shared_ms), not as free.")
		}
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
	var partial []string
	for _, g := range r.Groups {
		for _, name := range r.rows {
			if c := r.cell[g][name]; c != nil && len(c.Records) < c.Planned {
				partial = append(partial, fmt.Sprintf("%s on %s (%s): %d of %d", name, g.Dataset, blockLabel(g), len(c.Records), c.Planned))
			}
		}
	}
	for _, t := range r.Tables {
		if len(partial) > 0 {
			t.Notes = append(t.Notes, "Incomplete (an interrupted run or a shard): "+strings.Join(partial, "; ")+" planned questions have records; their numbers cover only those.")
		}
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

// sharedTime reports whether some answered question's timing includes calls shared through the
// runner's question memo.
func (r *Report) sharedTime() bool {
	for _, c := range r.Cells {
		for _, tm := range c.Timings {
			if len(tm.Shared) > 0 {
				return true
			}
		}
	}
	return false
}

// paperRows are the rows whose cells name a published row of the reference table named table (a
// prefix), in the paper's row order, labelled with the paper's row names (ours in parentheses).
func (r *Report) paperRows(table string) ([]string, map[string]string) {
	rank := map[string]int{}
	labels := map[string]string{}
	order := map[string]int{} // paper method → its position
	if r.opts.Paper != nil {
		for _, pr := range r.opts.Paper.Rows {
			if strings.HasPrefix(pr.Table, table) {
				if _, ok := order[pr.Method]; !ok {
					order[pr.Method] = len(order)
				}
			}
		}
	}
	for _, c := range r.Cells {
		for _, ref := range c.Paper {
			if !strings.HasPrefix(ref.Table, table) {
				continue
			}
			pos, ok := order[ref.Method]
			if !ok {
				pos = len(order) + 1000
			}
			if old, seen := rank[c.Row]; !seen || pos < old {
				rank[c.Row] = pos
				labels[c.Row] = ref.Method + " (" + c.Row + ")"
			}
		}
	}
	rows := make([]string, 0, len(rank))
	for row := range rank {
		rows = append(rows, row)
	}
	sort.Slice(rows, func(i, j int) bool {
		if rank[rows[i]] != rank[rows[j]] {
			return rank[rows[i]] < rank[rows[j]]
		}
		return lessCell(rows[i], rows[j])
	})
	return rows, labels
}

// sensitivityTables are the published sensitivity tables ("Sensitivity: ...") that cells name,
// sorted.
func (r *Report) sensitivityTables() []string {
	seen := map[string]bool{}
	var out []string
	for _, c := range r.Cells {
		for _, ref := range c.Paper {
			if strings.HasPrefix(ref.Table, "Sensitivity") && !seen[ref.Table] {
				seen[ref.Table] = true
				out = append(out, ref.Table)
			}
		}
	}
	sort.Strings(out)
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
				label := groupLabel(g, multi) + " · " + name
				if len(c.Records) < c.Planned {
					label += fmt.Sprintf(" (%d of %d)", len(c.Records), c.Planned)
				}
				f(g, c, label)
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
	t.Columns = append(t.Columns, Column{Key: "errors", Label: "Err.", Decimals: 0})
	untimed, shared := 0, 0
	r.longRows(func(g GroupKey, c *Cell, label string) {
		row := Row{Label: label}
		for _, k := range keys {
			v := fromStat(r.Summary.Get(c, k))
			v.Lo, v.Hi = nil, nil // plain means: the intervals are in the other tables
			row.Values = append(row.Values, v)
		}
		row.Values = append(row.Values, num(float64(c.Errors)))
		for i := range c.Records {
			rec := &c.Records[i]
			if rec.Error != "" {
				continue
			}
			if tm, ok := c.Timings[rec.ID]; !ok {
				untimed++
			} else if len(tm.Shared) > 0 {
				shared++
			}
		}
		t.Rows = append(t.Rows, row)
	})
	t.Notes = append(t.Notes, "Times are measured wall times (timings files; they vary between runs); Tok in are prompt tokens, #Tok generated tokens, Ans. tok the answer-completion call's prompt and completion tokens; Err. failed questions, left out of every other column.")
	if shared > 0 {
		t.Notes = append(t.Notes, fmt.Sprintf("Times are what each method needs on its own: for the calls a cell took from the runner's question memo (another cell of the same question made them first), the time they took then is included (shared_ms of the timings files; %d question-cells).", shared))
	}
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
	missing, failed := 0, 0
	r.longRows(func(g GroupKey, c *Cell, label string) {
		failed += c.Errors
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
	if failed > 0 {
		t.Notes = append(t.Notes, fmt.Sprintf("%d failed questions (records with an error) are left out.", failed))
	}
	if missing > 0 {
		t.Notes = append(t.Notes, fmt.Sprintf("%d questions lack the key this table splits by and are left out.", missing))
	}
	return t
}

// NamesPaperRows reports whether some cell names a published row (methods[].paper in its run's
// config).
func (r *Report) NamesPaperRows() bool {
	for _, c := range r.Cells {
		if len(c.Paper) > 0 {
			return true
		}
	}
	return false
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
