//go:build !linux

package bm25

import "unsafe"

// hugeMin is the size from which arrays would be mapped on huge pages on Linux (the slab pool and the
// token table size their arrays by it).
const hugeMin = 4 << 20

// hugeAlloc returns n zeroed elements on the Go heap (huge-page mappings are used on Linux only).
func hugeAlloc[T any](n int) (s []T, free func()) { return make([]T, n), nil }

// prefault touches a byte of every 4 KiB page of s, so that its pages are faulted in now.
func prefault[T any](s []T) {
	if len(s) == 0 {
		return
	}
	var zero T
	b := unsafe.Slice((*byte)(unsafe.Pointer(&s[0])), len(s)*int(unsafe.Sizeof(zero)))
	for i := 0; i < len(b); i += 4096 {
		b[i] = 0
	}
}
