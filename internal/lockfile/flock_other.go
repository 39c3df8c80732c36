//go:build !unix

package lockfile

import "os"

// TryLock does nothing where flock(2) does not exist: one writer per output is then the user's
// responsibility.
func TryLock(f *os.File) error { return nil }

// WaitLock does nothing where flock(2) does not exist.
func WaitLock(f *os.File) error { return nil }
