// Package lockfile gives a process exclusive use of an output file: Acquire takes an advisory lock
// (flock) on PATH.lock, which the kernel releases when the process exits, however it exits, and writes
// who holds it there, so a second writer is refused with a message naming the holder. Append-only
// outputs (predictions, run records, file caches) take one before writing.
package lockfile

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"time"
)

// ErrLocked is TryLock's error when another process holds the lock.
var ErrLocked = errors.New("locked by another process")

// Lock is a held lock. Release it with Release (or let the process exit).
type Lock struct {
	f    *os.File
	path string
}

// held keeps every acquired Lock reachable until Release. The lock lives in the open file, and an
// *os.File that becomes garbage is closed by its finaliser: without this, a Lock its caller no longer
// refers to (held for the process's life) would be dropped at whichever garbage collection came next.
var held sync.Map // *Lock -> struct{}

// HeldError says that another process holds the lock.
type HeldError struct {
	Path   string // the output file
	Holder string // what the holder wrote: pid, command line and start time
}

func (e *HeldError) Error() string {
	h := e.Holder
	if h == "" {
		h = "another process"
	}
	return fmt.Sprintf("%s is being written by %s; wait for it to finish or stop it (two writers would corrupt the file)", e.Path, h)
}

// Acquire locks path for writing by this process until Release or the process's exit, whether or not
// the caller keeps the *Lock. It does not block: if another process holds the lock it returns a
// *HeldError naming that process.
func Acquire(path string) (*Lock, error) {
	lp := path + ".lock"
	f, err := os.OpenFile(lp, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	if err := TryLock(f); err != nil {
		holder, _ := os.ReadFile(lp)
		f.Close()
		if errors.Is(err, ErrLocked) {
			return nil, &HeldError{Path: path, Holder: strings.TrimSpace(string(holder))}
		}
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	info := fmt.Sprintf("pid %d (%s) since %s\n", os.Getpid(), strings.Join(os.Args, " "), time.Now().UTC().Format(time.RFC3339))
	if err := f.Truncate(0); err == nil {
		f.WriteAt([]byte(info), 0)
	}
	l := &Lock{f: f, path: path}
	held.Store(l, struct{}{})
	return l, nil
}

// Release gives the lock up. The lock file stays (an empty holder line), harmless to later writers.
func (l *Lock) Release() error {
	if l == nil || l.f == nil {
		return nil
	}
	l.f.Truncate(0)
	err := l.f.Close()
	l.f = nil
	held.Delete(l)
	return err
}
