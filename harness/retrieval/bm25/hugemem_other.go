//go:build !linux

package bm25

// hugeAlloc returns n zeroed elements on the Go heap (huge-page mappings are used on Linux only).
func hugeAlloc[T any](n int) (s []T, free func()) { return make([]T, n), nil }
