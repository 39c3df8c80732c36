//go:build unix

package lockfile

import (
	"errors"
	"os"
	"syscall"
)

// TryLock takes an exclusive advisory lock (flock) on f without waiting. It returns ErrLocked when
// another open file description holds it. The kernel releases the lock when f is closed or the
// process exits.
func TryLock(f *os.File) error {
	err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
	if errors.Is(err, syscall.EWOULDBLOCK) {
		return ErrLocked
	}
	return err
}

// WaitLock takes an exclusive advisory lock on f, waiting for it.
func WaitLock(f *os.File) error {
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX)
		if !errors.Is(err, syscall.EINTR) {
			return err
		}
	}
}
