//go:build !linux

package bm25

// allocSlots returns n zeroed slots on the Go heap (huge-page mappings are used on Linux only).
func allocSlots(n int) (slots []tokSlot, free func()) { return make([]tokSlot, n), nil }
