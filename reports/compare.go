package reports

import (
	"bytes"
	"fmt"
	"io"
	"math"
	"slices"
	"sort"
	"strings"

	"github.com/ragbench/ragbench/methods"
	"github.com/ragbench/ragbench/metrics"
)

// CompareOptions control Compare.
type CompareOptions struct {
	// Metrics to compare (default em, f1); keys of Metrics.
	Metrics []string `json:"metrics"`
	// MaxDrop is the allowed drop in points (percent) before a significant difference is a
	// regression (default 0.5).
	MaxDrop float64 `json:"max_drop"`
	// Alpha is the significance level of the paired test (default 0.05).
	Alpha float64 `json:"alpha"`
	// Rounds of the randomization test (default 10000); Resamples of the bootstrap interval on the
	// difference (default 1000); Level of that interval (default 0.95); Seed of both.
	Rounds    int     `json:"rounds"`
	Resamples int     `json:"resamples"`
	Level     float64 `json:"level"`
	Seed      uint64  `json:"seed"`
	// MaxFlips caps the flipped questions listed per cell in markdown (default 20; all are in JSON).
	MaxFlips int `json:"max_flips"`
	// MaxCostIncrease is the allowed relative increase of a cost metric (#Ret, #Call, #Tok, times,
	// USD: lower is better) before a significant increase is a regression (default 0.10: 10%).
	MaxCostIncrease float64 `json:"max_cost_increase"`
}

func (o CompareOptions) withDefaults() CompareOptions {
	if len(o.Metrics) == 0 {
		o.Metrics = []string{"em", "f1"}
	}
	if o.MaxDrop == 0 {
		o.MaxDrop = 0.5
	}
	if o.Alpha == 0 {
		o.Alpha = 0.05
	}
	if o.Rounds == 0 {
		o.Rounds = 10000
	}
	if o.Resamples == 0 {
		o.Resamples = 1000
	}
	if o.Level == 0 {
		o.Level = 0.95
	}
	if o.MaxFlips == 0 {
		o.MaxFlips = 20
	}
	if o.MaxCostIncrease == 0 {
		o.MaxCostIncrease = 0.10
	}
	return o
}

// Comparison is the question-by-question comparison of two runs.
type Comparison struct {
	Base string `json:"base"`
	New  string `json:"new"`
	// BaseGenerator and NewGenerator are the runs' generator labels.
	BaseGenerator string           `json:"base_generator"`
	NewGenerator  string           `json:"new_generator"`
	Options       CompareOptions   `json:"options"`
	Cells         []CellComparison `json:"cells"`
	// Regressions name the (dataset, cell, metric) whose change for the worse is significant and
	// beyond MaxDrop (scores, in points) or MaxCostIncrease (cost metrics, relative).
	Regressions []string `json:"regressions"`
	// ErrorChanges name the cells whose number of failed questions differs between the runs.
	ErrorChanges []string `json:"error_changes"`
	// Incomplete name the cells with fewer records than their run planned ("23 of 100").
	Incomplete []string `json:"incomplete"`
	// ConfigDiff lists what differs between the runs' config.yaml ("key: base → new"), settings,
	// model, server and code version (provenance) included.
	ConfigDiff []string `json:"config_diff"`
}

// CellComparison compares one cell of one dataset.
type CellComparison struct {
	Dataset string `json:"dataset"`
	Cell    string `json:"cell"`
	// N is the number of questions answered in both runs (failed ones are left out).
	N int `json:"n"`
	// BaseErrors and NewErrors count the failed questions of each run.
	BaseErrors int                `json:"base_errors"`
	NewErrors  int                `json:"new_errors"`
	Metrics    []MetricComparison `json:"metrics"`
	// Flipped are the questions whose first compared metric changed, worse ones first.
	Flipped []Flip `json:"flipped"`
}

// MetricComparison is one metric's difference new − base on the paired questions, in Unit (points
// for scores; the metric's own unit per question for cost metrics, where lower is better).
type MetricComparison struct {
	Metric        string           `json:"metric"`
	Unit          string           `json:"unit"`
	LowerIsBetter bool             `json:"lower_is_better"`
	Base          float64          `json:"base"`
	New           float64          `json:"new"`
	Delta         metrics.Interval `json:"delta"`
	P             float64          `json:"p"`
	Regression    bool             `json:"regression"`
	// Better is a significant change for the better.
	Better bool `json:"better"`
}

// Flip is a question whose score changed between the runs.
type Flip struct {
	ID        string   `json:"id"`
	Question  string   `json:"question"`
	Gold      []string `json:"gold"`
	BasePred  string   `json:"base_prediction"`
	NewPred   string   `json:"new_prediction"`
	BaseScore float64  `json:"base_score"`
	NewScore  float64  `json:"new_score"`
}

// MismatchError says that two runs cannot be paired; What lists every difference found.
type MismatchError struct{ What []string }

// Error lists the differences.
func (e *MismatchError) Error() string {
	return "the runs cannot be paired: " + strings.Join(e.What, "; ")
}

// Compare pairs the runs question by question in every (dataset, cell) and tests each metric's
// difference. It returns a *MismatchError when the runs differ in generator, datasets, cells,
// question ids or gold answers.
func Compare(base, next *Run, opts CompareOptions) (*Comparison, error) {
	opts = opts.withDefaults()
	for _, k := range opts.Metrics {
		if _, ok := Metrics[k]; !ok {
			return nil, fmt.Errorf("unknown metric %q", k)
		}
	}
	var what []string
	if base.Generator != next.Generator {
		what = append(what, fmt.Sprintf("generator %q in %s, %q in %s", base.Generator, base.Dir, next.Generator, next.Dir))
	}
	key := func(c *Cell) string { return c.Dataset + "/" + c.Name }
	bm, nm := map[string]*Cell{}, map[string]*Cell{}
	for _, c := range base.Cells {
		bm[key(c)] = c
	}
	for _, c := range next.Cells {
		nm[key(c)] = c
	}
	var onlyB, onlyN []string
	for k := range bm {
		if nm[k] == nil {
			onlyB = append(onlyB, k)
		}
	}
	for k := range nm {
		if bm[k] == nil {
			onlyN = append(onlyN, k)
		}
	}
	sort.Strings(onlyB)
	sort.Strings(onlyN)
	if len(onlyB) > 0 {
		what = append(what, fmt.Sprintf("cells only in %s: %s", base.Dir, strings.Join(onlyB, ", ")))
	}
	if len(onlyN) > 0 {
		what = append(what, fmt.Sprintf("cells only in %s: %s", next.Dir, strings.Join(onlyN, ", ")))
	}
	cmp := &Comparison{Base: base.Dir, New: next.Dir, BaseGenerator: base.Generator, NewGenerator: next.Generator, Options: opts}
	for _, bc := range base.Cells {
		nc := nm[key(bc)]
		if nc == nil {
			continue
		}
		if bc.Generator != nc.Generator && base.Generator == next.Generator {
			what = append(what, fmt.Sprintf("%s: generator %q in the base run, %q in the new one", key(bc), bc.Generator, nc.Generator))
			continue
		}
		if w := unpaired(bc, nc); w != "" {
			what = append(what, key(bc)+": "+w)
			continue
		}
		cc := CellComparison{Dataset: bc.Dataset, Cell: bc.Name, BaseErrors: bc.Errors, NewErrors: nc.Errors}
		for _, x := range []struct {
			what string
			c    *Cell
		}{{"base", bc}, {"new", nc}} {
			if len(x.c.Records) < x.c.Planned {
				cmp.Incomplete = append(cmp.Incomplete, fmt.Sprintf("%s %s in the %s run: %d of %d planned questions", bc.Dataset, bc.Name, x.what, len(x.c.Records), x.c.Planned))
			}
		}
		if bc.Errors != nc.Errors {
			cmp.ErrorChanges = append(cmp.ErrorChanges, fmt.Sprintf("%s %s: %d failed questions in the base run, %d in the new one", bc.Dataset, bc.Name, bc.Errors, nc.Errors))
		}
		for i, mk := range opts.Metrics {
			m := Metrics[mk]
			// Pair leaves failed questions out: a failure is never a worse answer.
			vb, vn, ids, _, _ := Pair(bc, nc, m, Prices{})
			if len(vb) == 0 {
				continue
			}
			pt, err := metrics.PairedTest(vn, vb, opts.Rounds, opts.Resamples, opts.Level, opts.Seed)
			if err != nil {
				return nil, err
			}
			mc := MetricComparison{Metric: mk, Unit: m.Unit(), LowerIsBetter: m.LowerIsBetter(), Base: metrics.Mean(vb), New: metrics.Mean(vn), Delta: pt.Delta, P: pt.P}
			significant := pt.P < opts.Alpha
			if mc.LowerIsBetter {
				mc.Regression = significant && pt.Delta.Mean > opts.MaxCostIncrease*math.Abs(mc.Base) && pt.Delta.Mean > 0
				mc.Better = significant && pt.Delta.Mean < 0
			} else {
				mc.Regression = significant && pt.Delta.Mean < -opts.MaxDrop
				mc.Better = significant && pt.Delta.Mean > 0
			}
			if mc.Regression {
				cmp.Regressions = append(cmp.Regressions, fmt.Sprintf("%s %s %s %s (%s)", bc.Dataset, bc.Name, m.Label, fmtDelta(pt.Delta.Mean, m), pText(pt.P)))
			}
			cc.N = len(vb)
			cc.Metrics = append(cc.Metrics, mc)
			if i == 0 {
				cc.Flipped = flips(bc, nc, ids, vb, vn)
			}
		}
		cmp.Cells = append(cmp.Cells, cc)
	}
	if len(what) > 0 {
		return nil, &MismatchError{What: what}
	}
	cmp.ConfigDiff = configDiff(base.Config, next.Config)
	return cmp, nil
}

// configDiff lists the keys of two flattened configs whose values differ (provenance's config hash
// left out: the differences say what it hashes).
func configDiff(a, b map[string]string) []string {
	keys := map[string]bool{}
	for k := range a {
		keys[k] = true
	}
	for k := range b {
		keys[k] = true
	}
	var out []string
	for _, k := range sortedKeys(keys) {
		if k == "provenance.config_hash" || a[k] == b[k] {
			continue
		}
		va, vb := a[k], b[k]
		_, ina := a[k]
		_, inb := b[k]
		if !ina {
			va = "(none)"
		}
		if !inb {
			vb = "(none)"
		}
		out = append(out, fmt.Sprintf("%s: %s → %s", k, va, vb))
	}
	return out
}

// fmtDelta writes a difference in its metric's unit ("-5.00 points", "+0.40 retrievals", "+12.3 ms").
func fmtDelta(d float64, m Metric) string {
	dec := m.Decimals + 1
	if m.LowerIsBetter() {
		dec = m.Decimals
	}
	return fmt.Sprintf("%+.*f %s", dec, d, m.Unit())
}

// unpaired says how two cells' questions differ ("" when they are the same questions).
func unpaired(a, b *Cell) string {
	ga := make(map[string][]string, len(a.Records))
	for _, r := range a.Records {
		ga[r.ID] = r.Gold
	}
	var only, other, gold []string
	seen := map[string]bool{}
	for _, r := range b.Records {
		seen[r.ID] = true
		g, ok := ga[r.ID]
		switch {
		case !ok:
			other = append(other, r.ID)
		case !slices.Equal(g, r.Gold):
			gold = append(gold, r.ID)
		}
	}
	for _, r := range a.Records {
		if !seen[r.ID] {
			only = append(only, r.ID)
		}
	}
	var parts []string
	list := func(ids []string) string {
		if len(ids) > 5 {
			return strings.Join(ids[:5], ", ") + fmt.Sprintf(" and %d more", len(ids)-5)
		}
		return strings.Join(ids, ", ")
	}
	if len(only) > 0 {
		parts = append(parts, fmt.Sprintf("%d questions only in the base run (%s)", len(only), list(only)))
	}
	if len(other) > 0 {
		parts = append(parts, fmt.Sprintf("%d questions only in the new run (%s)", len(other), list(other)))
	}
	if len(gold) > 0 {
		parts = append(parts, fmt.Sprintf("%d questions with different gold answers (%s)", len(gold), list(gold)))
	}
	return strings.Join(parts, ", ")
}

func flips(bc, nc *Cell, ids []string, vb, vn []float64) []Flip {
	recB := map[string]*methods.Record{}
	for i := range bc.Records {
		recB[bc.Records[i].ID] = &bc.Records[i]
	}
	recN := map[string]*methods.Record{}
	for i := range nc.Records {
		recN[nc.Records[i].ID] = &nc.Records[i]
	}
	var out []Flip
	for i, id := range ids {
		if vb[i] == vn[i] {
			continue
		}
		b, n := recB[id], recN[id]
		out = append(out, Flip{ID: id, Question: b.Question, Gold: b.Gold, BasePred: b.Answer, NewPred: n.Answer, BaseScore: vb[i], NewScore: vn[i]})
	}
	sort.SliceStable(out, func(i, j int) bool {
		return out[i].NewScore-out[i].BaseScore < out[j].NewScore-out[j].BaseScore
	})
	return out
}

// Markdown writes the comparison for a pull-request comment: what differs between the runs'
// configs, the verdict, the rows that changed (the unchanged ones folded), failed-question counts,
// and the flipped questions in collapsed sections.
func (c *Comparison) Markdown(w io.Writer) error {
	var b bytes.Buffer
	o := c.Options
	fmt.Fprintf(&b, "## ragbench compare\n\nBase `%s` → new `%s` (generator: %s).\n\n", c.Base, c.New, c.BaseGenerator)
	if len(c.ConfigDiff) == 0 {
		b.WriteString("The two runs' configs (settings, model, server, code version) are the same.\n\n")
	} else {
		fmt.Fprintf(&b, "**What differs between the runs' configs** (%d):\n\n", len(c.ConfigDiff))
		for i, d := range c.ConfigDiff {
			if i == 30 {
				fmt.Fprintf(&b, "- and %d more (JSON output lists all)\n", len(c.ConfigDiff)-30)
				break
			}
			k, v, _ := strings.Cut(d, ": ")
			fmt.Fprintf(&b, "- `%s`: %s\n", k, mdEscape(v))
		}
		b.WriteString("\n")
	}
	if len(c.Regressions) > 0 {
		fmt.Fprintf(&b, "**Regression**: %d significant change(s) for the worse beyond %.2g points (scores) or %g%% (cost metrics) (α = %g):\n\n", len(c.Regressions), o.MaxDrop, 100*o.MaxCostIncrease, o.Alpha)
		for _, r := range c.Regressions {
			fmt.Fprintf(&b, "- %s\n", r)
		}
		b.WriteString("\n")
	} else {
		fmt.Fprintf(&b, "**No regression**: no change for the worse both significant (α = %g) and beyond %.2g points (scores) or %g%% (cost metrics).\n\n", o.Alpha, o.MaxDrop, 100*o.MaxCostIncrease)
	}
	if len(c.ErrorChanges) > 0 {
		fmt.Fprintf(&b, "**Failed questions differ** (%d cells): failed questions are left out of every comparison (pairs are the questions both runs answered), so check these apart:\n\n", len(c.ErrorChanges))
		for _, e := range c.ErrorChanges {
			fmt.Fprintf(&b, "- %s\n", e)
		}
		b.WriteString("\n")
	}
	if len(c.Incomplete) > 0 {
		b.WriteString("**Incomplete runs** (interrupted, or a shard): the comparison covers only the questions recorded:\n\n")
		for _, e := range c.Incomplete {
			fmt.Fprintf(&b, "- %s\n", e)
		}
		b.WriteString("\n")
	}
	head := "| Dataset | Cell | n | Errors (base → new) | Metric | Base | New | Δ | 95% CI | p | |\n|---|---|---:|---|---|---:|---:|---:|---|---:|---|\n"
	var changed, same bytes.Buffer
	nSame := 0
	for _, cc := range c.Cells {
		for _, m := range cc.Metrics {
			mark := ""
			switch {
			case m.Regression:
				mark = "❌ regression"
			case m.Better:
				mark = "✅ better"
			case m.P < o.Alpha:
				mark = "changed"
			}
			met := Metrics[m.Metric]
			dec := met.Decimals
			ddec := dec + 1
			if met.LowerIsBetter() {
				ddec = dec
			}
			errs := fmt.Sprintf("%d → %d", cc.BaseErrors, cc.NewErrors)
			line := fmt.Sprintf("| %s | %s | %d | %s | %s | %s | %s | %s | [%+.*f, %+.*f] | %s | %s |\n", mdEscape(cc.Dataset), mdEscape(cc.Cell), cc.N, errs,
				met.Label, fmtNum(m.Base, dec), fmtNum(m.New, dec), fmtDelta(m.Delta.Mean, met), ddec, m.Delta.Lo, ddec, m.Delta.Hi, fmtP(m.P), mark)
			if mark == "" && cc.BaseErrors == cc.NewErrors {
				same.WriteString(line)
				nSame++
			} else {
				changed.WriteString(line)
			}
		}
	}
	if changed.Len() > 0 {
		b.WriteString(head)
		b.Write(changed.Bytes())
	} else {
		b.WriteString("No row changed significantly.\n")
	}
	if nSame > 0 {
		fmt.Fprintf(&b, "\n<details><summary>%d unchanged rows (no significant difference, same failed questions)</summary>\n\n", nSame)
		b.WriteString(head)
		b.Write(same.Bytes())
		b.WriteString("\n</details>\n")
	}
	fmt.Fprintf(&b, "\nΔ = new − base on the questions both runs answered, in points for scores and in the metric's own unit per question for cost metrics (#Ret, #Call, #Tok, times, USD: lower is better); CI: paired percentile bootstrap (%d resamples); p: two-sided paired approximate randomization test (%d rounds), seed %d.\n", o.Resamples, o.Rounds, o.Seed)
	for _, cc := range c.Cells {
		if len(cc.Flipped) == 0 || len(cc.Metrics) == 0 {
			continue
		}
		worse := 0
		for _, f := range cc.Flipped {
			if f.NewScore < f.BaseScore {
				worse++
			}
		}
		label := Metrics[cc.Metrics[0].Metric].Label
		fmt.Fprintf(&b, "\n<details><summary>%s · %s: %d questions changed %s (%d lower, %d higher)</summary>\n\n", htmlEsc(cc.Dataset), htmlEsc(cc.Cell), len(cc.Flipped), label, worse, len(cc.Flipped)-worse)
		b.WriteString("| id | question | gold | base | new |\n|---|---|---|---|---|\n")
		for i, f := range cc.Flipped {
			if i == o.MaxFlips {
				fmt.Fprintf(&b, "\n%d more in the JSON output.\n", len(cc.Flipped)-o.MaxFlips)
				break
			}
			fmt.Fprintf(&b, "| %s | %s | %s | %s (%g) | %s (%g) |\n", mdEscape(f.ID), mdEscape(clip(f.Question, 80)), mdEscape(strings.Join(f.Gold, " / ")),
				mdEscape(clip(f.BasePred, 40)), f.BaseScore, mdEscape(clip(f.NewPred, 40)), f.NewScore)
		}
		b.WriteString("\n</details>\n")
	}
	_, err := w.Write(b.Bytes())
	return err
}

func htmlEsc(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;").Replace(s)
}

func clip(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}
