package ngram

import (
	"runtime"
	"sync"
)

// parallelParts returns how many goroutines a pass over n items is split into: one per
// GOMAXPROCS, fewer for small n (below 1M items per goroutine the fork-join does not pay).
func parallelParts(n int) int {
	return max(1, min(runtime.GOMAXPROCS(0), n>>20))
}

// parallelFor splits [0, n) into parts contiguous ranges and calls fn(part, lo, hi) for each, on
// parts goroutines (the caller's among them), returning when all are done.
func parallelFor(n, parts int, fn func(part, lo, hi int)) {
	if parts <= 1 {
		fn(0, 0, n)
		return
	}
	var wg sync.WaitGroup
	for p := 1; p < parts; p++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			fn(p, p*n/parts, (p+1)*n/parts)
		}()
	}
	fn(0, 0, n/parts)
	wg.Wait()
}
