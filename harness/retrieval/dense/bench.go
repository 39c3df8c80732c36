package dense

import (
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
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
	Rounds  int    // rounds, each timing our search and then the numpy peer on the same queries (default 3)
	Python  string // Python interpreter with numpy for the peer; empty: no numpy peer
	Dir     string // where to build the index (default a temporary directory, removed afterwards)
	Seed    uint64
}

// BenchResult reports the measured figures. GFLOP/s counts 2·N·Dim floating-point operations per query.
// Timed figures are medians over the rounds.
type BenchResult struct {
	N, Dim, Queries, Batch, K, Naive, Rounds int
	BLAS                                     string // the Sgemm our search ran on (see BLAS)
	LoadBefore, LoadAfter                    string // /proc/loadavg when the timing started and ended
	BuildSeconds                             float64
	SgemmSeconds, SgemmGFLOPS                float64
	SgemmQPS                                 float64
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

	// The numpy peer, run after ours in every round (NumpyErr says why it did not run).
	Numpy                                *NumpyResult // the last round's run (library, kernel, threads)
	NumpyErr                             string
	NumpySearchSeconds, NumpyMatmulSecs  float64 // medians over rounds of the whole run's seconds
	NumpySearchGFLOPS, NumpyMatmulGFLOPS float64
	NumpyAgree                           bool // numpy found the same top-k rows for the checked queries
	RoundSeconds, NumpyRoundSeconds      []float64

	// The int8 form of the same index (built with it), timed in every round after numpy.
	Int8Kernel       string
	Int8Rescore      int
	Int8Seconds      float64 // median over rounds
	Int8QPS          float64
	Int8Recall       float64 // recall@K against our float32 exact search, over all queries
	Int8RoundSeconds []float64
	Int8BytesPerVec  float64 // vectors.u8 + scales.f32 per vector
	F32BytesPerVec   float64 // vectors.f32 per vector
	Int8CPUSeconds   float64 // median CPU seconds of a round
	ExactCPUSeconds  float64
	// PeakRSS is the process's peak resident set (bytes): the build's heap plus the mapped pages of the
	// files searched (vectors.f32 by exact search, vectors.u8 and the candidates' rows by int8).
	PeakRSS int64
	// Int8PeakRSS is the peak resident set after the build and one batch of int8 search, before exact
	// search maps all of vectors.f32 in: what an int8 deployment needs.
	Int8PeakRSS int64
	// At the same point: the anonymous (heap) part of the resident set, the file-backed part (mapped
	// index pages, which the kernel can drop and re-read), and the memory the Go runtime holds from the
	// OS (an upper bound of the build's and search's heap).
	Int8RssAnon, Int8RssFile, GoSys int64
}

// String formats the result as a small report.
func (r BenchResult) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "dense exact search, %d × %d float32, k=%d, GOMAXPROCS=%d, %d rounds (medians)\n", r.N, r.Dim, r.K, r.Threads, r.Rounds)
	fmt.Fprintf(&b, "  ours: %s\n", r.BLAS)
	fmt.Fprintf(&b, "  load average: %s at start, %s at end\n", r.LoadBefore, r.LoadAfter)
	fmt.Fprintf(&b, "  build (random vectors, write, checksum, open): %.1fs\n", r.BuildSeconds)
	fmt.Fprintf(&b, "  batched Sgemm: %d queries in batches of %d: %.2fs, %.1f GFLOP/s wall (%.1f GFLOP per CPU-second), %.0f queries/s, batch p50 %v p99 %v\n",
		r.Queries, r.Batch, r.SgemmSeconds, r.SgemmGFLOPS, r.SgemmCPUGFLOP, r.SgemmQPS, r.BatchP50.Round(time.Millisecond), r.BatchP99.Round(time.Millisecond))
	fmt.Fprintf(&b, "  fastest batch: %.1f GFLOP/s\n", r.BestBatchGFLOPS)
	if r.Numpy != nil {
		n := r.Numpy
		fmt.Fprintf(&b, "  numpy %s peer: %s, kernel %s, %d threads (OPENBLAS_CORETYPE and OPENBLAS_L2_SIZE unset)\n", n.Numpy, n.Config, n.Kernel, n.Threads)
		fmt.Fprintf(&b, "  numpy search (matmul + argpartition + sort): %.2fs, %.1f GFLOP/s wall, %.0f queries/s; matmul alone %.2fs, %.1f GFLOP/s\n",
			r.NumpySearchSeconds, r.NumpySearchGFLOPS, float64(r.Queries)/r.NumpySearchSeconds, r.NumpyMatmulSecs, r.NumpyMatmulGFLOPS)
		fmt.Fprintf(&b, "  ours ÷ numpy: %.2f× its search, %.2f× its matmul alone; same top-%d rows as numpy: %v\n",
			r.SgemmGFLOPS/r.NumpySearchGFLOPS, r.SgemmGFLOPS/r.NumpyMatmulGFLOPS, r.K, r.NumpyAgree)
		fmt.Fprintf(&b, "  per round, ours / numpy search seconds: %s\n", pairs(r.RoundSeconds, r.NumpyRoundSeconds))
	} else if r.NumpyErr != "" {
		fmt.Fprintf(&b, "  numpy peer: not run: %s\n", r.NumpyErr)
	}
	if r.Int8Kernel != "" {
		fmt.Fprintf(&b, "  int8 (%s), %d candidates re-scored in float32: %.2fs, %.0f queries/s = %.2f× our float32 exact; recall@%d vs float32 exact %.4f\n",
			r.Int8Kernel, r.Int8Rescore, r.Int8Seconds, r.Int8QPS, r.Int8QPS/r.SgemmQPS, r.K, r.Int8Recall)
		fmt.Fprintf(&b, "  int8 bytes per vector on disk %.1f (%.3f per dimension) beside float32 %.0f; CPU seconds per round int8 %.2f, float32 %.2f\n",
			r.Int8BytesPerVec, r.Int8BytesPerVec/float64(r.Dim), r.F32BytesPerVec, r.Int8CPUSeconds, r.ExactCPUSeconds)
		fmt.Fprintf(&b, "  per round, int8 seconds: %s\n", fmtList(r.Int8RoundSeconds))
	}
	if r.PeakRSS > 0 {
		fmt.Fprintf(&b, "  peak resident set %.2f GB; after the build and int8 search only %.2f GB (now: %.2f GB anonymous, %.2f GB mapped file pages; Go runtime holds %.2f GB)\n",
			float64(r.PeakRSS)/1e9, float64(r.Int8PeakRSS)/1e9, float64(r.Int8RssAnon)/1e9, float64(r.Int8RssFile)/1e9, float64(r.GoSys)/1e9)
	}
	fmt.Fprintf(&b, "  naive loop (peer): %d queries: %.2fs, %.2f GFLOP/s wall (%.2f GFLOP per CPU-second), %.1f queries/s\n", r.Naive, r.NaiveSeconds, r.NaiveGFLOPS, r.NaiveCPUGFLOP, r.NaiveQPS)
	fmt.Fprintf(&b, "  speed-up %.1f×; same top-%d rows as the naive loop: %v\n", r.SgemmGFLOPS/max(r.NaiveGFLOPS, 1e-9), r.K, r.Agree)
	return b.String()
}

func pairs(a, b []float64) string {
	var s []string
	for i := range a {
		if i < len(b) {
			s = append(s, fmt.Sprintf("%.2f/%.2f", a[i], b[i]))
		}
	}
	return strings.Join(s, " ")
}

func fmtList(x []float64) string {
	var s []string
	for _, v := range x {
		s = append(s, fmt.Sprintf("%.2f", v))
	}
	return strings.Join(s, " ")
}

func median(x []float64) float64 {
	if len(x) == 0 {
		return 0
	}
	y := append([]float64(nil), x...)
	sort.Float64s(y)
	if len(y)%2 == 1 {
		return y[len(y)/2]
	}
	return (y[len(y)/2-1] + y[len(y)/2]) / 2
}

func loadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "unknown"
	}
	return strings.Join(f[:3], " ")
}

// sameTop reports whether b has the same top-k rows as a, allowing one swapped near-tie at the k-th
// place (float32 sums in a different order), but requiring the same first row.
func sameTop(a, b []int) bool {
	if len(a) != len(b) || len(a) == 0 {
		return len(a) == len(b)
	}
	in := map[int]bool{}
	for _, r := range a {
		in[r] = true
	}
	n := 0
	for _, r := range b {
		if in[r] {
			n++
		}
	}
	return n >= len(a)-1 && a[0] == b[0]
}

func rows(rs []Result) []int {
	out := make([]int, len(rs))
	for i, r := range rs {
		out[i] = r.Row
	}
	return out
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

// Bench builds an index of random unit vectors and times batched exact search, in alternating rounds
// with the numpy peer, and then the naive loop.
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
	if cfg.Rounds <= 0 {
		cfg.Rounds = 3
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
	res := BenchResult{N: cfg.N, Dim: cfg.Dim, Queries: cfg.Queries, Batch: cfg.Batch, K: cfg.K, Naive: cfg.Naive, Rounds: cfg.Rounds, BLAS: BLAS()}
	emb := seededEmbedder{dim: cfg.Dim, seed: cfg.Seed + 1}
	start := time.Now()
	if err := BuildWith(ctx, &rowReader{n: cfg.N}, emb, dir, progress, BuildOptions{BatchSize: 1024, ProgressEvery: 50000, Int8: true}); err != nil {
		return res, err
	}
	ix, err := Open(dir, emb)
	if err != nil {
		return res, err
	}
	defer ix.Close()
	res.BuildSeconds = time.Since(start).Seconds()
	qs := benchQueries(cfg.Seed, cfg.Queries, cfg.Dim)
	qfile := filepath.Join(dir, "bench-queries.f32")
	if err := writeF32(qfile, qs); err != nil {
		return res, err
	}
	defer os.Remove(qfile)
	flopsPerQuery := 2 * float64(cfg.N) * float64(cfg.Dim)
	// Warm the page cache and the code paths, int8 first to measure its resident set alone.
	if _, err := ix.SearchVectors(ctx, qs[:min(len(qs), cfg.Batch)], cfg.K); err != nil {
		return res, err
	}
	res.Int8PeakRSS = rusage.PeakRSS()
	res.Int8RssAnon, res.Int8RssFile = rssParts()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	res.GoSys = int64(ms.Sys)
	if _, err := ix.SearchExact(ctx, qs[:min(len(qs), cfg.Batch)], cfg.K); err != nil {
		return res, err
	}
	_, res.Int8Kernel = ix.Int8()
	res.Int8Rescore = ix.rescoreN
	res.Int8BytesPerVec = float64(ix.meta.Files[codesFile].Size+ix.meta.Files[scalesU8].Size) / float64(cfg.N)
	res.F32BytesPerVec = float64(ix.meta.Files[vectorsFile].Size) / float64(cfg.N)
	var i8got [][]Result
	var i8cpu []float64
	var (
		lat            []time.Duration
		got            [][]Result
		cpu, mm, nsrch []float64
	)
	res.Threads = runtime.GOMAXPROCS(0)
	res.LoadBefore = loadAvg()
	for round := 0; round < cfg.Rounds; round++ {
		fmt.Fprintf(progress, "dense bench: round %d/%d: %d queries in batches of %d\n", round+1, cfg.Rounds, cfg.Queries, cfg.Batch)
		got = got[:0]
		cpu0 := rusage.CPUSeconds()
		start = time.Now()
		for s := 0; s < len(qs); s += cfg.Batch {
			t := time.Now()
			r, err := ix.SearchExact(ctx, qs[s:min(s+cfg.Batch, len(qs))], cfg.K)
			if err != nil {
				return res, err
			}
			lat = append(lat, time.Since(t))
			got = append(got, r...)
		}
		res.RoundSeconds = append(res.RoundSeconds, time.Since(start).Seconds())
		cpu = append(cpu, rusage.CPUSeconds()-cpu0)
		fmt.Fprintf(progress, "dense bench: round %d/%d: int8\n", round+1, cfg.Rounds)
		i8got = i8got[:0]
		cpu0 = rusage.CPUSeconds()
		start = time.Now()
		for s := 0; s < len(qs); s += cfg.Batch {
			r, err := ix.SearchVectors(ctx, qs[s:min(s+cfg.Batch, len(qs))], cfg.K)
			if err != nil {
				return res, err
			}
			i8got = append(i8got, r...)
		}
		res.Int8RoundSeconds = append(res.Int8RoundSeconds, time.Since(start).Seconds())
		i8cpu = append(i8cpu, rusage.CPUSeconds()-cpu0)
		if cfg.Python == "" || res.NumpyErr != "" {
			continue
		}
		fmt.Fprintf(progress, "dense bench: round %d/%d: numpy peer\n", round+1, cfg.Rounds)
		nr, err := runNumpy(ctx, cfg.Python, filepath.Join(dir, vectorsFile), qfile, cfg.N, cfg.Dim, cfg.Queries, cfg.Batch, cfg.K, cfg.Naive)
		if err != nil {
			if ctx.Err() != nil {
				return res, ctx.Err()
			}
			res.NumpyErr = err.Error()
			continue
		}
		res.Numpy = &nr
		var a, b float64
		for i := range nr.MatmulSeconds {
			a += nr.MatmulSeconds[i]
			b += nr.SearchSeconds[i]
		}
		mm = append(mm, a)
		nsrch = append(nsrch, b)
		res.NumpyRoundSeconds = append(res.NumpyRoundSeconds, b)
	}
	res.LoadAfter = loadAvg()
	res.Int8Seconds = median(res.Int8RoundSeconds)
	res.Int8QPS = float64(cfg.Queries) / res.Int8Seconds
	res.Int8Recall = Recall(got, i8got)
	res.Int8CPUSeconds, res.ExactCPUSeconds = median(i8cpu), median(cpu)
	res.SgemmSeconds = median(res.RoundSeconds)
	res.SgemmGFLOPS = flopsPerQuery * float64(cfg.Queries) / res.SgemmSeconds / 1e9
	res.SgemmQPS = float64(cfg.Queries) / res.SgemmSeconds
	if c := median(cpu); c > 0 {
		res.SgemmCPUGFLOP = flopsPerQuery * float64(cfg.Queries) / c / 1e9
	}
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	res.BestBatchGFLOPS = flopsPerQuery * float64(min(cfg.Batch, cfg.Queries)) / lat[0].Seconds() / 1e9
	res.BatchP50 = lat[len(lat)/2]
	res.BatchP99 = lat[min(len(lat)-1, len(lat)*99/100)]
	if res.Numpy != nil {
		res.NumpySearchSeconds, res.NumpyMatmulSecs = median(nsrch), median(mm)
		res.NumpySearchGFLOPS = flopsPerQuery * float64(cfg.Queries) / res.NumpySearchSeconds / 1e9
		res.NumpyMatmulGFLOPS = flopsPerQuery * float64(cfg.Queries) / res.NumpyMatmulSecs / 1e9
		res.NumpyAgree = len(res.Numpy.Top) > 0
		for i, top := range res.Numpy.Top {
			if !sameTop(top, rows(got[i])) {
				res.NumpyAgree = false
			}
		}
	}
	fmt.Fprintf(progress, "dense bench: naive loop over %d queries\n", cfg.Naive)
	cpu0 := rusage.CPUSeconds()
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
	res.PeakRSS = rusage.PeakRSS()
	res.Agree = true
	for i := range naive {
		if !sameTop(rows(naive[i]), rows(got[i])) {
			res.Agree = false
		}
	}
	return res, nil
}

// benchQueries returns reproducible Gaussian (unnormalised) queries.
func benchQueries(seed uint64, n, dim int) [][]float32 {
	rng := rand.New(rand.NewPCG(seed+7, 3))
	qs := make([][]float32, n)
	for i := range qs {
		qs[i] = make([]float32, dim)
		for j := range qs[i] {
			qs[i][j] = float32(rng.NormFloat64())
		}
	}
	return qs
}

// writeF32 writes vectors as little-endian float32 rows.
func writeF32(path string, vs [][]float32) error {
	var buf []byte
	for _, v := range vs {
		for _, x := range v {
			buf = binary.LittleEndian.AppendUint32(buf, math.Float32bits(x))
		}
	}
	return os.WriteFile(path, buf, 0o644)
}

// rssParts returns RssAnon and RssFile from /proc/self/status (0, 0 where there is none).
func rssParts() (anon, file int64) {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0, 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) < 2 {
			continue
		}
		kb, _ := strconv.ParseInt(f[1], 10, 64)
		switch f[0] {
		case "RssAnon:":
			anon = kb << 10
		case "RssFile:":
			file = kb << 10
		}
	}
	return anon, file
}
