package dense

import (
	"context"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
)

// BenchmarkSearch runs the 200k × 768 benchmark (RAGBENCH_DENSE_N overrides N). It is a single-shot
// measurement: run it with -benchtime=1x.
func BenchmarkSearch(b *testing.B) {
	cfg := BenchConfig{}
	if s := os.Getenv("RAGBENCH_DENSE_N"); s != "" {
		cfg.N, _ = strconv.Atoi(s)
	}
	for i := 0; i < b.N; i++ {
		r, err := Bench(context.Background(), cfg, nil)
		if err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(r.SgemmGFLOPS, "GFLOP/s")
		b.ReportMetric(r.NaiveGFLOPS, "naive-GFLOP/s")
		b.ReportMetric(r.SgemmQPS, "queries/s")
		b.Log("\n" + r.String())
		if !r.Agree {
			b.Fatal("Sgemm and naive results disagree")
		}
	}
}

func TestBenchSmall(t *testing.T) {
	r, err := Bench(context.Background(), BenchConfig{N: 3000, Dim: 32, Queries: 40, Batch: 16, Naive: 8, Dir: t.TempDir()}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !r.Agree || r.SgemmGFLOPS <= 0 || r.NaiveGFLOPS <= 0 || r.BatchP99 < r.BatchP50 {
		t.Fatalf("%+v", r)
	}
}

// TestBenchNumpyPeer runs the numpy peer on a small index when Debian's python3-numpy is installed: its
// top-k rows must match ours and it must name the OpenBLAS kernel it ran.
func TestBenchNumpyPeer(t *testing.T) {
	const python = "/usr/bin/python3"
	if err := exec.Command(python, "-c", "import numpy").Run(); err != nil {
		t.Skipf("no numpy for %s: %v", python, err)
	}
	r, err := Bench(context.Background(), BenchConfig{N: 3000, Dim: 32, Queries: 40, Batch: 16, Naive: 8, Rounds: 2, Python: python, Dir: t.TempDir()}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if r.Numpy == nil {
		t.Fatalf("numpy peer did not run: %s", r.NumpyErr)
	}
	if !r.NumpyAgree || len(r.Numpy.Top) != 8 || len(r.NumpyRoundSeconds) != 2 || r.NumpySearchGFLOPS <= 0 {
		t.Fatalf("numpy peer: %+v", r)
	}
	if !strings.Contains(r.String(), "numpy") || (r.Numpy.Library != "" && r.Numpy.Kernel == "") {
		t.Fatalf("report: %s", r)
	}
	t.Logf("\n%s", r)
}

func TestBenchNumpyMissing(t *testing.T) {
	r, err := Bench(context.Background(), BenchConfig{N: 500, Dim: 8, Queries: 10, Batch: 5, Naive: 2, Rounds: 1, Python: "/nonexistent/python3", Dir: t.TempDir()}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if r.Numpy != nil || !strings.Contains(r.NumpyErr, "/nonexistent/python3") || !strings.Contains(r.String(), "numpy peer: not run") {
		t.Fatalf("%+v", r)
	}
}
