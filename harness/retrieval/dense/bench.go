package dense

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/ragbench/ragbench/harness/corpus"

	"github.com/ragbench/ragbench/internal/rusage"
)

// BenchConfig sizes a search benchmark on random unit vectors.
type BenchConfig struct {
	N       int    // indexed vectors (default 200000)
	Dim     int    // dimension (default 768)
	Queries int    // queries through the batched Sgemm path (default 512)
	Batch   int    // queries per SearchVectors call (default 256)
	K       int    // top k (default 10)
	Naive   int    // queries through the naive loop, the peer (default 16)
	Dir     string // where to build the index (default a temporary directory, removed afterwards)
	Seed    uint64
}

// BenchResult reports the measured figures. GFLOP/s counts 2·N·Dim floating-point operations per query.
type BenchResult struct {
	N, Dim, Queries, Batch, K, Naive int
	BuildSeconds                     float64
	SgemmSeconds, SgemmGFLOPS        float64
	SgemmQPS                         float64
	// SgemmCPUGFLOP is GFLOP per CPU-second (user+system time of the process): what the code does per
	// core, less sensitive than wall-clock GFLOP/s to other processes on a shared machine.
	SgemmCPUGFLOP, NaiveCPUGFLOP float64
	Threads                      int           // GOMAXPROCS
	BatchP50, BatchP99           time.Duration // latency of one SearchVectors call of Batch queries
	// BestBatchGFLOPS is the rate of the fastest batch: on a shared, noisy machine the closest figure to
	// what the hardware does when the process has the cores to itself.
	BestBatchGFLOPS           float64
	NaiveSeconds, NaiveGFLOPS float64
	NaiveQPS                  float64
	Agree                     bool // the naive loop found the same top-k rows for its queries
}

// String formats the result as a small report.
func (r BenchResult) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "dense exact search, %d × %d float32, k=%d, GOMAXPROCS=%d\n", r.N, r.Dim, r.K, r.Threads)
	fmt.Fprintf(&b, "  build (random vectors, write, checksum, open): %.1fs\n", r.BuildSeconds)
	fmt.Fprintf(&b, "  batched Sgemm: %d queries in batches of %d: %.2fs, %.1f GFLOP/s wall (%.1f GFLOP per CPU-second), %.0f queries/s, batch p50 %v p99 %v\n",
		r.Queries, r.Batch, r.SgemmSeconds, r.SgemmGFLOPS, r.SgemmCPUGFLOP, r.SgemmQPS, r.BatchP50.Round(time.Millisecond), r.BatchP99.Round(time.Millisecond))
	fmt.Fprintf(&b, "  fastest batch: %.1f GFLOP/s\n", r.BestBatchGFLOPS)
	fmt.Fprintf(&b, "  naive loop (peer): %d queries: %.2fs, %.2f GFLOP/s wall (%.2f GFLOP per CPU-second), %.1f queries/s\n", r.Naive, r.NaiveSeconds, r.NaiveGFLOPS, r.NaiveCPUGFLOP, r.NaiveQPS)
	fmt.Fprintf(&b, "  speed-up %.1f×; same top-%d rows as the naive loop: %v\n", r.SgemmGFLOPS/max(r.NaiveGFLOPS, 1e-9), r.K, r.Agree)
	return b.String()
}

// seededEmbedder returns a reproducible Gaussian vector for the text "r<row>".
type seededEmbedder struct {
	dim  int
	seed uint64
}

func (e seededEmbedder) Dim() int { return e.dim }
func (e seededEmbedder) Embed(ctx context.Context, texts []string, kind Kind) ([][]float32, error) {
	out := make([][]float32, len(texts))
	for i, t := range texts {
		row, _ := strconv.ParseUint(strings.TrimPrefix(t, "r"), 10, 64)
		rng := rand.New(rand.NewPCG(e.seed, row))
		v := make([]float32, e.dim)
		for j := range v {
			v[j] = float32(rng.NormFloat64())
		}
		out[i] = v
	}
	return out, nil
}

type rowReader struct{ i, n int }

func (r *rowReader) Next() (corpus.Document, error) {
	if r.i >= r.n {
		return corpus.Document{}, io.EOF
	}
	r.i++
	return corpus.Document{ID: strconv.Itoa(r.i - 1), Text: "r" + strconv.Itoa(r.i-1)}, nil
}
func (r *rowReader) Close() error { return nil }

// Bench builds an index of random unit vectors and times batched exact search against the naive loop.
func Bench(ctx context.Context, cfg BenchConfig, progress io.Writer) (BenchResult, error) {
	if cfg.N <= 0 {
		cfg.N = 200000
	}
	if cfg.Dim <= 0 {
		cfg.Dim = 768
	}
	if cfg.Queries <= 0 {
		cfg.Queries = 512
	}
	if cfg.Batch <= 0 {
		cfg.Batch = 256
	}
	if cfg.K <= 0 {
		cfg.K = 10
	}
	if cfg.Naive <= 0 {
		cfg.Naive = 16
	}
	if progress == nil {
		progress = io.Discard
	}
	dir := cfg.Dir
	if dir == "" {
		d, err := os.MkdirTemp("", "ragbench-dense-bench-")
		if err != nil {
			return BenchResult{}, err
		}
		defer os.RemoveAll(d)
		dir = d
	}
	res := BenchResult{N: cfg.N, Dim: cfg.Dim, Queries: cfg.Queries, Batch: cfg.Batch, K: cfg.K, Naive: cfg.Naive}
	emb := seededEmbedder{dim: cfg.Dim, seed: cfg.Seed + 1}
	start := time.Now()
	if err := BuildWith(ctx, &rowReader{n: cfg.N}, emb, dir, progress, BuildOptions{BatchSize: 1024, ProgressEvery: 50000}); err != nil {
		return res, err
	}
	ix, err := Open(dir, emb)
	if err != nil {
		return res, err
	}
	defer ix.Close()
	res.BuildSeconds = time.Since(start).Seconds()
	rng := rand.New(rand.NewPCG(cfg.Seed+7, 3))
	qs := make([][]float32, cfg.Queries)
	for i := range qs {
		qs[i] = make([]float32, cfg.Dim)
		for j := range qs[i] {
			qs[i][j] = float32(rng.NormFloat64())
		}
	}
	flopsPerQuery := 2 * float64(cfg.N) * float64(cfg.Dim)
	// Warm the page cache and the code paths.
	if _, err := ix.SearchVectors(ctx, qs[:min(len(qs), cfg.Batch)], cfg.K); err != nil {
		return res, err
	}
	fmt.Fprintf(progress, "dense bench: searching %d queries in batches of %d\n", cfg.Queries, cfg.Batch)
	var lat []time.Duration
	var got [][]Result
	res.Threads = runtime.GOMAXPROCS(0)
	cpu0 := rusage.CPUSeconds()
	start = time.Now()
	for s := 0; s < len(qs); s += cfg.Batch {
		t := time.Now()
		r, err := ix.SearchVectors(ctx, qs[s:min(s+cfg.Batch, len(qs))], cfg.K)
		if err != nil {
			return res, err
		}
		lat = append(lat, time.Since(t))
		got = append(got, r...)
	}
	res.SgemmSeconds = time.Since(start).Seconds()
	res.SgemmGFLOPS = flopsPerQuery * float64(cfg.Queries) / res.SgemmSeconds / 1e9
	res.SgemmQPS = float64(cfg.Queries) / res.SgemmSeconds
	if c := rusage.CPUSeconds() - cpu0; c > 0 {
		res.SgemmCPUGFLOP = flopsPerQuery * float64(cfg.Queries) / c / 1e9
	}
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	res.BestBatchGFLOPS = flopsPerQuery * float64(min(cfg.Batch, cfg.Queries)) / lat[0].Seconds() / 1e9
	res.BatchP50 = lat[len(lat)/2]
	res.BatchP99 = lat[min(len(lat)-1, len(lat)*99/100)]
	fmt.Fprintf(progress, "dense bench: naive loop over %d queries\n", cfg.Naive)
	cpu0 = rusage.CPUSeconds()
	start = time.Now()
	naive, err := ix.SearchNaive(qs[:min(cfg.Naive, len(qs))], cfg.K)
	if err != nil {
		return res, err
	}
	res.NaiveSeconds = time.Since(start).Seconds()
	res.NaiveGFLOPS = flopsPerQuery * float64(len(naive)) / res.NaiveSeconds / 1e9
	res.NaiveQPS = float64(len(naive)) / res.NaiveSeconds
	if c := rusage.CPUSeconds() - cpu0; c > 0 {
		res.NaiveCPUGFLOP = flopsPerQuery * float64(len(naive)) / c / 1e9
	}
	res.Agree = true
	for i := range naive {
		a, b := map[int]bool{}, 0
		for _, r := range naive[i] {
			a[r.Row] = true
		}
		for _, r := range got[i] {
			if a[r.Row] {
				b++
			}
		}
		// Float32 sums in a different order may swap a near-tie at the k-th place; anything more is a bug.
		if b < len(naive[i])-1 || got[i][0].Row != naive[i][0].Row {
			res.Agree = false
		}
	}
	return res, nil
}
