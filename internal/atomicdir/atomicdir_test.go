package atomicdir

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
)

func TestBuildCommitAbort(t *testing.T) {
	root := t.TempDir()
	out := filepath.Join(root, "idx")
	d, err := Begin(out, false)
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(d.Path(), "a"), []byte("1"), 0o644)
	if err := d.Commit(); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(filepath.Join(out, "a")); string(b) != "1" {
		t.Fatalf("committed content %q", b)
	}
	if fi, _ := os.Stat(out); fi.Mode().Perm() != 0o755 {
		t.Errorf("index directory mode %v, want 0755", fi.Mode().Perm())
	}
	if _, err := os.Stat(filepath.Join(out, ownerFile)); err == nil {
		t.Error("owner file left in the committed directory")
	}
	// Without force an existing target is refused.
	if _, err := Begin(out, false); !errors.Is(err, ErrExists) {
		t.Fatalf("existing target without force: %v", err)
	}
	// A failed build (Abort) leaves the old directory as it was.
	d, err = Begin(out, true)
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(d.Path(), "a"), []byte("2"), 0o644)
	d.Abort()
	if b, _ := os.ReadFile(filepath.Join(out, "a")); string(b) != "1" {
		t.Fatalf("after an aborted build: %q", b)
	}
	// A forced build replaces it.
	d, _ = Begin(out, true)
	os.WriteFile(filepath.Join(d.Path(), "a"), []byte("3"), 0o644)
	if err := d.Commit(); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(filepath.Join(out, "a")); string(b) != "3" {
		t.Fatalf("after a forced build: %q", b)
	}
	left, _ := filepath.Glob(filepath.Join(root, "idx.*"))
	if len(left) != 0 {
		t.Errorf("leftovers: %v", left)
	}
}

func TestCleanStale(t *testing.T) {
	root := t.TempDir()
	out := filepath.Join(root, "idx")
	// A dead process's build: start and reap a short-lived process to get a pid that is gone.
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Skip("no `true` to get a dead pid:", err)
	}
	dead := cmd.Process.Pid
	stale := filepath.Join(root, "idx.tmp-111")
	os.MkdirAll(stale, 0o755)
	os.WriteFile(filepath.Join(stale, ownerFile), []byte(strconv.Itoa(dead)), 0o644)
	noOwner := filepath.Join(root, "idx.tmp-222") // an old build that wrote no owner file
	os.MkdirAll(noOwner, 0o755)
	live := filepath.Join(root, "idx.tmp-333") // our own, still running
	os.MkdirAll(live, 0o755)
	os.WriteFile(filepath.Join(live, ownerFile), []byte(strconv.Itoa(os.Getpid())), 0o644)
	other := filepath.Join(root, "idxother.tmp-1") // another target's
	os.MkdirAll(other, 0o755)
	if n := CleanStale(out); n != 2 {
		t.Errorf("removed %d, want 2", n)
	}
	for p, want := range map[string]bool{stale: false, noOwner: false, live: true, other: true} {
		_, err := os.Stat(p)
		if (err == nil) != want {
			t.Errorf("%s exists=%v, want %v", filepath.Base(p), err == nil, want)
		}
	}
}

// TestCleanStaleRestoresSetAside: a build that died between moving the old directory aside and
// moving the new one in (the fallback path) left no OUT; the next build moves the old one back.
func TestCleanStaleRestoresSetAside(t *testing.T) {
	root := t.TempDir()
	out := filepath.Join(root, "idx")
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Skip("no `true` to get a dead pid:", err)
	}
	aside := filepath.Join(root, "idx.old-"+strconv.Itoa(cmd.Process.Pid))
	os.MkdirAll(aside, 0o755)
	os.WriteFile(filepath.Join(aside, "a"), []byte("old"), 0o644)
	CleanStale(out)
	if b, err := os.ReadFile(filepath.Join(out, "a")); err != nil || string(b) != "old" {
		t.Fatalf("the set-aside index was not restored: %q %v", b, err)
	}
}
