package pagecache

import (
	"os"

	"golang.org/x/sys/unix"
)

func dontNeed(f *os.File) error { return unix.Fadvise(int(f.Fd()), 0, 0, unix.FADV_DONTNEED) }
