// Package atomicdir builds a directory atomically: the build writes into a temporary directory beside
// the target, and Commit renames it into place only when complete, so that a failed or killed build
// leaves the previous directory as it was. Leftovers of killed builds are removed by the next build
// of the same target. Index builds (BM25, dense, n-gram) use it.
package atomicdir

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// ownerFile, inside a temporary directory, holds the process id of the build that owns it.
const ownerFile = ".build-owner"

// Dir is a directory being built. Make one with Begin.
type Dir struct {
	out, tmp string
	done     bool
}

// ErrExists is returned by Begin when the target exists and force is false.
var ErrExists = errors.New("exists")

// Begin starts a build of the directory out. It removes the temporary directories of earlier builds
// of out whose process is gone, returns an error wrapping ErrExists when out exists (and is not an
// empty directory) and force is false,
// and creates a new temporary directory (mode 0755) beside out.
func Begin(out string, force bool) (*Dir, error) {
	out = filepath.Clean(out)
	if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
		return nil, err
	}
	CleanStale(out)
	if _, err := os.Stat(out); err == nil && !force && !emptyDir(out) {
		return nil, fmt.Errorf("%s %w; pass --force to replace it", out, ErrExists)
	}
	tmp, err := os.MkdirTemp(filepath.Dir(out), filepath.Base(out)+".tmp-")
	if err != nil {
		return nil, err
	}
	if err := os.Chmod(tmp, 0o755); err != nil {
		os.RemoveAll(tmp)
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(tmp, ownerFile), []byte(strconv.Itoa(os.Getpid())), 0o644); err != nil {
		os.RemoveAll(tmp)
		return nil, err
	}
	return &Dir{out: out, tmp: tmp}, nil
}

// Path is the temporary directory to build in.
func (d *Dir) Path() string { return d.tmp }

// Commit syncs the temporary directory and renames it into place, replacing out (whose old contents
// are removed after the rename).
func (d *Dir) Commit() error {
	if d.done {
		return errors.New("atomicdir: Commit after Commit or Abort")
	}
	if err := os.Remove(filepath.Join(d.tmp, ownerFile)); err != nil {
		return err
	}
	if f, err := os.Open(d.tmp); err == nil {
		f.Sync()
		f.Close()
	}
	if _, err := os.Stat(d.out); err == nil {
		// Swap the two directories in one step where the kernel can (renameat2 RENAME_EXCHANGE), so
		// that out names a complete index at every moment; the old one is then at d.tmp.
		if err := unix.Renameat2(unix.AT_FDCWD, d.tmp, unix.AT_FDCWD, d.out, unix.RENAME_EXCHANGE); err == nil {
			d.done = true
			os.RemoveAll(d.tmp)
			return nil
		}
		// Elsewhere: move the old aside, then the new in. A crash between the two leaves out missing
		// and OUT.old-PID complete; CleanStale moves it back.
		old := fmt.Sprintf("%s.old-%d", d.out, os.Getpid())
		os.RemoveAll(old)
		if err := os.Rename(d.out, old); err != nil {
			return fmt.Errorf("move the old %s aside: %w", d.out, err)
		}
		if err := os.Rename(d.tmp, d.out); err != nil {
			os.Rename(old, d.out)
			return fmt.Errorf("rename the new %s into place: %w", d.out, err)
		}
		d.done = true
		os.RemoveAll(old)
		return nil
	}
	if err := os.Rename(d.tmp, d.out); err != nil {
		return fmt.Errorf("rename the new %s into place: %w", d.out, err)
	}
	d.done = true
	return nil
}

// Abort removes the temporary directory; after Commit it does nothing. It is safe to defer.
func (d *Dir) Abort() {
	if d.done {
		return
	}
	d.done = true
	os.RemoveAll(d.tmp)
}

// CleanStale removes the temporary (OUT.tmp-*) and set-aside (OUT.old-*) directories of earlier builds
// of out whose owning process no longer runs (a set-aside directory goes back to out when out is
// missing), and returns how many it handled.
func CleanStale(out string) int {
	out = filepath.Clean(out)
	entries, err := os.ReadDir(filepath.Dir(out))
	if err != nil {
		return 0
	}
	n := 0
	base := filepath.Base(out)
	for _, e := range entries {
		name := e.Name()
		if !e.IsDir() {
			continue
		}
		p := filepath.Join(filepath.Dir(out), name)
		switch {
		case strings.HasPrefix(name, base+".tmp-"):
			if ownerAlive(p) {
				continue
			}
		case strings.HasPrefix(name, base+".old-"):
			pid, err := strconv.Atoi(strings.TrimPrefix(name, base+".old-"))
			if err == nil && alive(pid) {
				continue
			}
			if _, err := os.Stat(out); errors.Is(err, os.ErrNotExist) {
				// A build died between moving the old directory aside and moving the new one in:
				// the old one is the last complete directory, so it goes back.
				if os.Rename(p, out) == nil {
					n++
				}
				continue
			}
		default:
			continue
		}
		if os.RemoveAll(p) == nil {
			n++
		}
	}
	return n
}

func ownerAlive(dir string) bool {
	data, err := os.ReadFile(filepath.Join(dir, ownerFile))
	if err != nil {
		return false
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(data)))
	return err == nil && alive(pid)
}

func alive(pid int) bool {
	if pid <= 0 {
		return false
	}
	if pid == os.Getpid() {
		return true
	}
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

func emptyDir(p string) bool {
	f, err := os.Open(p)
	if err != nil {
		return false
	}
	defer f.Close()
	names, err := f.Readdirnames(1)
	return err == io.EOF && len(names) == 0
}
