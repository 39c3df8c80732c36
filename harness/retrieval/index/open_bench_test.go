package index

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/ragbench/ragbench/harness/corpus"
	"github.com/ragbench/ragbench/harness/retrieval/bm25"
	"github.com/ragbench/ragbench/internal/pagecache"
	"github.com/ragbench/ragbench/internal/rusage"
)

var (
	openIndex    = flag.String("open-index", "", "BenchmarkOpenBM25: time this BM25 index directory instead of building one")
	openPassages = flag.Int("open-passages", 100_000, "BenchmarkOpenBM25: synthetic passages of the index it builds when -open-index is not set")
)

// BenchmarkOpenBM25 times Open of a BM25 index, which checks every file's CRC-32C by default, and the
// first search after it (one synthetic query, top 10), with and without the checksums
// (BM25Config.SkipChecksums), each with the files in the page cache (warm) and evicted from it first
// (cold, Linux). ns/op is the open and the search together; open-ms and search-ms split them, and
// cpu-ms/op is the process CPU time of both (wall time on a shared machine waits for other jobs).
// -count N repeats each case N times. A 1M-passage index:
//
//	ragbench index bench --n 1000000 --queries 0 --peer-queries 0 --dir DIR
//	go test ./harness/retrieval/index -run '^$' -bench OpenBM25 -benchtime 1x -count 5 -open-index DIR/index
func BenchmarkOpenBM25(b *testing.B) {
	if testing.Short() {
		b.Skip("builds an index; skipped with -short")
	}
	dir := *openIndex
	if dir == "" {
		dir = filepath.Join(b.TempDir(), "bm25")
		syn := bm25.NewSynth(1)
		docs := make([]corpus.Document, *openPassages)
		for i := range docs {
			docs[i] = corpus.Document{ID: fmt.Sprint(i), Title: syn.Word(), Text: string(syn.Passage(nil, 100))}
		}
		if _, err := bm25.BuildDocs(context.Background(), docs, dir, bm25.Options{}); err != nil {
			b.Fatal(err)
		}
	}
	query := bm25.NewSynth(2).Query()
	ctx := context.Background()
	for _, c := range []struct {
		name string
		skip bool
		cold bool
	}{
		{"checksums/warm", false, false},
		{"skip-checksums/warm", true, false},
		{"checksums/cold", false, true},
		{"skip-checksums/cold", true, true},
	} {
		b.Run(c.name, func(b *testing.B) {
			var openTime, searchTime, cpu time.Duration
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				if c.cold {
					if err := pagecache.DropDir(dir); errors.Is(err, errors.ErrUnsupported) {
						b.Skip("no page cache eviction on this platform")
					} else if err != nil {
						b.Fatal(err)
					}
				}
				cpu0 := rusage.CPUTime()
				t0 := time.Now()
				b.StartTimer()
				ix, err := Open(ctx, Config{Kind: KindBM25, Dir: dir, BM25: BM25Config{SkipChecksums: c.skip}})
				if err != nil {
					b.Fatal(err)
				}
				t1 := time.Now()
				hits, err := ix.Retrieve(ctx, query, 10)
				b.StopTimer()
				t2 := time.Now()
				cpu += rusage.CPUTime() - cpu0
				if err != nil || len(hits) == 0 {
					b.Fatalf("search %q: %d hits, %v", query, len(hits), err)
				}
				if err := ix.Close(); err != nil {
					b.Fatal(err)
				}
				openTime += t1.Sub(t0)
				searchTime += t2.Sub(t1)
			}
			b.ReportMetric(openTime.Seconds()*1000/float64(b.N), "open-ms")
			b.ReportMetric(searchTime.Seconds()*1000/float64(b.N), "search-ms")
			b.ReportMetric(cpu.Seconds()*1000/float64(b.N), "cpu-ms/op")
		})
	}
}
