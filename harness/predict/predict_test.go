package predict

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ragbench/ragbench/harness/llm"
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

func ids(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("q%03d", i)
	}
	return out
}

func options(g llm.Generator, items []string, workers int) Options {
	return Options{
		Generator: g,
		Prompt:    func(i int) (string, error) { return items[i], nil },
		Extract: func(raw string) string {
			_, after, _ := strings.Cut(raw, "answer is ")
			return strings.TrimSuffix(after, ".")
		},
		Backend: "fake", Workers: workers,
	}
}

// TestRunOrderAndBound: records come out in input order although later items finish first, and
// no more than Workers calls run at once.
func TestRunOrderAndBound(t *testing.T) {
	for _, workers := range []int{1, 3, 8} {
		items := ids(60)
		// Within each block of ten, earlier items take longer (9 ms down to 0).
		g := &fakeGen{delay: func(p string) time.Duration { return time.Duration(9-int(p[3]-'0')) * time.Millisecond }}
		var got []string
		st, err := Run(context.Background(), items, options(g, items, workers), func(r Record) error {
			got = append(got, r.ID)
			if r.Prediction != "A"+r.ID || r.Model != "fake" || r.Backend != "fake" || r.Usage.CompletionTokens != 2 || r.LatencyMS != 1 {
				t.Errorf("record %+v: fields not carried over", r)
			}
			return nil
		})
		if err != nil || st.Written != len(items) || st.Failed != 0 {
			t.Fatalf("workers %d: %+v %v", workers, st, err)
		}
		if !reflect.DeepEqual(got, items) {
			t.Fatalf("workers %d: order %v", workers, got)
		}
		if m := g.max; m > workers {
			t.Fatalf("workers %d: %d calls at once", workers, m)
		}
	}
}

// TestRunErrorsRecorded: a failing example is recorded with its error and the run goes on.
func TestRunErrorsRecorded(t *testing.T) {
	items := ids(10)
	g := &fakeGen{fail: map[string]bool{"q003": true, "q007": true}}
	var recs []Record
	st, err := Run(context.Background(), items, options(g, items, 4), func(r Record) error { recs = append(recs, r); return nil })
	if err != nil || st.Written != 10 || st.Failed != 2 {
		t.Fatalf("%+v %v: want 10 written, 2 failed, no run error", st, err)
	}
	if !strings.Contains(st.FirstError, "q003: ") || !strings.Contains(st.FirstError, "fake failure for q003") {
		t.Errorf("FirstError %q: want the first failed example's id and cause (said on stderr)", st.FirstError)
	}
	for _, r := range recs {
		failed := r.ID == "q003" || r.ID == "q007"
		if failed != (r.Error != "") || (failed && (r.Prediction != "" || !strings.Contains(r.Error, "fake failure for "+r.ID))) {
			t.Fatalf("record %+v", r)
		}
	}
}

// TestRunCancel: cancelling stops the run promptly; what was written is an in-order prefix with no
// error records made by the cancellation.
func TestRunCancel(t *testing.T) {
	items := ids(200)
	g := &fakeGen{delay: func(string) time.Duration { return 20 * time.Millisecond }}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var got []Record
	var cancelledAt time.Time
	_, err := Run(ctx, items, options(g, items, 4), func(r Record) error {
		got = append(got, r)
		if len(got) == 5 {
			cancelledAt = time.Now()
			cancel()
		}
		return nil
	})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err %v, want context.Canceled", err)
	}
	if el := time.Since(cancelledAt); el > 200*time.Millisecond {
		t.Fatalf("stopped %v after the cancel", el)
	}
	if len(got) == 0 || len(got) == len(items) {
		t.Fatalf("%d records written; want some but not all", len(got))
	}
	for i, r := range got {
		if r.ID != items[i] || r.Error != "" {
			t.Fatalf("record %d = %+v: want %s without error", i, r, items[i])
		}
	}
}

// TestRunWriteError: a failing writer stops the run with its error.
func TestRunWriteError(t *testing.T) {
	items := ids(50)
	n := 0
	_, err := Run(context.Background(), items, options(&fakeGen{}, items, 2), func(Record) error {
		if n++; n == 5 {
			return errors.New("disk full")
		}
		return nil
	})
	if err == nil || !strings.Contains(err.Error(), "disk full") || !strings.Contains(err.Error(), "q004") {
		t.Fatalf("err %v: want the writer's error naming the record", err)
	}
}

func TestReadDone(t *testing.T) {
	cases := []struct {
		name, content, reason string
		ids                   []string
		failed                int
		size                  int // -1: the whole content
		newline               bool
		err                   string
	}{
		{"empty", "", "an empty file is nothing done", nil, 0, -1, false, ""},
		{"done and failed", `{"id":"a","prediction":"x"}` + "\n" + `{"id":"b","prediction":"","error":"boom"}` + "\n",
			"a failed record is not done", []string{"a"}, 1, -1, false, ""},
		{"retried", `{"id":"b","error":"boom"}` + "\n" + `{"id":"b","prediction":"y"}` + "\n", "a later success makes it done", []string{"b"}, 1, -1, false, ""},
		{"cut short", `{"id":"a","prediction":"x"}` + "\n" + `{"id":"b","predic`, "a killed writer's half line is dropped", []string{"a"}, 0, 28, false, ""},
		{"no final newline", `{"id":"a","prediction":"x"}`, "a whole last record without newline needs one before appending", []string{"a"}, 0, -1, true, ""},
		{"bad middle line", `{"id":"a"}` + "\n" + "garbage\n" + `{"id":"b"}` + "\n", "a malformed complete line is an error", nil, 0, 0, false, ":2: not a prediction record"},
		{"no id", `{"prediction":"x"}` + "\n", "a record without id is an error", nil, 0, 0, false, `:1: not a prediction record: no "id" field`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "p.jsonl")
			if err := os.WriteFile(path, []byte(c.content), 0o644); err != nil {
				t.Fatal(err)
			}
			d, err := ReadDone(path)
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("err %v, want %q (%s)", err, c.err, c.reason)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for id := range d.IDs {
				got = append(got, id)
			}
			size := int64(c.size)
			if c.size < 0 {
				size = int64(len(c.content))
			}
			if !reflect.DeepEqual(got, c.ids) && !(len(got) == 0 && len(c.ids) == 0) || d.Failed != c.failed || d.Size != size || d.NeedNewline != c.newline {
				t.Fatalf("got ids %v failed %d size %d newline %v; want %v %d %d %v (%s)", got, d.Failed, d.Size, d.NeedNewline, c.ids, c.failed, size, c.newline, c.reason)
			}
		})
	}
	if d, err := ReadDone(filepath.Join(t.TempDir(), "missing.jsonl")); err != nil || len(d.IDs) != 0 {
		t.Fatalf("a missing file: %v %v, want empty", d, err)
	}
}

// FuzzReadDone: any file content gives an error or a Done whose Size is a line boundary within the
// file, never a panic. Seeds: testdata/fuzz/FuzzReadDone.
func FuzzReadDone(f *testing.F) {
	f.Add([]byte(`{"id":"a","prediction":"x"}` + "\n" + `{"id":"b","error":"e"}` + "\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		path := filepath.Join(t.TempDir(), "p.jsonl")
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		d, err := ReadDone(path)
		if err != nil {
			return
		}
		if d.Size < 0 || d.Size > int64(len(data)) || (d.Size > 0 && data[d.Size-1] != '\n' && !d.NeedNewline) {
			t.Fatalf("Size %d of %d bytes (NeedNewline %v)", d.Size, len(data), d.NeedNewline)
		}
		if len(d.IDs) > d.Records {
			t.Fatalf("%d done ids from %d records", len(d.IDs), d.Records)
		}
	})
}
