package bm25

import "unsafe"

// hugeMin is the smallest array allocated outside the Go heap on huge pages (on Linux; elsewhere the slab
// pool and the token table still size their arrays by it).
const hugeMin = 4 << 20

// prefault faults in the pages of s now, by writing a zero byte to every 4 KiB page: for memory prepared
// ahead of its use by a goroutine that nothing waits for. (Not MADV_POPULATE_WRITE: it holds the process's
// memory map lock for the whole range, and every other thread's mmap, and the page faults queued behind
// that, waited for it.)
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
