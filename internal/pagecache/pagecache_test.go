//go:build linux

package pagecache

import (
	"os"
	"path/filepath"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"
)

// resident returns how many of the file's pages are in the page cache, and its page count.
func resident(t *testing.T, path string) (int, int) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	fi, _ := f.Stat()
	b, err := unix.Mmap(int(f.Fd()), 0, int(fi.Size()), unix.PROT_READ, unix.MAP_SHARED)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Munmap(b)
	page := os.Getpagesize()
	vec := make([]byte, (len(b)+page-1)/page)
	if _, _, e := unix.Syscall(unix.SYS_MINCORE, uintptr(unsafe.Pointer(&b[0])), uintptr(len(b)), uintptr(unsafe.Pointer(&vec[0]))); e != 0 {
		t.Skipf("mincore: %v", e)
	}
	n := 0
	for _, v := range vec {
		n += int(v & 1)
	}
	return n, len(vec)
}

// TestDropDir writes a file (so that its pages are cached), evicts the directory and checks that the
// pages left the cache, and that a missing directory is an error.
func TestDropDir(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "data")
	if err := os.WriteFile(p, make([]byte, 4<<20), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(dir, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	before, pages := resident(t, p)
	if err := DropDir(dir); err != nil {
		t.Fatal(err)
	}
	after, _ := resident(t, p)
	t.Logf("%d of %d pages resident before, %d after", before, pages, after)
	if before == 0 {
		t.Skip("the written file was not cached (a filesystem without a page cache?)")
	}
	if after > pages/10 {
		t.Fatalf("%d of %d pages still resident after DropDir (before: %d)", after, pages, before)
	}
	if err := DropDir(filepath.Join(dir, "missing")); err == nil {
		t.Fatal("DropDir of a missing directory succeeded")
	}
}
