package lockfile

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

// TestSecondWriterRefused takes the lock in a child process and checks that this process is refused
// with the child named, and that the lock is free once the child is killed. The child drops its *Lock
// and collects garbage: the lock must last until the process exits all the same (the os.File's
// finaliser used to close it at the next collection, and this test failed when one came in time).
func TestSecondWriterRefused(t *testing.T) {
	if os.Getenv("LOCKFILE_CHILD") != "" {
		if _, err := Acquire(os.Getenv("LOCKFILE_CHILD")); err != nil {
			os.Exit(3)
		}
		runtime.GC()
		time.Sleep(20 * time.Millisecond) // let the finaliser goroutine run
		runtime.GC()
		os.Stdout.WriteString("locked\n")
		select {}
	}
	out := filepath.Join(t.TempDir(), "preds.jsonl")
	child := exec.Command(os.Args[0], "-test.run", "TestSecondWriterRefused")
	child.Env = append(os.Environ(), "LOCKFILE_CHILD="+out)
	stdout, _ := child.StdoutPipe()
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 7)
	if _, err := stdout.Read(buf); err != nil || string(buf) != "locked\n" {
		t.Fatalf("child did not lock: %q %v", buf, err)
	}
	_, err := Acquire(out)
	var he *HeldError
	if !errors.As(err, &he) || !strings.Contains(err.Error(), "pid ") {
		t.Fatalf("second writer: %v", err)
	}
	child.Process.Kill() // as kill -9: the kernel releases the lock
	child.Wait()
	l, err := Acquire(out)
	if err != nil {
		t.Fatalf("after the holder died: %v", err)
	}
	l.Release()
	l, err = Acquire(out)
	if err != nil {
		t.Fatalf("after release: %v", err)
	}
	l.Release()
}
