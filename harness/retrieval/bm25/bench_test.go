package bm25

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/ragbench/ragbench/harness/corpus"

	"github.com/ragbench/ragbench/internal/rusage"
)

// benchN is the corpus size of the benchmarks (synthetic 100-word passages).
const benchN = 100000

func synthFile(b *testing.B, n int) string {
	p := filepath.Join(b.TempDir(), "synth.tsv")
	f, err := os.Create(p)
	if err != nil {
		b.Fatal(err)
	}
	if err := NewSynth(1).WriteTSV(context.Background(), f, n); err != nil {
		b.Fatal(err)
	}
	f.Close()
	return p
}

// BenchmarkBuild reports passages/s for building from a synthetic DPR TSV file.
func BenchmarkBuild(b *testing.B) {
	n := benchN
	p := synthFile(b, n)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		r, err := corpus.Open(p, corpus.FormatDPR)
		if err != nil {
			b.Fatal(err)
		}
		start, cpu0 := time.Now(), rusage.CPUTime()
		if _, err := Build(context.Background(), r, filepath.Join(b.TempDir(), "ix"), Options{}); err != nil {
			b.Fatal(err)
		}
		r.Close()
		b.ReportMetric(float64(n)/time.Since(start).Seconds(), "passages/s")
		b.ReportMetric(float64(n)/(rusage.CPUTime()-cpu0).Seconds(), "passages/cpu-s")
	}
}

// BenchmarkSearch reports queries/s, one thread, top 10.
func BenchmarkSearch(b *testing.B) {
	n := benchN
	p := synthFile(b, n)
	r, err := corpus.Open(p, corpus.FormatDPR)
	if err != nil {
		b.Fatal(err)
	}
	dir := filepath.Join(b.TempDir(), "ix")
	if _, err := Build(context.Background(), r, dir, Options{}); err != nil {
		b.Fatal(err)
	}
	r.Close()
	ix, err := Open(dir)
	if err != nil {
		b.Fatal(err)
	}
	defer ix.Close()
	s := NewSynth(2)
	qs := make([]string, 1000)
	for i := range qs {
		qs[i] = s.Query()
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := ix.Search(context.Background(), qs[i%len(qs)], 10); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "queries/s")
}
