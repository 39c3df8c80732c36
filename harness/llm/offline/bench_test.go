package offline

import (
	"context"
	"sort"
	"testing"
	"time"

	"github.com/ragbench/ragbench/harness/llm"
	"github.com/ragbench/ragbench/methods/prompts"
)

// BenchmarkGenerate times the reader on the 300 2WikiMultihopQA gold-context prompts (6 exemplars,
// 10 passages each), with one hop and with two as peers in the same run, and reports p50/p99 per
// call:
//
//	go test ./harness/llm/offline -run '^$' -bench Generate -benchtime 600x
func BenchmarkGenerate(b *testing.B) {
	bld := newPromptBuilderB(b)
	var ps []string
	for _, ex := range loadExamplesB(b, "2wikimultihopqa/dev-00000-of-00001.parquet") {
		ps = append(ps, bld.build("2wikimultihopqa", ex.Question, prompts.Passages(ex)))
	}
	for _, hops := range []int{1, 2} {
		b.Run(map[int]string{1: "hops=1", 2: "hops=2"}[hops], func(b *testing.B) {
			r := New(Options{MaxHops: hops})
			lat := make([]time.Duration, 0, b.N)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				start := time.Now()
				if _, err := r.Generate(context.Background(), llm.Request{Prompt: ps[i%len(ps)], Logprobs: 1}); err != nil {
					b.Fatal(err)
				}
				lat = append(lat, time.Since(start))
			}
			b.StopTimer()
			sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
			b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-µs")
			b.ReportMetric(float64(lat[min(len(lat)-1, len(lat)*99/100)].Microseconds()), "p99-µs")
		})
	}
}
