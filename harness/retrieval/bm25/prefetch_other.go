//go:build !amd64

package bm25

import "unsafe"

// prefetchLines is a no-op where no prefetch instruction is wired in (see prefetch_amd64.s).
func prefetchLines(p unsafe.Pointer, n int) {}
