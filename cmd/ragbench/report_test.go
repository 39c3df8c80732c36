package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ragbench/ragbench/internal/testenv"
)

var fixtureRuns = []string{"../../reports/testdata/runs/offline", "../../reports/testdata/runs/olmo"}

func TestReportCommand(t *testing.T) {
	cases := []struct {
		name string
		args []string
		code int
		want string
	}{
		{"markdown", []string{"report", "--ci", "--baseline", "SR-RAG"}, 0, "| quco[window=50] |"},
		{"csv", []string{"report", "-f", "csv"}, 0, "main,quco,"},
		{"latex", []string{"report", "-f", "tex"}, 0, `\toprule`},
		{"json", []string{"report", "-f", "json"}, 0, `"id": "efficiency"`},
		{"html", []string{"report", "-f", "html"}, 0, `id="rb-chunk-0"`},
		{"prices", []string{"report", "--price-in", "0.2", "--price-out", "0.6"}, 0, "| USD |"},
		{"paper", []string{"report", "--paper"}, 0, "no difference is computed"},
		{"bad format", []string{"report", "-f", "xls"}, 2, ""},
		{"no runs", []string{"report"}, 2, ""},
		{"a baseline that matches no row is an error, not a warning", []string{"report", "--baseline", "nosuch"}, 2, ""},
		{"a negative --resamples is named", []string{"report", "--ci", "--resamples", "-5"}, 2, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if c.name == "paper" {
				t.Setenv("RAGBENCH_REFERENCE", testenv.Reference(t, "paper-tables.json"))
			}
			args := c.args
			if c.name != "no runs" {
				args = append(append([]string(nil), args...), fixtureRuns...)
			}
			out, stderr, code := runCLI(t, args...)
			if code != c.code {
				t.Fatalf("exit %d, want %d; stderr %s", code, c.code, stderr)
			}
			if !strings.Contains(out, c.want) {
				t.Errorf("output lacks %q:\n%.2000s", c.want, out)
			}
		})
	}
	if _, stderr, code := runCLI(t, "report", filepath.Join(t.TempDir(), "missing")); code != 1 || !strings.Contains(stderr, "missing") {
		t.Errorf("a missing run: exit %d, stderr %q; want 1 naming it", code, stderr)
	}
}

func TestReportOut(t *testing.T) {
	dir := t.TempDir()
	_, stderr, code := runCLI(t, append([]string{"report", "-f", "html", "--out", dir}, fixtureRuns...)...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, f := range []string{"report.html", "plots/ablation-hotpotqa-offline-reader-no-llm.svg", "plots/ablation-hotpotqa-offline-reader-no-llm.png",
		"plots/sweep-2wikimultihopqa-offline-reader-no-llm-quco-window.svg", "plots/cost-2wikimultihopqa-allenai-olmo-2-1124-7b-instruct.png",
		"plots/entity-freq-pubmedqa-offline-reader-no-llm.svg"} {
		if st, err := os.Stat(filepath.Join(dir, f)); err != nil || st.Size() == 0 {
			t.Errorf("%s not written: %v", f, err)
		}
	}
}

// A report never writes into its input's files: --out naming one of the runs it reads (which would
// replace the run's own summary.md or summary.json) is refused before anything is written.
func TestReportOutNotIntoInput(t *testing.T) {
	run := filepath.Join(t.TempDir(), "run")
	if err := os.CopyFS(run, os.DirFS(fixtureRuns[0])); err != nil {
		t.Fatal(err)
	}
	before, _ := os.ReadFile(filepath.Join(run, "summary.json"))
	for _, args := range [][]string{
		{"report", "--out", run, run},
		{"report", "-f", "json", "--out", run + "/", run},
		{"report", "-f", "json", "--out", filepath.Join(run, "..", "run"), fixtureRuns[1], run},
	} {
		_, stderr, code := runCLI(t, args...)
		if code != 2 || !strings.Contains(stderr, "is an input run") {
			t.Errorf("%q: exit %d, stderr %q; want 2 and a refusal", args, code, stderr)
		}
		if after, _ := os.ReadFile(filepath.Join(run, "summary.json")); string(after) != string(before) {
			t.Fatalf("%q rewrote the run's summary.json", args)
		}
	}
	_, stderr, code := runCLI(t, "report", "--out", filepath.Join(run, "report"), "--no-plots", run)
	if code != 0 {
		t.Errorf("a report directory inside the run: exit %d, %s", code, stderr)
	}
}
