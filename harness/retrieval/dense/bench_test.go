package dense

import (
	"context"
	"os"
	"strconv"
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
