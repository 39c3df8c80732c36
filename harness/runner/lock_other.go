//go:build !unix

package runner

import "os"

// flock is a no-op where flock(2) does not exist: one writer per run directory is then the user's
// responsibility.
func flock(f *os.File) error { return nil }

// flockWait is a no-op where flock(2) does not exist.
func flockWait(f *os.File) error { return nil }
