package predict

import (
	"context"
	"fmt"
	"testing"
	"time"
)

// BenchmarkRun measures the pool against a simulated 20 ms model, with 1, 8 and 32 workers as peers
// in the same run; the ideal is workers/0.02 s = 50, 400 and 1,600 examples/s:
//
//	go test ./harness/predict -run '^$' -bench Run -benchtime 3x
func BenchmarkRun(b *testing.B) {
	items := ids(320)
	for _, w := range []int{1, 8, 32} {
		b.Run(fmt.Sprintf("workers=%d", w), func(b *testing.B) {
			g := &fakeGen{delay: func(string) time.Duration { return 20 * time.Millisecond }}
			n := items
			if w == 1 {
				n = items[:40]
			}
			start := time.Now()
			for range b.N {
				if _, err := Run(context.Background(), n, options(g, n, w), func(Record) error { return nil }); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(len(n)*b.N)/time.Since(start).Seconds(), "examples/s")
		})
	}
}
