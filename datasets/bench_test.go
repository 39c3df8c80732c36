package datasets

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"sort"
	"strconv"
	"testing"
	"time"

	"github.com/ragbench/ragbench/internal/testenv"
)

// Loading benchmarks. Each reports p50 and p99 of the per-load latency and rows per second, and a peer
// in the same run decodes the same rows from the official JSON release with encoding/json, so that the
// parquet figures can be judged against the machine's current speed. The budget: NQ-open
// (3,610 rows) and HotpotQA fullwiki (500 rows) each load in under 200 ms.
//
//	go test ./datasets -run XXX -bench Load -benchtime 30x

func reportLatency(b *testing.B, times []time.Duration, rows int) {
	if len(times) == 0 {
		return
	}
	sort.Slice(times, func(i, j int) bool { return times[i] < times[j] })
	q := func(p float64) float64 {
		return float64(times[int(p*float64(len(times)-1))].Microseconds()) / 1000
	}
	var sum time.Duration
	for _, d := range times {
		sum += d
	}
	b.ReportMetric(q(0.5), "p50-ms")
	b.ReportMetric(q(0.99), "p99-ms")
	b.ReportMetric(float64(rows*len(times))/sum.Seconds(), "rows/s")
}

func benchLoad(b *testing.B, rel string, rows int) {
	path := testenv.Data(b, rel)
	b.ReportAllocs()
	var times []time.Duration
	for b.Loop() {
		t0 := time.Now()
		ds, err := Load(context.Background(), path, LoadOptions{})
		if err != nil {
			b.Fatal(err)
		}
		times = append(times, time.Since(t0))
		if len(ds.Examples) != rows {
			b.Fatalf("%d rows, want %d", len(ds.Examples), rows)
		}
	}
	reportLatency(b, times, rows)
}

func BenchmarkLoadNQOpen(b *testing.B) {
	benchLoad(b, "nq_open/validation-00000-of-00001.parquet", 3610)
}

func BenchmarkLoadHotpotQAFullwiki(b *testing.B) {
	benchLoad(b, "hotpotqa/fullwiki/validation-00000-of-00001.parquet", 500)
}

func BenchmarkLoadHotpotQADistractor(b *testing.B) {
	benchLoad(b, "hotpotqa/distractor/validation-00000-of-00001.parquet", 100)
}

func BenchmarkLoad2Wiki(b *testing.B) {
	benchLoad(b, "2wikimultihopqa/dev-00000-of-00001.parquet", 300)
}

func BenchmarkLoadPubMedQA(b *testing.B) {
	benchLoad(b, "pubmedqa/pqa_labeled/train-00000-of-00001.parquet", 1000)
}

func BenchmarkLoadNQLongDoc(b *testing.B) {
	benchLoad(b, "nq_longdoc/validation-00000-of-00001.parquet", 109)
}

// Peers: the same rows decoded from the official JSON with encoding/json into Examples.

func BenchmarkPeerJSONNQOpen(b *testing.B) {
	path := testenv.Data(b, "raw/nq_open/NQ-open.dev.jsonl")
	b.ReportAllocs()
	var times []time.Duration
	for b.Loop() {
		t0 := time.Now()
		f, err := os.Open(path)
		if err != nil {
			b.Fatal(err)
		}
		sc := bufio.NewScanner(f)
		var exs []Example
		for sc.Scan() {
			var r struct {
				Question string   `json:"question"`
				Answer   []string `json:"answer"`
			}
			if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
				b.Fatal(err)
			}
			exs = append(exs, Example{ID: strconv.Itoa(len(exs)), Question: r.Question, Answers: r.Answer})
		}
		f.Close()
		times = append(times, time.Since(t0))
		if len(exs) != 3610 {
			b.Fatalf("%d rows", len(exs))
		}
	}
	reportLatency(b, times, 3610)
}

func BenchmarkPeerJSONHotpotQAFullwiki(b *testing.B) {
	path := testenv.Data(b, "raw/hotpotqa/hotpot_dev_fullwiki_sample.json")
	b.ReportAllocs()
	var times []time.Duration
	for b.Loop() {
		t0 := time.Now()
		f, err := os.Open(path)
		if err != nil {
			b.Fatal(err)
		}
		var exs []Example
		err = parseHotpotQA(context.Background(), f, path, func(r hotpotRow) error {
			ex := Example{ID: r.ID, Question: r.Question, Answers: []string{r.Answer}, Type: r.Type, Level: r.Level}
			for i, t := range r.Context.Title {
				ex.Contexts = append(ex.Contexts, Passage{Title: t, Sentences: r.Context.Sentences[i]})
			}
			exs = append(exs, ex)
			return nil
		})
		f.Close()
		if err != nil {
			b.Fatal(err)
		}
		times = append(times, time.Since(t0))
		if len(exs) != 500 {
			b.Fatalf("%d rows", len(exs))
		}
	}
	reportLatency(b, times, 500)
}
