//go:build linux

package bm25

import (
	"syscall"
	"unsafe"
)

// hugeMin is the smallest table allocated outside the Go heap on huge pages.
const hugeMin = 4 << 20

// allocSlots returns n zeroed slots. Tables of hugeMin bytes or more are mapped outside the Go heap and
// advised to use transparent huge pages: the builder's token table is probed at random over 100+ MB,
// and with 4 KiB pages nearly every probe of it also missed the TLB. tokSlot holds no pointers, so the
// memory need not be scanned by the garbage collector. free releases such a mapping (nil for heap
// memory). When the mapping fails, the heap is used.
func allocSlots(n int) (slots []tokSlot, free func()) {
	size := n * int(unsafe.Sizeof(tokSlot{}))
	if size < hugeMin {
		return make([]tokSlot, n), nil
	}
	mem, err := syscall.Mmap(-1, 0, size, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_PRIVATE|syscall.MAP_ANON)
	if err != nil {
		return make([]tokSlot, n), nil
	}
	_ = syscall.Madvise(mem, 14) // MADV_HUGEPAGE; only a hint
	return unsafe.Slice((*tokSlot)(unsafe.Pointer(&mem[0])), n), func() { syscall.Munmap(mem) }
}
