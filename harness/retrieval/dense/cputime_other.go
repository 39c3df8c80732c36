//go:build !unix

package dense

// cpuSeconds is unavailable here; the benchmark then reports no per-CPU figure.
func cpuSeconds() float64 { return 0 }
