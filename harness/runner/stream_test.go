package runner

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ragbench/ragbench/datasets"
	"github.com/ragbench/ragbench/harness/llm"
	"github.com/ragbench/ragbench/methods"
)

// fakeGen answers "out:<prompt>" after a delay that varies with the prompt, fails prompts listed in
// fail, and tracks concurrency.
type fakeGen struct {
	fail  map[string]bool
	delay func(prompt string) time.Duration
	calls atomic.Int64

	mu            sync.Mutex
	inFlight, max int
}

func (g *fakeGen) Generate(ctx context.Context, req llm.Request) (llm.Response, error) {
	g.calls.Add(1)
	g.mu.Lock()
	g.inFlight++
	g.max = max(g.max, g.inFlight)
	g.mu.Unlock()
	defer func() { g.mu.Lock(); g.inFlight--; g.mu.Unlock() }()
	if g.delay != nil {
		select {
		case <-time.After(g.delay(req.Prompt)):
		case <-ctx.Done():
			return llm.Response{}, ctx.Err()
		}
	}
	if g.fail[req.Prompt] {
		return llm.Response{}, fmt.Errorf("fake failure for %s", req.Prompt)
	}
	return llm.Response{Text: "out:" + req.Prompt + " So the answer is A" + req.Prompt + ".", Model: "fake", Usage: llm.Usage{PromptTokens: 1, CompletionTokens: 2}, Latency: time.Millisecond}, nil
}

// echoMethod prompts with the question and extracts the text after "answer is ".
type echoMethod struct{}

func (echoMethod) Name() string { return "echo" }
func (echoMethod) Answer(ctx context.Context, env methods.Env, ex datasets.Example) (methods.Prediction, error) {
	resp, err := env.Generator.Generate(ctx, llm.Request{Prompt: ex.Question})
	if err != nil {
		return methods.Prediction{}, err
	}
	_, after, _ := strings.Cut(resp.Text, "answer is ")
	return methods.Prediction{Raw: resp.Text, Answer: strings.TrimSuffix(after, ".")}, nil
}

func streamExamples(n int) []datasets.Example {
	out := make([]datasets.Example, n)
	for i := range out {
		id := fmt.Sprintf("q%03d", i)
		out[i] = datasets.Example{ID: id, Question: id, Answers: []string{"A" + id}}
	}
	return out
}

func streamOptions(g llm.Generator, workers int) StreamOptions {
	return StreamOptions{Method: echoMethod{}, Env: methods.Env{Generator: g}, Dataset: "D", Workers: workers}
}

// TestStreamOrderAndBound: records come out in input order although later items finish first, and
// no more than Workers calls run at once; the projection carries the call's fields over.
func TestStreamOrderAndBound(t *testing.T) {
	for _, workers := range []int{1, 3, 8} {
		exs := streamExamples(60)
		// Within each block of ten, earlier items take longer (9 ms down to 0).
		g := &fakeGen{delay: func(p string) time.Duration { return time.Duration(9-int(p[3]-'0')) * time.Millisecond }}
		var got, want []string
		st, err := Stream(context.Background(), exs, streamOptions(g, workers), func(a Answered) error {
			r := Project(a, "fake", "")
			got = append(got, r.ID)
			if r.Prediction != "A"+r.ID || r.Model != "fake" || r.Backend != "fake" || r.Usage.CompletionTokens != 2 || r.LatencyMS != 1 {
				t.Errorf("record %+v: fields not carried over", r)
			}
			if a.Record.Scores["em"] != 1 || a.Record.Method != "echo" || a.Record.Dataset != "D" {
				t.Errorf("record %+v: not the runner's record", a.Record)
			}
			return nil
		})
		if err != nil || st.Written != len(exs) || st.Failed != 0 {
			t.Fatalf("workers %d: %+v %v", workers, st, err)
		}
		for _, ex := range exs {
			want = append(want, ex.ID)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("workers %d: order %v", workers, got)
		}
		if m := g.max; m > workers {
			t.Fatalf("workers %d: %d calls at once", workers, m)
		}
	}
}

// TestStreamErrorsRecorded: a failing example is recorded with its error and the run goes on.
func TestStreamErrorsRecorded(t *testing.T) {
	exs := streamExamples(10)
	g := &fakeGen{fail: map[string]bool{"q003": true, "q007": true}}
	var recs []PredictionLine
	st, err := Stream(context.Background(), exs, streamOptions(g, 4), func(a Answered) error { recs = append(recs, Project(a, "fake", "m")); return nil })
	if err != nil || st.Written != 10 || st.Failed != 2 {
		t.Fatalf("%+v %v: want 10 written, 2 failed, no run error", st, err)
	}
	if !strings.Contains(st.FirstError, "q003: ") || !strings.Contains(st.FirstError, "fake failure for q003") {
		t.Errorf("FirstError %q: want the first failed example's id and cause (said on stderr)", st.FirstError)
	}
	for _, r := range recs {
		failed := r.ID == "q003" || r.ID == "q007"
		if failed != (r.Error != "") || (failed && (r.Prediction != "" || r.Model != "m" || !strings.Contains(r.Error, "fake failure for "+r.ID))) {
			t.Fatalf("record %+v", r)
		}
	}
}

// TestStreamCancel: cancelling stops the run promptly; what was written is an in-order prefix with no
// error records made by the cancellation.
//
// The cancel comes once the fifth record is written, while q005-q011 are in flight or next; those
// take 5 s unless cancelled, so a run that waited for its calls instead of cancelling them would stop
// seconds late. The bound, 2 s, is far above what a loaded machine adds (it was 200 ms over 20 ms
// calls, which a stalled process could miss) and far below what the bug costs.
func TestStreamCancel(t *testing.T) {
	exs := streamExamples(200)
	g := &fakeGen{delay: func(p string) time.Duration {
		if i, _ := strconv.Atoi(p[1:]); i >= 5 && i < 12 {
			return 5 * time.Second
		}
		return 20 * time.Millisecond
	}}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var got []methods.Record
	var cancelledAt time.Time
	_, err := Stream(ctx, exs, streamOptions(g, 4), func(a Answered) error {
		got = append(got, a.Record)
		if len(got) == 5 {
			cancelledAt = time.Now()
			cancel()
		}
		return nil
	})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err %v, want context.Canceled", err)
	}
	if el := time.Since(cancelledAt); el > 2*time.Second {
		t.Fatalf("stopped %v after the cancel", el)
	}
	if len(got) == 0 || len(got) == len(exs) {
		t.Fatalf("%d records written; want some but not all", len(got))
	}
	for i, r := range got {
		if r.ID != exs[i].ID || r.Error != "" {
			t.Fatalf("record %d = %+v: want %s without error", i, r, exs[i].ID)
		}
	}
}

// TestStreamWriteError: a failing writer stops the run with its error.
func TestStreamWriteError(t *testing.T) {
	n := 0
	_, err := Stream(context.Background(), streamExamples(50), streamOptions(&fakeGen{}, 2), func(Answered) error {
		if n++; n == 5 {
			return errors.New("disk full")
		}
		return nil
	})
	if err == nil || !strings.Contains(err.Error(), "disk full") || !strings.Contains(err.Error(), "q004") {
		t.Fatalf("err %v: want the writer's error naming the record", err)
	}
}

// BenchmarkStream measures the pool against a simulated 20 ms model, with 1, 8 and 32 workers as
// peers in the same run; the ideal is workers/0.02 s = 50, 400 and 1,600 examples/s:
//
//	go test ./harness/runner -run '^$' -bench Stream -benchtime 3x
func BenchmarkStream(b *testing.B) {
	exs := streamExamples(320)
	for _, w := range []int{1, 8, 32} {
		b.Run(fmt.Sprintf("workers=%d", w), func(b *testing.B) {
			g := &fakeGen{delay: func(string) time.Duration { return 20 * time.Millisecond }}
			n := exs
			if w == 1 {
				n = exs[:40]
			}
			start := time.Now()
			for range b.N {
				if _, err := Stream(context.Background(), n, streamOptions(g, w), func(Answered) error { return nil }); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(len(n)*b.N)/time.Since(start).Seconds(), "examples/s")
		})
	}
}
