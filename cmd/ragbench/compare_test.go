package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/ragbench/ragbench/reports/reportstest"
)

func TestCompareCommand(t *testing.T) {
	dir := t.TempDir()
	spec := func(flip, questions int) reportstest.Spec {
		return reportstest.Spec{Generator: "test-model", Datasets: []string{"hotpotqa"}, Cells: []string{"quco"},
			Questions: questions, Seed: 5, Skill: map[string]float64{"quco": 0.4}, Flip: map[string]int{"quco": flip}}
	}
	write := func(name string, s reportstest.Spec) string {
		p := filepath.Join(dir, name)
		if err := reportstest.Write(p, s); err != nil {
			t.Fatal(err)
		}
		return p
	}
	base := write("base", spec(0, 1000))
	cases := []struct {
		name string
		new  string
		code int
		want string
		why  string
	}{
		{"itself", base, 0, "**No regression**", "a run against itself passes"},
		{"5 points", write("drop5", spec(50, 1000)), 1, "❌ regression", "a planted 5-point EM drop on 1,000 questions fails"},
		{"0.3 points", write("drop03", spec(3, 1000)), 0, "**No regression**", "a planted 0.3-point drop is within --max-drop 0.5"},
		{"unpaired", write("fewer", spec(0, 900)), 2, "", "runs over different questions cannot be paired"},
		{"HTTP 500s", write("errors", func() reportstest.Spec { s := spec(0, 1000); s.Fail = map[string]int{"quco": 40}; return s }()), 4,
			"**Failed questions differ**", "40 failed questions are not 40 wrong answers: no regression, but their own exit status"},
		{"unreadable", filepath.Join(dir, "no-such-run"), 3, "", "a run directory that cannot be read"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out, stderr, code := runCLI(t, "compare", "--fail-on-regression", "--rounds", "2000", base, c.new)
			if code != c.code {
				t.Fatalf("exit %d, want %d (%s); stderr %s", code, c.code, c.why, stderr)
			}
			if !strings.Contains(out, c.want) {
				t.Errorf("output lacks %q (%s):\n%s", c.want, c.why, out)
			}
			if c.code == 2 && !strings.Contains(stderr, "100 questions only in the base run") {
				t.Errorf("the error does not name what differs: %s", stderr)
			}
			if c.code == 4 && (!strings.Contains(out, "**No regression**") || !strings.Contains(stderr, "11 failed questions in the base run, 50 in the new one")) {
				t.Errorf("failed questions counted as a regression, or not named:\n%s\nstderr: %s", out, stderr)
			}
		})
	}
	// Without --fail-on-regression a regression is reported but the exit status is 0.
	if out, _, code := runCLI(t, "compare", "--rounds", "2000", base, filepath.Join(dir, "drop5")); code != 0 || !strings.Contains(out, "**Regression**") {
		t.Errorf("without --fail-on-regression: exit %d; output %.300s", code, out)
	}
}
