package runner

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/ragbench/ragbench/datasets"
	"github.com/ragbench/ragbench/methods"
)

// StreamOptions configure Stream.
type StreamOptions struct {
	// Method answers every example; Env holds its components (uninstrumented: the runner instruments
	// it per question).
	Method methods.Method
	Env    methods.Env
	// Dataset names the records' dataset.
	Dataset string
	// Workers bounds the questions in flight (default 1).
	Workers int
	// Progress receives "LABEL: n/N (rate/s, failed, elapsed)" lines (nil: none), at most every
	// ProgressEvery (default 2 s) and once at the end.
	Progress      io.Writer
	ProgressEvery time.Duration
	Label         string
}

// StreamStats summarise a Stream.
type StreamStats struct {
	Written, Failed int
	Elapsed         time.Duration
	// FirstError is the first failed example in order, "ID: error" ("" when none failed).
	FirstError string
}

// Stream is the runner's mode for one method over a list of examples without a run directory (what
// `ragbench predict` runs): the runner's question loop answers them in a pool of Workers, and write
// receives each answered question, in example order whatever the scheduling; write's error stops the
// run. A failed question is written with its error and the run goes on. It returns when every record
// is written, when ctx is cancelled (ctx.Err(), with the records finished in order before the cut
// written and none made from the calls the cut failed), or when write fails.
func Stream(ctx context.Context, examples []datasets.Example, o StreamOptions, write func(Answered) error) (StreamStats, error) {
	if o.Method == nil {
		return StreamStats{}, errors.New("stream: no method")
	}
	every := o.ProgressEvery
	if every <= 0 {
		every = 2 * time.Second
	}
	of := recordOf{dataset: o.Dataset, method: o.Method.Name(), cell: o.Method.Name()}
	type result struct {
		a   Answered
		cut bool
	}
	do := func(ctx context.Context, i int) (result, error) {
		a, cut := answerOne(ctx, o.Method, o.Env, of, examples[i])
		return result{a, cut}, nil
	}
	start := time.Now()
	last := start
	var st StreamStats
	progress := func() {
		if o.Progress == nil {
			return
		}
		el := time.Since(start)
		rate := float64(st.Written) / max(el.Seconds(), 1e-9)
		fmt.Fprintf(o.Progress, "%s: %d/%d (%.1f/s, %d failed, %v)\n", o.Label, st.Written, len(examples), rate, st.Failed, el.Round(time.Millisecond))
	}
	emit := func(i int, r result) error {
		if r.cut || ctx.Err() != nil && r.a.Record.Error != "" {
			return errCut
		}
		rec := r.a.Record
		if err := write(r.a); err != nil {
			return fmt.Errorf("write record %s: %w", rec.ID, err)
		}
		st.Written++
		if rec.Error != "" {
			st.Failed++
			if st.FirstError == "" {
				st.FirstError = rec.ID + ": " + rec.Error
			}
		}
		if time.Since(last) >= every {
			last = time.Now()
			progress()
		}
		return nil
	}
	err := eachQuestion(ctx, len(examples), max(o.Workers, 1), do, emit)
	st.Elapsed = time.Since(start)
	progress()
	return st, err
}
