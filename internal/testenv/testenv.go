// Package testenv locates the shared real data (../shared/data beside the checkout) for tests and
// benchmarks. Under CI (CI=true) a missing data directory fails the test instead of skipping it.
package testenv

import (
	"os"
	"path/filepath"
	"testing"
)

// ModuleRoot returns the directory holding go.mod, searching upward from the working directory.
func ModuleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", os.ErrNotExist
		}
		dir = parent
	}
}

// SharedDir returns ../shared beside the checkout, or $RAGBENCH_SHARED when set. It returns "" when
// the directory does not exist.
func SharedDir() string {
	if d := os.Getenv("RAGBENCH_SHARED"); d != "" {
		return d
	}
	root, err := ModuleRoot()
	if err != nil {
		return ""
	}
	d := filepath.Join(filepath.Dir(root), "shared")
	if _, err := os.Stat(d); err != nil {
		return ""
	}
	return d
}

// tb is the part of testing.TB that Require uses.
type tb interface {
	Helper()
	Fatalf(format string, args ...any)
	Skipf(format string, args ...any)
}

// Data returns the path of rel inside the shared data directory (../shared/data). When the file is
// missing the test is skipped, or failed when CI=true.
func Data(t testing.TB, rel string) string {
	t.Helper()
	return require(t, filepath.Join("data", rel))
}

// Reference returns the path of rel inside ../shared/reference, with the same missing-file rules as Data.
func Reference(t testing.TB, rel string) string {
	t.Helper()
	return require(t, filepath.Join("reference", rel))
}

func require(t tb, rel string) string {
	t.Helper()
	shared := SharedDir()
	p := filepath.Join(shared, rel)
	if shared == "" {
		p = filepath.Join("..", "shared", rel)
	}
	if _, err := os.Stat(p); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("shared data %s is missing (CI=true makes this a failure): %v", p, err)
		}
		t.Skipf("shared data %s is missing: %v", p, err)
	}
	return p
}
