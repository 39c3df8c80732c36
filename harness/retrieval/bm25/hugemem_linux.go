//go:build linux

package bm25

import (
	"syscall"
	"unsafe"
)

// hugeAlloc returns n zeroed elements. Arrays of hugeMin bytes or more are mapped outside the Go heap and
// advised to use transparent huge pages: the builder's token table is probed at random over 100+ MB and
// the spill's radix passes scatter into thousands of places of a large array, and with 4 KiB pages nearly
// every such access also missed the TLB. T must hold no pointers (the garbage collector never sees this
// memory). free releases such a mapping (nil for heap memory); the slice must not be used afterwards.
// When the mapping fails, the heap is used.
func hugeAlloc[T any](n int) (s []T, free func()) {
	var zero T
	size := n * int(unsafe.Sizeof(zero))
	if size < hugeMin {
		return make([]T, n), nil
	}
	mem, err := syscall.Mmap(-1, 0, size, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_PRIVATE|syscall.MAP_ANON)
	if err != nil {
		return make([]T, n), nil
	}
	_ = syscall.Madvise(mem, 14) // MADV_HUGEPAGE; only a hint
	return unsafe.Slice((*T)(unsafe.Pointer(&mem[0])), n), func() { syscall.Munmap(mem) }
}
