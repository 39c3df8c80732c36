//go:build !openblas || !cgo

package dense

import "runtime"

// BLAS names the Sgemm that exact search runs on. This build uses gonum's pure-Go Sgemm; build with
// -tags openblas (cgo and Debian's libopenblas-dev) for OpenBLAS.
func BLAS() string { return "gonum pure-Go Sgemm (build with -tags openblas for OpenBLAS)" }

// scanParallelism is the number of row ranges scanned at once. gonum's Sgemm already runs on
// GOMAXPROCS goroutines, so the ranges only overlap one range's top-k selection with another's Sgemm.
func scanParallelism() int { return runtime.GOMAXPROCS(0) }
