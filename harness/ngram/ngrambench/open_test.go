package ngrambench

import (
	"context"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/ragbench/ragbench/harness/ngram"
	"github.com/ragbench/ragbench/internal/pagecache"
	"github.com/ragbench/ragbench/internal/rusage"
)

var (
	openIndex  = flag.String("open-index", "", "BenchmarkOpen: time this index directory instead of building one (its verified.json is removed and rewritten)")
	openTokens = flag.Int64("open-tokens", 5_000_000, "BenchmarkOpen: tokens of the Zipfian index it builds when -open-index is not set")
)

// BenchmarkOpen times ngram.OpenIndex, which checks the index against its manifest by default, in
// the three ways an index is opened, each with the files in the page cache (warm) and evicted from it
// first (cold, Linux):
//
//   - full: no remembered stamps (the first open after a build or a change): every file's CRC-32C is
//     read;
//   - stamped: a later open: the small files are checked, the large ones trusted by their size and
//     modification time in verified.json;
//   - verify: OpenOptions.Verify (ngram count --verify): every file is checked whatever was remembered.
//
// It reports the process CPU time per open (cpu-ms/op; wall time on a shared machine waits for other
// jobs) and the files checked and trusted per open beside the time; -count N repeats each case N
// times. A 100M-token index:
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
	open := func(b *testing.B, verify bool) (checked, trusted int) {
		ix, err := ngram.OpenIndex(dir, ngram.OpenOptions{Verify: verify})
		if err != nil {
			b.Fatal(err)
		}
		checked, trusted = ix.Verified()
		if err := ix.Close(); err != nil {
			b.Fatal(err)
		}
		return checked, trusted
	}
	for _, c := range []struct {
		name   string
		verify bool
		stamps bool // verified.json present before the open
		cold   bool
	}{
		{"full/warm", false, false, false},
		{"stamped/warm", false, true, false},
		{"verify/warm", true, true, false},
		{"full/cold", false, false, true},
		{"stamped/cold", false, true, true},
		{"verify/cold", true, true, true},
	} {
		b.Run(c.name, func(b *testing.B) {
			var checked, trusted int
			var cpu time.Duration
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				stamps := filepath.Join(dir, ngram.VerifiedFile)
				if c.stamps {
					open(b, false) // writes the stamps when they are missing
				} else if err := os.Remove(stamps); err != nil && !errors.Is(err, os.ErrNotExist) {
					b.Fatal(err)
				}
				if c.cold {
					if err := pagecache.DropDir(dir); errors.Is(err, errors.ErrUnsupported) {
						b.Skip("no page cache eviction on this platform")
					} else if err != nil {
						b.Fatal(err)
					}
				}
				cpu0 := rusage.CPUTime()
				b.StartTimer()
				checked, trusted = open(b, c.verify)
				b.StopTimer()
				cpu += rusage.CPUTime() - cpu0
			}
			b.ReportMetric(cpu.Seconds()*1000/float64(b.N), "cpu-ms/op")
			b.ReportMetric(float64(checked), "checked-files")
			b.ReportMetric(float64(trusted), "trusted-files")
		})
	}
}
