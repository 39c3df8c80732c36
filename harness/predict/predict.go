// Package predict runs one generator over a list of prompts in a bounded worker pool and writes one
// JSONL record per example, in input order whatever the scheduling: the extracted prediction, the
// raw output, backend and model, token usage, latency, whether the cache answered, and the error of
// a failed call. A failed example is recorded and the run goes on; cancellation stops it promptly
// with every finished record before the cut written. ReadDone reads such a file back, and OpenResume
// opens it for appending the examples still to do.
//
// It does not build prompts (methods/prompts does), load datasets or score (metrics does); the
// records are what `ragbench score` reads.
package predict

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/ragbench/ragbench/harness/llm"
)

// Record is one line of a predictions file.
type Record struct {
	ID string `json:"id"`
	// Prediction is the answer extracted from RawOutput ("" when Error is set).
	Prediction string `json:"prediction"`
	RawOutput  string `json:"raw_output"`
	// Backend is the llm backend ("openai", "offline"); Model the model that answered (for the
	// offline reader, "offline reader (no LLM)").
	Backend   string    `json:"backend"`
	Model     string    `json:"model"`
	Usage     llm.Usage `json:"usage"`
	LatencyMS float64   `json:"latency_ms"`
	Cached    bool      `json:"cached"`
	Retries   int       `json:"retries,omitempty"`
	// Error is the failure of this example ("" when it succeeded). `ragbench score` counts an
	// errored record as a missing prediction, and a resumed run retries it.
	Error string `json:"error,omitempty"`
}

// Options configure Run.
type Options struct {
	// Generator answers every request; it must be safe for concurrent use.
	Generator llm.Generator
	// Request is the template of every request; Run sets its Prompt (for llm.Chat, appends the prompt
	// as a user message).
	Request llm.Request
	// Prompt returns the prompt of item i (called from the workers).
	Prompt func(i int) (string, error)
	// Extract turns raw output into the prediction.
	Extract func(raw string) string
	// Backend and Model label the records (Model when the response names none).
	Backend, Model string
	// Workers bounds concurrent calls (default 1).
	Workers int
	// Progress receives "n/N" progress lines (nil: none), at most every ProgressEvery (default 2 s)
	// and once at the end.
	Progress      io.Writer
	ProgressEvery time.Duration
	// Label names the run in progress lines.
	Label string
}

// Stats summarise a run.
type Stats struct {
	Written, Failed int
	Elapsed         time.Duration
	// FirstError is the first failed example in order, "ID: error" ("" when none failed).
	FirstError string
}

// Run generates for ids (in order) and calls write with each record in that order; write's error
// stops the run. It returns when every record is written, when ctx is cancelled (ctx.Err(), with the
// records finished in order before the cut written), or when write fails.
func Run(ctx context.Context, ids []string, o Options, write func(Record) error) (Stats, error) {
	if o.Generator == nil || o.Prompt == nil || o.Extract == nil {
		return Stats{}, errors.New("predict: Generator, Prompt and Extract are required")
	}
	workers := max(o.Workers, 1)
	every := o.ProgressEvery
	if every <= 0 {
		every = 2 * time.Second
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()

	// window bounds started-but-unwritten items, so one slow item cannot make the reorder buffer grow.
	window := make(chan struct{}, 4*workers)
	jobs := make(chan int)
	type result struct {
		i   int
		rec Record
	}
	results := make(chan result, workers)
	go func() {
		defer close(jobs)
		for i := range ids {
			select {
			case window <- struct{}{}:
			case <-ctx.Done():
				return
			}
			select {
			case jobs <- i:
			case <-ctx.Done():
				return
			}
		}
	}()
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range jobs {
				rec := o.one(ctx, i, ids[i])
				select {
				case results <- result{i, rec}:
				case <-ctx.Done():
					return
				}
			}
		}()
	}
	go func() { wg.Wait(); close(results) }()

	start := time.Now()
	var st Stats
	pending := map[int]Record{}
	next := 0
	last := start
	progress := func() {
		if o.Progress == nil {
			return
		}
		el := time.Since(start)
		rate := float64(st.Written) / max(el.Seconds(), 1e-9)
		fmt.Fprintf(o.Progress, "%s: %d/%d (%.1f/s, %d failed, %v)\n", o.Label, st.Written, len(ids), rate, st.Failed, el.Round(time.Millisecond))
	}
	var werr error
	for r := range results {
		if werr != nil || ctx.Err() != nil {
			continue // drain
		}
		pending[r.i] = r.rec
		for {
			rec, ok := pending[next]
			if !ok {
				break
			}
			delete(pending, next)
			if rec.Error != "" && ctx.Err() != nil {
				break // a call cut short by cancellation is not a result
			}
			if err := write(rec); err != nil {
				werr = fmt.Errorf("write record %s: %w", rec.ID, err)
				cancel()
				break
			}
			next++
			st.Written++
			if rec.Error != "" {
				st.Failed++
				if st.FirstError == "" {
					st.FirstError = rec.ID + ": " + rec.Error
				}
			}
			<-window
		}
		if time.Since(last) >= every {
			last = time.Now()
			progress()
		}
	}
	st.Elapsed = time.Since(start)
	progress()
	if werr != nil {
		return st, werr
	}
	if err := ctx.Err(); err != nil && st.Written < len(ids) {
		return st, err
	}
	return st, nil
}

// one answers item i; a failure becomes the record's Error.
func (o *Options) one(ctx context.Context, i int, id string) Record {
	rec := Record{ID: id, Backend: o.Backend, Model: o.Model}
	prompt, err := o.Prompt(i)
	if err != nil {
		rec.Error = fmt.Sprintf("prompt: %v", err)
		return rec
	}
	req := o.Request
	if req.Endpoint == llm.Chat {
		req.Messages = append(append([]llm.Message(nil), req.Messages...), llm.Message{Role: "user", Content: prompt})
	} else {
		req.Prompt = prompt
	}
	resp, err := o.Generator.Generate(ctx, req)
	if err != nil {
		rec.Error = err.Error()
		return rec
	}
	if resp.Model != "" {
		rec.Model = resp.Model
	}
	rec.RawOutput = resp.Text
	rec.Prediction = o.Extract(resp.Text)
	rec.Usage = resp.Usage
	rec.LatencyMS = float64(resp.Latency.Microseconds()) / 1000
	rec.Cached = resp.Cached
	rec.Retries = resp.Retries
	return rec
}
