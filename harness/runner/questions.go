package runner

import (
	"context"
	"errors"
	"sync"
)

// errCut is returned by an emit function to stop emitting without an error: the result was cut short
// by cancellation and is not written, nor is anything after it.
var errCut = errors.New("cut short")

// eachQuestion is the runner's one question loop: a pool of workers takes questions 0..n-1 in order
// and calls do on each; cancellation stops the feed at once. It is what every mode of the runner runs
// (a config's run directory, a stream of one method's records, retrieval-only evaluation).
//
// Unordered (emit nil): do records its own results as they finish (the run directory's append-only
// files, ordered once the run completes). The loop returns do's first error, else ctx's error when ctx
// was cancelled.
//
// Ordered (emit set): each result is passed to emit in question order, from one goroutine, whatever
// the scheduling; at most 4×workers questions are started but not yet emitted, so one slow question
// cannot make the reorder buffer grow. Once ctx is cancelled nothing more is emitted, and emit may end
// the output with errCut. The loop returns do's or emit's first error, else ctx's error when not every
// result was emitted.
func eachQuestion[R any](ctx context.Context, n, workers int, do func(ctx context.Context, i int) (R, error), emit func(i int, r R) error) error {
	parent := ctx
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	workers = max(min(workers, n), 1)
	var (
		firstErr error
		errOnce  sync.Once
	)
	fail := func(err error) {
		errOnce.Do(func() { firstErr = err })
		cancel()
	}
	ordered := emit != nil
	var window chan struct{}
	if ordered {
		window = make(chan struct{}, 4*workers)
	}
	type result struct {
		i int
		r R
	}
	jobs := make(chan int)
	results := make(chan result, workers)
	go func() {
		defer close(jobs)
		for i := 0; i < n; i++ {
			if ordered {
				select {
				case window <- struct{}{}:
				case <-ctx.Done():
					return
				}
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
				r, err := do(ctx, i)
				if err != nil {
					fail(err)
					return
				}
				if !ordered {
					continue
				}
				select {
				case results <- result{i, r}:
				case <-ctx.Done():
					return
				}
			}
		}()
	}
	go func() { wg.Wait(); close(results) }()

	emitted, cut := 0, false
	pending := map[int]R{}
	for res := range results {
		if cut || ctx.Err() != nil {
			continue // drain
		}
		pending[res.i] = res.r
		for {
			r, ok := pending[emitted]
			if !ok {
				break
			}
			delete(pending, emitted)
			if err := emit(emitted, r); err != nil {
				if !errors.Is(err, errCut) {
					fail(err)
				}
				cut = true
				break
			}
			emitted++
			<-window
		}
	}
	if firstErr != nil {
		return firstErr
	}
	if err := parent.Err(); err != nil && (!ordered || emitted < n) {
		return err
	}
	return nil
}
