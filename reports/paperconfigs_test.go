package reports

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ragbench/ragbench/datasets"
	_ "github.com/ragbench/ragbench/harness/llm/offline"
	"github.com/ragbench/ragbench/harness/runner"
	"github.com/ragbench/ragbench/internal/testenv"
)

// TestPaperConfigsPlaced: every shipped paper config (configs/quco-*.yaml), run with --offline on its
// first 3 questions, gives a --paper report that places every published number its cells name, each
// beside the cell that names it, under its dataset and model block; the offline reader gets no Δ.
func TestPaperConfigsPlaced(t *testing.T) {
	if len(datasets.DataDirs()) == 0 {
		if os.Getenv("CI") == "true" {
			t.Fatal("shared data is missing (CI=true makes this a failure)")
		}
		t.Skip("shared data is missing")
	}
	root, err := testenv.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	files, _ := filepath.Glob(filepath.Join(root, "configs", "quco-*.yaml"))
	if len(files) < 6 {
		t.Fatalf("configs/quco-*.yaml: %d files, want the paper configs", len(files))
	}
	ref := loadReference(t)
	cache := t.TempDir()
	named := map[string]bool{}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			c, err := runner.LoadLimited(f, []string{"index_cache=" + cache}, 3)
			if err != nil {
				t.Fatal(err)
			}
			if c, err = runner.Offline(c); err != nil {
				t.Fatal(err)
			}
			out := filepath.Join(t.TempDir(), "run")
			if _, err := runner.Execute(context.Background(), c, runner.Options{Out: out}); err != nil {
				t.Fatal(err)
			}
			run, err := LoadRun(context.Background(), out)
			if err != nil {
				t.Fatal(err)
			}
			// The rows the plan's cells name (on their datasets) are the rows the report's cells carry.
			plan, err := runner.Expand(c)
			if err != nil {
				t.Fatal(err)
			}
			want := map[string]int{}
			for _, pc := range plan {
				for _, p := range pc.Paper {
					if len(pc.Datasets) == 0 || containsDataset(pc.Datasets, p.Dataset) {
						want[canonicalDataset(p.Dataset)+"/"+pc.Name]++
					}
				}
			}
			got := map[string]int{}
			for _, cell := range run.Cells {
				for _, p := range cell.Paper {
					got[canonicalDataset(cell.Dataset)+"/"+cell.Name]++
					named[p.Table+"|"+p.Model+"|"+p.Dataset+"|"+p.Method] = true
				}
			}
			for k, n := range want {
				if got[k] != n {
					t.Errorf("%s: the plan names %d published rows, the report's cell carries %d", k, n, got[k])
				}
			}
			if len(want) == 0 {
				t.Logf("%s names no published row", filepath.Base(f))
			}
			r := mustBuild(t, Options{Paper: ref}, run)
			for _, w := range r.Warnings {
				if strings.Contains(w, "published row") {
					t.Error(w)
				}
			}
			if len(want) > 0 {
				checkPlaced(t, r, ref)
			}
			for _, tb := range r.Tables {
				for _, row := range tb.Rows {
					for i, v := range row.Values {
						if strings.HasSuffix(tb.Columns[i].Key, "_delta") && v.V != nil {
							t.Errorf("%s %s %s: a difference for the offline reader", tb.ID, row.Label, tb.Columns[i].Key)
						}
						if len(want) == 0 && tb.Columns[i].Paper {
							t.Errorf("%s: a paper column although no cell names a published row", tb.ID)
						}
					}
				}
			}
		})
	}
	if len(named) < 60 {
		t.Errorf("%d distinct published rows named by the paper configs: the configs lost their paper rows", len(named))
	}
	t.Logf("%d distinct published rows named by the paper configs were placed", len(named))
}
