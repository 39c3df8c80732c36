package ngram

import (
	"context"
	"os"
	"runtime"
	"syscall"
	"testing"
	"time"

	"github.com/ragbench/ragbench/harness/corpus"
)

// processCPU returns the CPU time (user+system) of the whole process in seconds.
func processCPU() float64 {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e9
}

// BenchmarkReadTokenize runs the build's read+tokenize phase alone (parsing, parallel tokenization,
// the global id mapping and the shard token buffer; no suffix array) over the DPR TSV corpus named by
// NGRAM_TOK_CORPUS (for instance the corpus.tsv that `ragbench ngram bench --dir DIR` leaves), and
// reports wall, process CPU and the builder goroutine's CPU seconds per run. Skipped when the variable is unset.
func BenchmarkReadTokenize(b *testing.B) {
	path := os.Getenv("NGRAM_TOK_CORPUS")
	if path == "" {
		b.Skip("set NGRAM_TOK_CORPUS to a DPR TSV corpus")
	}
	// The builder's goroutine (parsing is elsewhere) runs on a locked thread, so that its CPU time,
	// the serial part of the phase, can be told apart: on an idle machine the phase takes about
	// max(serial, total/GOMAXPROCS).
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	var cpu, serial, wall float64
	for i := 0; i < b.N; i++ {
		r, err := corpus.Open(path, "dpr")
		if err != nil {
			b.Fatal(err)
		}
		runtime.GC()
		c0, t0 := processCPU(), time.Now()
		bd := &builder{opt: BuildOptions{TokenWidth: 4, ShardTokens: DefaultShardTokens}, vocab: newVocabTable(), sep: sepID(4)}
		jobs := make(chan shardJob)
		done := make(chan struct{})
		go func() {
			for j := range jobs {
				j.buf.release()
			}
			close(done)
		}()
		ctx, cancel := context.WithCancel(context.Background())
		free := make(chan *tokBatch, 4*runtime.GOMAXPROCS(0)+4)
		batches, tokDone := tokenizeBatches(ctx, r, runtime.GOMAXPROCS(0), false, false, free)
		s0 := threadCPU()
		err = bd.read(ctx, batches, free, jobs)
		serial += threadCPU() - s0
		cancel()
		<-tokDone
		close(jobs)
		<-done
		cpu += processCPU() - c0
		wall += time.Since(t0).Seconds()
		r.Close()
		if err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(float64(bd.man.Tokens), "tokens")
	}
	b.ReportMetric(cpu/float64(b.N), "cpu-s/op")
	b.ReportMetric(wall/float64(b.N), "wall-s/op")
	b.ReportMetric(serial/float64(b.N), "serial-cpu-s/op")
}
