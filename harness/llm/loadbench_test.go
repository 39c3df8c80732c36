package llm

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
)

// flakyGen fails the requests whose prompt names a multiple of 5 and records the prompts it saw.
type flakyGen struct {
	mu      sync.Mutex
	prompts []string
}

func (f *flakyGen) Generate(ctx context.Context, req Request) (Response, error) {
	p := req.Prompt
	if req.Endpoint == Chat {
		p = req.Messages[0].Content
	}
	f.mu.Lock()
	f.prompts = append(f.prompts, p)
	f.mu.Unlock()
	for _, n := range []string{"Question 0:", "Question 5:", "Question 10:"} {
		if strings.HasPrefix(p, n) {
			return Response{}, errors.New("boom " + n)
		}
	}
	return Response{Text: "x"}, nil
}

func TestBench(t *testing.T) {
	for _, chat := range []bool{false, true} {
		g := &flakyGen{}
		res, err := Bench(context.Background(), g, BenchConfig{Requests: 12, Workers: 3, MaxTokens: 4, Chat: chat})
		if err != nil {
			t.Fatal(err)
		}
		// 12 distinct requests, each sent once; 0, 5 and 10 fail.
		slices.Sort(g.prompts)
		if len(g.prompts) != 12 || len(slices.Compact(g.prompts)) != 12 {
			t.Fatalf("chat %v: prompts %q, want 12 distinct", chat, g.prompts)
		}
		if res.Failed != 3 || len(res.Latencies) != 9 || res.FirstErr == nil || !slices.IsSorted(res.Latencies) {
			t.Fatalf("chat %v: %d failed, %d latencies (sorted %v), first error %v", chat, res.Failed, len(res.Latencies), slices.IsSorted(res.Latencies), res.FirstErr)
		}
		if res.Percentile(1) != res.Latencies[8] || res.Percentile(0) != res.Latencies[0] {
			t.Fatalf("percentiles 0 and 1 must be the min and max")
		}
	}
	if _, err := Bench(context.Background(), &flakyGen{}, BenchConfig{Requests: 0, Workers: 1}); err == nil {
		t.Error("no requests must be an error")
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Bench(ctx, &flakyGen{}, BenchConfig{Requests: 100, Workers: 2}); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: err %v", err)
	}
	if (BenchResult{}).Percentile(0.5) != 0 {
		t.Error("no latencies: percentile 0")
	}
}
