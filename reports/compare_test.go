package reports

import (
	"bytes"
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ragbench/ragbench/reports/reportstest"
)

func writeRun(t *testing.T, name string, s reportstest.Spec) *Run {
	t.Helper()
	dir := filepath.Join(t.TempDir(), name)
	if err := reportstest.Write(dir, s); err != nil {
		t.Fatal(err)
	}
	r, err := LoadRun(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestCompare(t *testing.T) {
	spec := func(flip int) reportstest.Spec {
		return reportstest.Spec{Generator: "test-model", Datasets: []string{"hotpotqa"}, Cells: []string{"quco"},
			Questions: 1000, Seed: 3, Skill: map[string]float64{"quco": 0.4}, Flip: map[string]int{"quco": flip}}
	}
	base := writeRun(t, "base", spec(0))
	cases := []struct {
		name       string
		flip       int
		regression bool
		why        string
	}{
		{"self", 0, false, "a run against itself has no difference"},
		{"planted 5 points", 50, true, "50 of 1,000 answers made wrong is a 5-point EM drop, far beyond 0.5 and significant"},
		{"planted 0.3 points", 3, false, "3 of 1,000 is a 0.3-point drop, within the allowed 0.5"},
		{"improvement", -50, false, "a 5-point gain is no regression"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			next := writeRun(t, "new", spec(c.flip))
			cmp, err := Compare(base, next, CompareOptions{Seed: 1})
			if err != nil {
				t.Fatal(err)
			}
			if got := len(cmp.Regressions) > 0; got != c.regression {
				t.Errorf("regression %v, want %v (%s): %v", got, c.regression, c.why, cmp.Regressions)
			}
			em := cmp.Cells[0].Metrics[0]
			// Failed questions (every 97th from the 13th) are left out: the drop is over the answered ones.
			if n := cmp.Cells[0].N; n != 1000-11 {
				t.Errorf("%d paired questions, want the 989 answered in both runs", n)
			}
			if want := -100 * float64(c.flip) / float64(cmp.Cells[0].N); abs(em.Delta.Mean-want) > 1e-9 {
				t.Errorf("EM Δ %.3f, want %.3f", em.Delta.Mean, want)
			}
			if n := len(cmp.Cells[0].Flipped); n != abs(c.flip) {
				t.Errorf("%d flipped questions, want %d", n, abs(c.flip))
			}
			var b bytes.Buffer
			if err := cmp.Markdown(&b); err != nil {
				t.Fatal(err)
			}
			if c.regression != strings.Contains(b.String(), "**Regression**") {
				t.Errorf("markdown verdict wrong:\n%s", b.String())
			}
		})
	}
}

func abs[T int | float64](x T) T {
	if x < 0 {
		return -x
	}
	return x
}

func TestCompareUnpaired(t *testing.T) {
	s := reportstest.Spec{Generator: "test-model", Datasets: []string{"hotpotqa"}, Cells: []string{"quco"}, Questions: 50, Seed: 3}
	base := writeRun(t, "base", s)
	cases := []struct {
		name string
		mod  func(*reportstest.Spec)
		want string
	}{
		{"fewer questions", func(s *reportstest.Spec) { s.Questions = 40 }, "10 questions only in the base run"},
		{"other generator", func(s *reportstest.Spec) { s.Generator = "other-model" }, `generator "test-model"`},
		{"other cell", func(s *reportstest.Spec) { s.Cells = []string{"sr-rag"} }, "cells only in"},
		{"other gold", func(s *reportstest.Spec) { s.Seed = 4 }, "different gold answers"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s2 := s
			c.mod(&s2)
			_, err := Compare(base, writeRun(t, "new", s2), CompareOptions{})
			var me *MismatchError
			if !errors.As(err, &me) {
				t.Fatalf("err %v, want a MismatchError", err)
			}
			if !strings.Contains(err.Error(), c.want) {
				t.Errorf("error %q does not say %q", err, c.want)
			}
		})
	}
}

// TestCompareCostMetrics: for #Ret (lower is better) fewer retrievals are better and more are a
// regression, in retrievals per question, not points.
func TestCompareCostMetrics(t *testing.T) {
	spec := reportstest.Spec{Generator: "test-model", Datasets: []string{"hotpotqa"}, Cells: []string{"quco"}, Questions: 300, Seed: 3}
	base := writeRun(t, "base", spec)
	for _, c := range []struct {
		name       string
		ret        int
		regression bool
		better     bool
	}{
		{"fewer retrievals", 0, false, true},
		{"more retrievals", 6, true, false},
	} {
		next := writeRun(t, "new", spec)
		for i := range next.Cells[0].Records {
			next.Cells[0].Records[i].Counters.Retrievals = c.ret
		}
		cmp, err := Compare(base, next, CompareOptions{Metrics: []string{"ret"}, Seed: 1})
		if err != nil {
			t.Fatal(err)
		}
		m := cmp.Cells[0].Metrics[0]
		if m.Regression != c.regression || m.Better != c.better || !m.LowerIsBetter || m.Unit != "retrievals" {
			t.Errorf("%s: %+v, want regression %v better %v in retrievals (lower is better)", c.name, m, c.regression, c.better)
		}
		if c.regression && (len(cmp.Regressions) != 1 || !strings.Contains(cmp.Regressions[0], " retrievals (p")) {
			t.Errorf("%s: regressions %q, want one given in retrievals", c.name, cmp.Regressions)
		}
	}
}

// TestCompareHeadAndFolding: the head names what differs between the configs; unchanged rows are
// folded away from the table of changes.
func TestCompareHeadAndFolding(t *testing.T) {
	spec := reportstest.Spec{Generator: "test-model", Datasets: []string{"hotpotqa"}, Cells: []string{"quco", "sr-rag"}, Questions: 300, Seed: 3, Model: "m-1"}
	base := writeRun(t, "base", spec)
	spec.Model = "m-2"
	spec.Flip = map[string]int{"quco": 40}
	next := writeRun(t, "new", spec)
	cmp, err := Compare(base, next, CompareOptions{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(cmp.ConfigDiff, "|") != "llm.model: m-1 → m-2" {
		t.Errorf("config diff %q, want the model change", cmp.ConfigDiff)
	}
	var b bytes.Buffer
	cmp.Markdown(&b)
	md := b.String()
	changes, folded, _ := strings.Cut(md, "<details><summary>2 unchanged rows")
	if !strings.Contains(md, "- `llm.model`: m-1 → m-2") {
		t.Errorf("head does not list the model change:\n%s", md)
	}
	if strings.Contains(changes, "| sr-rag |") || !strings.Contains(changes, "| quco |") || !strings.Contains(folded, "| sr-rag |") {
		t.Errorf("sr-rag (unchanged) not folded, or quco (changed) folded:\n%s", md)
	}
}

// TestCompareIncomplete: two runs interrupted at the same question are compared on what they hold,
// and the comparison says that they are n of planned.
func TestCompareIncomplete(t *testing.T) {
	spec := reportstest.Spec{Generator: "test-model", Datasets: []string{"hotpotqa"}, Cells: []string{"quco"}, Questions: 100, Seed: 3,
		Keep: map[string]int{"quco": 40}, Planned: map[string]int{"hotpotqa": 100}}
	cmp, err := Compare(writeRun(t, "base", spec), writeRun(t, "new", spec), CompareOptions{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	cmp.Markdown(&b)
	if !strings.Contains(b.String(), "- hotpotqa quco in the new run: 40 of 100 planned questions") || len(cmp.Incomplete) != 2 {
		t.Errorf("incomplete runs not flagged: %q\n%s", cmp.Incomplete, b.String())
	}
}
