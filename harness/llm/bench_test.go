package llm_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/ragbench/ragbench/harness/llm"
	"github.com/ragbench/ragbench/harness/llm/llmtest"
)

// reportPercentiles adds p50 and p99 (µs) of d to the benchmark.
func reportPercentiles(b *testing.B, d []time.Duration) {
	if len(d) == 0 {
		return
	}
	slices.Sort(d)
	b.ReportMetric(float64(d[len(d)/2].Nanoseconds())/1e3, "p50-µs")
	b.ReportMetric(float64(d[len(d)*99/100].Nanoseconds())/1e3, "p99-µs")
}

var benchID = llm.Identity{Backend: "openai", BaseURL: "http://127.0.0.1:8000/v1", Model: "bench"}

func benchRequest(i int) llm.Request {
	seed := 0
	return llm.Request{Endpoint: llm.Completions, Prompt: "Question " + strconv.Itoa(i) + ": who wrote it?\nAnswer:", MaxTokens: 32, Seed: &seed, Logprobs: 5}
}

// buildStore makes (once, kept in the temp directory between runs) a store of n entries.
func buildStore(b *testing.B, n int) *llm.Store {
	path := filepath.Join(os.TempDir(), fmt.Sprintf("ragbench-llm-bench-%d.sqlite", n))
	st, err := llm.OpenStore(path)
	if err != nil {
		b.Fatal(err)
	}
	have, err := st.Len(context.Background())
	if err != nil {
		b.Fatal(err)
	}
	if have < int64(n) {
		b.Logf("building %s with %d entries (kept for later runs)", path, n)
		resp := llm.Response{Text: " William Shakespeare", Usage: llm.Usage{PromptTokens: 12, CompletionTokens: 3}, FinishReason: "stop",
			Tokens: []llm.TokenLogprob{{Text: " William", Logprob: -0.1}, {Text: " Shakespeare", Logprob: -0.01}}}
		const batch = 20000
		for start := int(have); start < n; start += batch {
			var es []llm.Entry
			for i := start; i < min(start+batch, n); i++ {
				r := benchRequest(i)
				es = append(es, llm.Entry{Key: llm.Key(benchID, r), ID: benchID, Request: r, Response: resp})
			}
			if err := st.PutMany(context.Background(), es); err != nil {
				b.Fatal(err)
			}
		}
	}
	return st
}

// BenchmarkCacheLookup measures Store.Get of present keys at 10k entries (the peer) and 1M entries.
//
//	go test ./harness/llm -run '^$' -bench CacheLookup -benchtime 20000x
func BenchmarkCacheLookup(b *testing.B) {
	for _, n := range []int{10_000, 1_000_000} {
		b.Run(fmt.Sprintf("entries=%d", n), func(b *testing.B) {
			st := buildStore(b, n)
			defer st.Close()
			keys := make([][32]byte, 4096)
			for i := range keys {
				keys[i] = llm.Key(benchID, benchRequest((i*7919)%n))
			}
			ctx := context.Background()
			d := make([]time.Duration, 0, b.N)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				t0 := time.Now()
				_, ok, err := st.Get(ctx, keys[i%len(keys)])
				d = append(d, time.Since(t0))
				if err != nil || !ok {
					b.Fatalf("get: %v %v", ok, err)
				}
			}
			b.StopTimer()
			reportPercentiles(b, d)
		})
	}
}

// BenchmarkClientOverhead compares a full Generate (request building, go-openai, retries and limits
// machinery, tolerant decoding of 5 alternatives per token) with a bare net/http POST of the same body
// to the same in-process server (the peer). The difference is the client's overhead per call.
//
//	go test ./harness/llm -run '^$' -bench ClientOverhead -benchtime 3000x
func BenchmarkClientOverhead(b *testing.B) {
	srv := llmtest.New(b, llmtest.VLLM)
	srv.Record = false
	srv.Reply = func(string) string { return " William Shakespeare wrote it in 1600 or so" }
	req := llm.Request{Prompt: "Q: who wrote Hamlet?\nA:", MaxTokens: 16, Logprobs: 5}
	b.Run("client", func(b *testing.B) {
		b.Setenv(llm.EnvAPIKey, "")
		c, err := llm.NewOpenAI(llm.Config{BaseURL: srv.BaseURL(), Model: "m"})
		if err != nil {
			b.Fatal(err)
		}
		d := make([]time.Duration, 0, b.N)
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			t0 := time.Now()
			if _, err := c.Generate(context.Background(), req); err != nil {
				b.Fatal(err)
			}
			d = append(d, time.Since(t0))
		}
		b.StopTimer()
		reportPercentiles(b, d)
	})
	b.Run("raw-http", func(b *testing.B) {
		body := []byte(`{"model":"m","prompt":"Q: who wrote Hamlet?\nA:","max_tokens":16,"temperature":0,"seed":0,"logprobs":5}`)
		hc := &http.Client{}
		d := make([]time.Duration, 0, b.N)
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			t0 := time.Now()
			resp, err := hc.Post(srv.BaseURL()+"/completions", "application/json", bytes.NewReader(body))
			if err != nil {
				b.Fatal(err)
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			d = append(d, time.Since(t0))
		}
		b.StopTimer()
		reportPercentiles(b, d)
	})
}

// BenchmarkThroughput64 runs 64 concurrent workers against a server that takes 100 ms per call; the
// ideal is 640 calls/s.
//
//	go test ./harness/llm -run '^$' -bench Throughput64 -benchtime 1920x
func BenchmarkThroughput64(b *testing.B) {
	srv := llmtest.New(b, llmtest.VLLM)
	srv.Record = false
	srv.Delay = 100 * time.Millisecond
	b.Setenv(llm.EnvAPIKey, "")
	c, err := llm.NewOpenAI(llm.Config{BaseURL: srv.BaseURL(), Model: "m", Concurrency: 64})
	if err != nil {
		b.Fatal(err)
	}
	const workers = 64
	var next sync.WaitGroup
	jobs := make(chan int)
	var mu sync.Mutex
	var d []time.Duration
	b.ResetTimer()
	start := time.Now()
	for w := 0; w < workers; w++ {
		next.Add(1)
		go func() {
			defer next.Done()
			for i := range jobs {
				t0 := time.Now()
				if _, err := c.Generate(context.Background(), llm.Request{Prompt: "q " + strconv.Itoa(i), MaxTokens: 8, Logprobs: 1}); err != nil {
					b.Error(err)
				}
				el := time.Since(t0)
				mu.Lock()
				d = append(d, el)
				mu.Unlock()
			}
		}()
	}
	for i := 0; i < b.N; i++ {
		jobs <- i
	}
	close(jobs)
	next.Wait()
	el := time.Since(start)
	b.StopTimer()
	b.ReportMetric(float64(b.N)/el.Seconds(), "calls/s")
	b.ReportMetric(float64(b.N)/el.Seconds()/640*100, "%-of-640")
	reportPercentiles(b, d)
}
