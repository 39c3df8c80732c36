package ngram

import (
	"fmt"
	"math/rand"
	"os"
	"runtime"
	"strconv"
	"syscall"
	"testing"
)

// zipfRankText returns a text like the one the build hands to SA-IS for a Zipfian corpus: n tokens of
// ids drawn from Zipf(s=1.1) over vocab words, numbered in order of first occurrence, each document
// of 20..300 tokens prefixed by the separator, mapped by byteOrderRanks (with the sentinel 0 appended).
func zipfRankText(n, vocab int, seed int64) ([]int32, int) {
	rng := rand.New(rand.NewSource(seed))
	z := rand.NewZipf(rng, 1.1, 1, uint64(vocab-1))
	first := make(map[uint64]int32)
	toks := make([]int32, 0, n+1)
	for len(toks) < n {
		toks = append(toks, -1)
		m := 20 + rng.Intn(281)
		for i := 0; i < m && len(toks) < n; i++ {
			w := z.Uint64()
			id, ok := first[w]
			if !ok {
				id = int32(len(first))
				first[w] = id
			}
			toks = append(toks, id)
		}
	}
	s, k, _ := byteOrderRanks(toks, 4, len(first))
	return s, k
}

// benchText caches the benchmark text across runs (-count).
var benchText struct {
	n int
	s []int32
	k int
}

// threadCPU returns the CPU time of the calling OS thread in seconds.
func threadCPU() float64 {
	var ru syscall.Rusage
	if syscall.Getrusage(1 /* RUSAGE_THREAD */, &ru) != nil {
		return 0
	}
	return float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e9
}

// saisBenchTokens is the text size of the SA-IS benchmarks: NGRAM_SAIS_TOKENS, or 2M.
func saisBenchTokens(b *testing.B) int {
	if v := os.Getenv("NGRAM_SAIS_TOKENS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			b.Fatalf("NGRAM_SAIS_TOKENS=%q: want a positive integer", v)
		}
		return n
	}
	return 2_000_000
}

// BenchmarkSAIS compares saisText with the reference saisRef (the peer, in the same run) on a Zipfian
// rank text with a 1M-word vocabulary, the bench command's corpus:
//
//	NGRAM_SAIS_TOKENS=30000000 go test -run XXX -bench SAIS -benchtime 1x -count 3 ./harness/ngram
func BenchmarkSAIS(b *testing.B) {
	n := saisBenchTokens(b)
	if benchText.n != n {
		benchText.s, benchText.k = zipfRankText(n, 1_000_000, 1)
		benchText.n = n
	}
	s, k := benchText.s, benchText.k
	// The text and the suffix array live in anonymous mappings, as in the build.
	wb, err := newTokenBuffer(len(s))
	if err != nil {
		b.Fatal(err)
	}
	defer wb.release()
	sb, err := newTokenBuffer(len(s))
	if err != nil {
		b.Fatal(err)
	}
	defer sb.release()
	work, sa := wb.tok[:len(s)], sb.tok[:len(s)]
	for _, impl := range []struct {
		name string
		fn   func(s, sa []int32, k int)
	}{{"saisText", saisText}, {"saisRef", saisRef}} {
		b.Run(fmt.Sprintf("%s/n=%d", impl.name, n), func(b *testing.B) {
			// CPU time of this thread: the machine is shared, and wall time also counts other processes.
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			var cpu float64
			for i := 0; i < b.N; i++ {
				copy(work, s)
				c0 := threadCPU()
				impl.fn(work, sa, k)
				cpu += threadCPU() - c0
			}
			b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds()/1e6, "Msym/s")
			b.ReportMetric(cpu/float64(b.N), "cpu-s/op")
		})
	}
}
