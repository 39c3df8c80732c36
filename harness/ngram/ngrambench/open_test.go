package ngrambench

import (
	"context"
	"errors"
	"flag"
	"path/filepath"
	"testing"
	"time"

	"github.com/ragbench/ragbench/harness/ngram"
	"github.com/ragbench/ragbench/internal/pagecache"
	"github.com/ragbench/ragbench/internal/rusage"
)

var (
	openIndex  = flag.String("open-index", "", "BenchmarkOpen: time this index directory instead of building one")
	openTokens = flag.Int64("open-tokens", 5_000_000, "BenchmarkOpen: tokens of the Zipfian index it builds when -open-index is not set")
)

// BenchmarkOpen times ngram.OpenIndex, which checks every index file's size and CRC-32C against the
// manifest on every open, with the files in the page cache (warm) and evicted from it first (cold,
// Linux). It reports the process CPU time per open (cpu-ms/op; wall time on a shared machine waits
// for other jobs) and the files checked; -count N repeats each case N times. A 100M-token index:
//
//	ragbench ngram bench --tokens 100000000 --no-peer --dir DIR
//	go test ./harness/ngram/ngrambench -run '^$' -bench Open -benchtime 1x -count 5 -open-index DIR/index
func BenchmarkOpen(b *testing.B) {
	if testing.Short() {
		b.Skip("builds an index; skipped with -short")
	}
	dir := *openIndex
	if dir == "" {
		dir = filepath.Join(b.TempDir(), "idx")
		if _, err := ngram.BuildFrom(context.Background(), newZipf(1, 100000, 1.1, *openTokens), dir, ngram.BuildOptions{}); err != nil {
			b.Fatal(err)
		}
	}
	for _, cold := range []bool{false, true} {
		name := "warm"
		if cold {
			name = "cold"
		}
		b.Run(name, func(b *testing.B) {
			var checked int
			var cpu time.Duration
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				if cold {
					if err := pagecache.DropDir(dir); errors.Is(err, errors.ErrUnsupported) {
						b.Skip("no page cache eviction on this platform")
					} else if err != nil {
						b.Fatal(err)
					}
				}
				cpu0 := rusage.CPUTime()
				b.StartTimer()
				ix, err := ngram.OpenIndex(dir, ngram.OpenOptions{})
				if err != nil {
					b.Fatal(err)
				}
				b.StopTimer()
				cpu += rusage.CPUTime() - cpu0
				checked = ix.Verified()
				if err := ix.Close(); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(cpu.Seconds()*1000/float64(b.N), "cpu-ms/op")
			b.ReportMetric(float64(checked), "checked-files")
		})
	}
}
