//go:build unix

package runner

import (
	"errors"
	"os"
	"syscall"
)

// flock takes an exclusive lock on f without waiting; it returns errLocked when another open file
// description holds it.
func flock(f *os.File) error {
	err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
	if errors.Is(err, syscall.EWOULDBLOCK) {
		return errLocked
	}
	return err
}

// flockWait takes an exclusive lock on f, waiting for it.
func flockWait(f *os.File) error {
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX)
		if !errors.Is(err, syscall.EINTR) {
			return err
		}
	}
}
