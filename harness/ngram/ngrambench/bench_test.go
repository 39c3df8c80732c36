package ngrambench

import (
	"context"
	"fmt"
	"index/suffixarray"
	"math/rand"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ragbench/ragbench/harness/ngram"
)

// benchIndex builds a Zipfian index of n tokens once per benchmark.
func benchIndex(b *testing.B, n int64) (*ngram.Index, []string, [][2]string, []byte) {
	b.Helper()
	dir := filepath.Join(b.TempDir(), "idx")
	if _, err := ngram.BuildFrom(context.Background(), newZipf(1, 100000, 1.1, n), dir, ngram.BuildOptions{}); err != nil {
		b.Fatal(err)
	}
	ix, err := ngram.OpenIndex(dir, ngram.OpenOptions{Verify: true})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { ix.Close() })
	rng := rand.New(rand.NewSource(2))
	var text []byte
	var counts []string
	var coocs [][2]string
	z := newZipf(1, 100000, 1.1, n)
	for {
		d, err := z.Next()
		if err != nil {
			break
		}
		text = append(append(text, d.Text...), '\n')
		w := strings.Fields(d.Text)
		if len(w) > 3 && len(counts) < 1000 {
			j := rng.Intn(len(w) - 2)
			counts = append(counts, strings.Join(w[j:j+1+rng.Intn(2)], " "))
			if c, _ := ix.CountText(w[j]); c <= 100000 {
				coocs = append(coocs, [2]string{w[j], w[rng.Intn(len(w))]})
			}
		}
	}
	return ix, counts, coocs, text
}

func BenchmarkBuild(b *testing.B) {
	for _, n := range []int64{1_000_000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				dir := filepath.Join(b.TempDir(), "idx")
				if _, err := ngram.BuildFrom(context.Background(), newZipf(1, 100000, 1.1, n), dir, ngram.BuildOptions{}); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds()/1e6, "Mtok/s")
		})
	}
}

// BenchmarkCount compares Count with the peer, index/suffixarray's Lookup, on the same text.
func BenchmarkCount(b *testing.B) {
	ix, counts, coocs, text := benchIndex(b, 1_000_000)
	ctx := context.Background()
	b.Run("ngram.Count", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			ix.Count(ctx, counts[i%len(counts)])
		}
	})
	b.Run("suffixarray.Lookup", func(b *testing.B) {
		sa := suffixarray.New(text)
		qs := make([][]byte, len(counts))
		for i, q := range counts {
			qs[i] = []byte(q)
		}
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			_ = len(sa.Lookup(qs[i%len(qs)], -1))
		}
	})
	b.Run("ngram.CoOccur", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			q := coocs[i%len(coocs)]
			ix.CoOccur(ctx, q[0], q[1], 1000)
		}
	})
}
