package reports

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/ragbench/ragbench/reports/reportstest"
)

// sweepSpec is the 100,000-record run of the speed figures: 10 methods × 10 sweep points × 1,000
// questions of one dataset.
func sweepSpec() reportstest.Spec {
	var cells []string
	for m := 0; m < 10; m++ {
		for k := 1; k <= 10; k++ {
			cells = append(cells, fmt.Sprintf("method%d[k=%d]", m, k))
		}
	}
	return reportstest.Spec{Generator: "test-model", Datasets: []string{"hotpotqa"}, Cells: cells, Questions: 1000, Seed: 1}
}

// TestWriteSweepRun writes the speed figures' run directory to $RAGBENCH_WRITE_SWEEP (skipped when
// unset), for timing the command line:
//
//	RAGBENCH_WRITE_SWEEP=/tmp/sweep go test ./reports -run TestWriteSweepRun
//	time ragbench report --ci --baseline 'method0[k=1]' -f html --out /tmp/sweep-report /tmp/sweep
func TestWriteSweepRun(t *testing.T) {
	dir := os.Getenv("RAGBENCH_WRITE_SWEEP")
	if dir == "" {
		t.Skip("RAGBENCH_WRITE_SWEEP is not set")
	}
	if err := reportstest.Write(dir, sweepSpec()); err != nil {
		t.Fatal(err)
	}
}

// BenchmarkReport100k times a report over 100,000 records (10 methods × 10 sweep points × 1,000
// questions) with bootstrap intervals: loading, tables, figures and the HTML page, and checks the
// page stays under 10 MB.
//
//	go test ./reports -run '^$' -bench Report100k -benchtime 1x
func BenchmarkReport100k(b *testing.B) {
	dir := filepath.Join(b.TempDir(), "sweep")
	spec := sweepSpec()
	if err := reportstest.Write(dir, spec); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		t0 := time.Now()
		run, err := LoadRun(context.Background(), dir)
		if err != nil {
			b.Fatal(err)
		}
		t1 := time.Now()
		rep, err := Build([]*Run{run}, Options{CI: CIOptions{Resamples: 1000, Level: 0.95, Seed: 1}, Baseline: "method0[k=1]"})
		if err != nil {
			b.Fatal(err)
		}
		var md bytes.Buffer
		if err := rep.WriteTables(&md, "md"); err != nil {
			b.Fatal(err)
		}
		t2 := time.Now()
		figs, err := rep.Figures()
		if err != nil {
			b.Fatal(err)
		}
		var page bytes.Buffer
		if err := rep.WriteHTML(&page, figs); err != nil {
			b.Fatal(err)
		}
		t3 := time.Now()
		if page.Len() > 10<<20 {
			b.Fatalf("HTML page %d bytes, over 10 MB", page.Len())
		}
		b.ReportMetric(t1.Sub(t0).Seconds(), "load-s")
		b.ReportMetric(t2.Sub(t1).Seconds(), "tables-s")
		b.ReportMetric(t3.Sub(t2).Seconds(), "figures+html-s")
		b.ReportMetric(float64(page.Len())/(1<<20), "html-MB")
	}
}
