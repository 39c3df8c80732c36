package bm25

import "unsafe"

// prefetchLines asks the processor to load the cache lines of the n bytes from p (PREFETCHT0 every 64
// bytes): a hint that neither faults nor waits, so p need only point into a live object and the range
// may be approximate.
//
//go:noescape
func prefetchLines(p unsafe.Pointer, n int)
