// Package mmap maps whole files read-only into memory, for the on-disk indexes (ngram, bm25, dense),
// and passes the kernel read-ahead hints for parts of a mapping (WillNeed). Where the platform has no
// mmap, a file is read into memory instead, with the same API, and hints do nothing.
//
// It does not write or grow files.
package mmap

// Map returns the contents of the file at path, memory-mapped read-only where the platform allows.
// An empty file gives an empty, non-nil slice. Release the slice with Unmap.
func Map(path string) ([]byte, error) { return mapFile(path) }

// Unmap releases a slice returned by Map. An empty slice is a no-op.
func Unmap(b []byte) error {
	if len(b) == 0 {
		return nil
	}
	return unmapFile(b)
}

// WillNeed tells the kernel that bytes [off, off+n) of a slice returned by Map will be read soon, so
// that pages not in memory are read ahead, concurrently with the caller's other hints, instead of one
// page fault at a time when they are touched. It is only a hint: it never fails, and it does nothing
// for a slice that is not a whole mapping or where the platform has no mmap.
func WillNeed(b []byte, off, n int) { willNeed(b, off, n) }

// UnmapAll releases every slice of maps (as Unmap) and returns the first error; it tries them all.
func UnmapAll(maps [][]byte) error {
	var first error
	for _, b := range maps {
		if err := Unmap(b); err != nil && first == nil {
			first = err
		}
	}
	return first
}
