// Package pagecache evicts files from the operating system's page cache, so that a benchmark can time
// a cold open of an index (the first open after a reboot, or after the files were pushed out by other
// work) without root and without disturbing other processes' files.
//
// Eviction is advice: pages that another process has mapped or locked stay resident.
package pagecache

import (
	"fmt"
	"os"
	"path/filepath"
)

// DropDir writes back and evicts every regular file directly inside dir (not in subdirectories). It
// returns errors.ErrUnsupported where the platform has no such advice.
func DropDir(dir string) error {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return fmt.Errorf("drop page cache of %s: %w", dir, err)
	}
	for _, e := range entries {
		if !e.Type().IsRegular() {
			continue
		}
		if err := Drop(filepath.Join(dir, e.Name())); err != nil {
			return err
		}
	}
	return nil
}

// Drop writes back and evicts the file at path. It returns errors.ErrUnsupported where the platform
// has no such advice.
func Drop(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("drop page cache: %w", err)
	}
	defer f.Close()
	if err := f.Sync(); err != nil {
		return fmt.Errorf("drop page cache of %s: %w", path, err)
	}
	if err := dontNeed(f); err != nil {
		return fmt.Errorf("drop page cache of %s: %w", path, err)
	}
	return nil
}
