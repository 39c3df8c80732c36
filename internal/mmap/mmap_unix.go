//go:build unix

package mmap

import (
	"fmt"
	"os"
	"syscall"
	"unsafe"
)

func mapFile(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	size := st.Size()
	if size == 0 {
		return []byte{}, nil
	}
	if int64(int(size)) != size {
		return nil, fmt.Errorf("%s: too large to map (%d bytes)", path, size)
	}
	b, err := syscall.Mmap(int(f.Fd()), 0, int(size), syscall.PROT_READ, syscall.MAP_SHARED)
	if err != nil {
		return nil, fmt.Errorf("mmap %s: %w", path, err)
	}
	return b, nil
}

func unmapFile(b []byte) error { return syscall.Munmap(b) }

var pageSize = os.Getpagesize()

func willNeed(b []byte, off, n int) {
	if n <= 0 || off < 0 || off >= len(b) || uintptr(unsafe.Pointer(&b[0]))%uintptr(pageSize) != 0 {
		return
	}
	start := off &^ (pageSize - 1)
	_ = syscall.Madvise(b[start:min(len(b), off+n)], syscall.MADV_WILLNEED)
}
