package bm25

import (
	"context"
	"fmt"
	"math"
	"os"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestQueryRate times synthetic queries on an existing index (BM25_QPROF_INDEX); skipped otherwise.
func TestQueryRate(t *testing.T) {
	ix := qprofIndex(t)
	for _, kind := range []string{"zipf", "content"} {
		s := NewSynth(2)
		qs := make([]string, 500)
		for i := range qs {
			if kind == "zipf" {
				qs[i] = s.Query()
			} else {
				qs[i] = s.ContentQuery()
			}
		}
		c0 := CPUTime()
		for _, q := range qs {
			if _, err := ix.Search(context.Background(), q, 10); err != nil {
				t.Fatal(err)
			}
		}
		t.Logf("%s queries: %.0f per CPU-second", kind, float64(len(qs))/(CPUTime()-c0).Seconds())
	}
}

// TestQueryRateFastest times queries on an existing index (BM25_QPROF_INDEX) in a way that resists a
// busy machine: each query is searched five times and its fastest time kept; the rate is the number of
// queries over the sum of those times. The queries are 1,000 synthetic ones, or the first 1,000 lines of
// BM25_QPROF_QUERIES. Skipped without BM25_QPROF_INDEX.
func TestQueryRateFastest(t *testing.T) {
	ix := qprofIndex(t)
	qs := qprofQueries(t, 1000)
	var total time.Duration
	for _, q := range qs {
		best := time.Duration(math.MaxInt64)
		for range 5 {
			start := time.Now()
			if _, err := ix.Search(context.Background(), q, 10); err != nil {
				t.Fatal(err)
			}
			best = min(best, time.Since(start))
		}
		total += best
	}
	t.Logf("%d queries, fastest of 5 each: %.0f queries/s (mean %v)", len(qs), float64(len(qs))/total.Seconds(), total/time.Duration(len(qs)))
}

// TestQueryRateOracle is TestQueryRateFastest with each search started from the final k-th score as its
// threshold: the rate a perfect initial threshold would give. Skipped without BM25_QPROF_INDEX.
func TestQueryRateOracle(t *testing.T) {
	ix := qprofIndex(t)
	s := NewSynth(2)
	var total time.Duration
	for range 1000 {
		q := s.Query()
		top, err := ix.Search(context.Background(), q, 10)
		if err != nil {
			t.Fatal(err)
		}
		th := math.Inf(-1)
		if len(top) == 10 {
			th = top[9].Score
		}
		best := time.Duration(math.MaxInt64)
		for range 5 {
			qts, _ := ix.prepare(q)
			if len(qts) == 0 {
				best = 0
				break
			}
			start := time.Now()
			got := ix.maxScore(qts, 10, th)
			best = min(best, time.Since(start))
			if len(got) != len(top) || len(got) > 0 && got[len(got)-1] != top[len(top)-1] {
				t.Fatalf("%q: oracle threshold changed the result", q)
			}
		}
		total += best
	}
	t.Logf("oracle: %.0f queries/s (mean %v)", 1000/total.Seconds(), total/1000)
}

// TestInitialThetaQuality reports how close initialTheta comes to the final k-th score. Skipped without
// BM25_QPROF_INDEX.
func TestInitialThetaQuality(t *testing.T) {
	ix := qprofIndex(t)
	s := NewSynth(2)
	var sum float64
	var spent time.Duration
	n, none := 0, 0
	for range 1000 {
		q := s.Query()
		top, _ := ix.Search(context.Background(), q, 10)
		qts, _ := ix.prepare(q)
		if len(qts) == 0 || len(top) < 10 {
			continue
		}
		sort.SliceStable(qts, func(i, j int) bool { return qts[i].ub < qts[j].ub })
		start := time.Now()
		th := ix.initialTheta(qts, 10)
		spent += time.Since(start)
		release(qts)
		if math.IsInf(th, -1) {
			none++
			continue
		}
		sum += th / top[9].Score
		n++
	}
	t.Logf("initial/final: mean %.3f over %d queries, %d without; %v per query to compute", sum/float64(n), n, none, spent/1000)
}

// TestInitialThetaAB compares, in one process and query by query (fastest of 3 runs each, alternating),
// MaxScore from -Inf with MaxScore from initialTheta (its cost included): the comparison that stays
// stable on a busy machine. The queries are as in TestQueryRateFastest. Skipped without BM25_QPROF_INDEX.
func TestInitialThetaAB(t *testing.T) {
	ix := qprofIndex(t)
	qs := qprofQueries(t, 1000)
	variants := []struct {
		name  string
		leads int // 0: no initial threshold
	}{{"from -Inf", 0}, {"initial, 1 list", 1}, {"initial, up to 3 lists", 3}}
	total := make([]time.Duration, len(variants))
	for _, q := range qs {
		best := make([]time.Duration, len(variants))
		for i := range best {
			best[i] = time.Duration(math.MaxInt64)
		}
		for range 3 {
			for i, v := range variants {
				qts, err := ix.prepare(q)
				if err != nil {
					t.Fatal(err)
				}
				if len(qts) == 0 {
					best[i] = 0
					continue
				}
				sampleLeads = max(v.leads, 1)
				start := time.Now()
				sort.SliceStable(qts, func(i, j int) bool { return qts[i].ub < qts[j].ub })
				th := math.Inf(-1)
				if v.leads > 0 {
					th = ix.initialTheta(qts, 10)
				}
				ix.maxScore(qts, 10, th)
				best[i] = min(best[i], time.Since(start))
				release(qts)
			}
		}
		for i := range total {
			total[i] += best[i]
		}
	}
	sampleLeads = 3
	for i, v := range variants {
		t.Logf("%s: %.0f queries/s", v.name, float64(len(qs))/total[i].Seconds())
	}
}

// qprofIndex opens the index named by BM25_QPROF_INDEX, closed when the test ends; it skips the test
// when the variable is unset.
func qprofIndex(t *testing.T) *Index {
	t.Helper()
	return qprofIndexEnv(t, "BM25_QPROF_INDEX")
}

// qprofIndexEnv is qprofIndex for the index named by the environment variable name.
func qprofIndexEnv(t *testing.T, name string) *Index {
	t.Helper()
	dir := os.Getenv(name)
	if dir == "" {
		t.Skip("set " + name + " to an index directory")
	}
	ix, err := OpenWith(dir, OpenOptions{SkipChecksums: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ix.Close() })
	return ix
}

// qprofQueries returns the first n non-empty lines of BM25_QPROF_QUERIES, or n synthetic queries.
func qprofQueries(t *testing.T, n int) []string {
	t.Helper()
	var qs []string
	if f := os.Getenv("BM25_QPROF_QUERIES"); f != "" {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range strings.Split(string(b), "\n") {
			if l = strings.TrimSpace(l); l != "" && len(qs) < n {
				qs = append(qs, l)
			}
		}
		return qs
	}
	s := NewSynth(2)
	for range n {
		qs = append(qs, s.Query())
	}
	return qs
}

// TestBatchAB compares, in one process and query by query (fastest of 3 runs each, in turns), the
// document-at-a-time MaxScore with the batch scorer at several window widths (BM25_QPROF_WINDOWS, a
// comma-separated list; default the current windowDocs), each from initialTheta with its cost
// included. The queries are as in TestQueryRateFastest. Skipped without BM25_QPROF_INDEX.
func TestBatchAB(t *testing.T) {
	ix := qprofIndex(t)
	qs := qprofQueries(t, 1000)
	defer func(u bool, b int) { useBatches, windowDocs = u, b }(useBatches, windowDocs)
	variants := []int{0, windowDocs} // 0: document at a time
	if v := os.Getenv("BM25_QPROF_WINDOWS"); v != "" {
		variants = variants[:1]
		for _, f := range strings.Split(v, ",") {
			b, err := strconv.Atoi(f)
			if err != nil || b <= 0 {
				t.Fatalf("BM25_QPROF_WINDOWS: %q is not a positive number", f)
			}
			variants = append(variants, b)
		}
	}
	total := make([]time.Duration, len(variants))
	for qi, q := range qs {
		for k := range variants {
			// The order of the variants turns with each query: a variant run right after another on
			// the same query finds its data in cache, which an A/A run of this loop showed to be worth
			// about 5% to whichever runs second.
			i := (k + qi) % len(variants)
			v := variants[i]
			best := time.Duration(math.MaxInt64)
			for range 3 {
				useBatches, windowDocs = v > 0, max(v, 1)
				start := time.Now()
				if _, err := ix.Search(context.Background(), q, 10); err != nil {
					t.Fatal(err)
				}
				best = min(best, time.Since(start))
			}
			total[i] += best
		}
	}
	for i, v := range variants {
		name := "document at a time"
		if v > 0 {
			name = fmt.Sprintf("windows of %d documents", v)
		}
		t.Logf("%s: %.0f queries/s", name, float64(len(qs))/total[i].Seconds())
	}
}

// TestVerifyIndex runs Index.Verify on the index named by BM25_QPROF_INDEX (skipped without it): a check
// of a large index built by the CLI.
func TestVerifyIndex(t *testing.T) {
	ix := qprofIndex(t)
	start := time.Now()
	if err := ix.Verify(); err != nil {
		t.Fatal(err)
	}
	t.Logf("verified in %v", time.Since(start))
}

// TestSinglePass times queries as `ragbench index bench` does: 50 warm-up searches, then every query
// once (2,000 synthetic queries, or the first 2,000 lines of BM25_QPROF_QUERIES), reporting queries/s,
// queries per CPU-second and p50/p99. Each query meets its data cold, as in the CLI. Skipped without
// BM25_QPROF_INDEX.
func TestSinglePass(t *testing.T) {
	dir := os.Getenv("BM25_QPROF_INDEX")
	if dir == "" {
		t.Skip("set BM25_QPROF_INDEX to an index directory")
	}
	ix, err := Open(dir) // with checksums, as the CLI opens it: every page is read once
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	qs := qprofQueries(t, 2000)
	ctx := context.Background()
	for _, q := range qs[:min(50, len(qs))] {
		ix.Search(ctx, q, 10)
	}
	lat := make([]time.Duration, len(qs))
	var ru0, ru1 syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru0)
	start, c0 := time.Now(), CPUTime()
	for i, q := range qs {
		t0 := time.Now()
		if _, err := ix.Search(ctx, q, 10); err != nil {
			t.Fatal(err)
		}
		lat[i] = time.Since(t0)
	}
	wall, cpu := time.Since(start), CPUTime()-c0
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru1)
	t.Logf("minor faults %d, major %d, user %v, sys %v", ru1.Minflt-ru0.Minflt, ru1.Majflt-ru0.Majflt,
		time.Duration(ru1.Utime.Nano()-ru0.Utime.Nano()), time.Duration(ru1.Stime.Nano()-ru0.Stime.Nano()))
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	t.Logf("single pass: %d queries, %.0f q/s wall, %.0f q per CPU-second, p50 %v, p99 %v", len(qs),
		float64(len(qs))/wall.Seconds(), float64(len(qs))/cpu.Seconds(), lat[len(lat)/2].Round(time.Microsecond), lat[len(lat)*99/100].Round(time.Microsecond))
}

// TestFlagsAB compares, in one process and query by query (each query's fastest run of BM25_QPROF_REPS
// in a row, default 3, over BM25_QPROF_ROUNDS passes over the queries, default 1: REPS=1 ROUNDS=3 is
// closer to a single pass, its caches colder; the variants in turns as in TestBatchAB), sets of features
// turned off: BM25_QPROF_OFF is a semicolon-separated list
// of BM25_AB_OFF values ("" for all on, window=N for windowDocs), e.g. ";probescan;window=4096". The
// queries are as in TestQueryRateFastest. Skipped without BM25_QPROF_INDEX.
func TestFlagsAB(t *testing.T) {
	ix := qprofIndex(t)
	qs := qprofQueries(t, 1000)
	variants := strings.Split(os.Getenv("BM25_QPROF_OFF"), ";")
	rounds, reps := qprofRoundsReps(1, 3)
	best := fastestInTurns(t, qs, len(variants), rounds, reps, func(i int, q string) error {
		restore := setABOff(variants[i])
		defer restore()
		_, err := ix.Search(context.Background(), q, 10)
		return err
	})
	for i, v := range variants {
		t.Logf("off %-30q %.0f queries/s", v, rate(best[i]))
	}
}

// qprofRoundsReps returns BM25_QPROF_ROUNDS and BM25_QPROF_REPS, or the defaults given.
func qprofRoundsReps(rounds, reps int) (int, int) {
	if v, err := strconv.Atoi(os.Getenv("BM25_QPROF_ROUNDS")); err == nil && v > 0 {
		rounds = v
	}
	if v, err := strconv.Atoi(os.Getenv("BM25_QPROF_REPS")); err == nil && v > 0 {
		reps = v
	}
	return rounds, reps
}

// fastestInTurns runs each query of qs through n variants (search(i, q) for variant i), reps times in a
// row per variant, over rounds passes, the variants in turns (rotated by query and round), and returns
// per variant and query the fastest run.
func fastestInTurns(t *testing.T, qs []string, n, rounds, reps int, search func(i int, q string) error) [][]time.Duration {
	t.Helper()
	best := make([][]time.Duration, n)
	for i := range best {
		best[i] = make([]time.Duration, len(qs))
		for qi := range best[i] {
			best[i][qi] = time.Duration(math.MaxInt64)
		}
	}
	for r := 0; r < rounds; r++ {
		for qi, q := range qs {
			for k := range n {
				i := (k + qi + r) % n
				for range reps {
					start := time.Now()
					if err := search(i, q); err != nil {
						t.Fatal(err)
					}
					best[i][qi] = min(best[i][qi], time.Since(start))
				}
			}
		}
	}
	return best
}

// rate returns queries per second over the times of one variant.
func rate(times []time.Duration) float64 {
	var total time.Duration
	for _, d := range times {
		total += d
	}
	return float64(len(times)) / total.Seconds()
}

// TestMapPostingsAB compares, in one process and query by query as TestFlagsAB does (BM25_QPROF_REPS,
// BM25_QPROF_ROUNDS), the index BM25_QPROF_INDEX opened twice: with postings.bin read into huge pages
// (OpenOptions.HugePostings) and mapped from the file (Open's default). Skipped without BM25_QPROF_INDEX.
func TestMapPostingsAB(t *testing.T) {
	dir := os.Getenv("BM25_QPROF_INDEX")
	if dir == "" {
		t.Skip("set BM25_QPROF_INDEX to an index directory")
	}
	var ixs [2]*Index
	for i, mp := range []bool{false, true} {
		ix, err := OpenWith(dir, OpenOptions{SkipChecksums: true, HugePostings: !mp})
		if err != nil {
			t.Fatal(err)
		}
		defer ix.Close()
		ixs[i] = ix
	}
	qs := qprofQueries(t, 1000)
	rounds, reps := qprofRoundsReps(3, 1)
	best := fastestInTurns(t, qs, 2, rounds, reps, func(i int, q string) error {
		_, err := ixs[i].Search(context.Background(), q, 10)
		return err
	})
	for i, name := range []string{"read into huge pages (HugePostings)", "mapped"} {
		t.Logf("postings %s: %.0f queries/s", name, rate(best[i]))
	}
}

// TestColdWarm splits a query's time into what its data's coldness costs and the rest: each query is
// searched on the index (BM25_QPROF_INDEX, opened with checksums so that every page was touched once, as
// the CLI opens it), then on a copy of it in other files (BM25_QPROF_INDEX_B: the same work and branches
// on data just as cold), then once more on the first (its data now in the caches). Skipped without both.
func TestColdWarm(t *testing.T) {
	dirA, dirB := os.Getenv("BM25_QPROF_INDEX"), os.Getenv("BM25_QPROF_INDEX_B")
	if dirA == "" || dirB == "" {
		t.Skip("set BM25_QPROF_INDEX and BM25_QPROF_INDEX_B (a copy of it)")
	}
	var ixs [2]*Index
	for i, dir := range []string{dirA, dirB} {
		ix, err := Open(dir)
		if err != nil {
			t.Fatal(err)
		}
		defer ix.Close()
		ixs[i] = ix
	}
	qs := qprofQueries(t, 2000)
	ctx := context.Background()
	var first, copyAfter, again time.Duration
	for _, q := range qs {
		for i, d := range []*time.Duration{&first, &copyAfter, &again} {
			t0 := time.Now()
			if _, err := ixs[i%2].Search(ctx, q, 10); err != nil {
				t.Fatal(err)
			}
			*d += time.Since(t0)
		}
	}
	n := time.Duration(len(qs))
	t.Logf("%d queries, mean: first %v, on the copy right after %v, again on the first %v", len(qs),
		(first / n).Round(time.Microsecond), (copyAfter / n).Round(time.Microsecond), (again / n).Round(time.Microsecond))
}
