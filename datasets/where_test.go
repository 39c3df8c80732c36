package datasets

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"
)

func TestWriteWhere(t *testing.T) {
	data, cache := t.TempDir(), t.TempDir()
	t.Setenv("RAGBENCH_DATA", data)
	t.Setenv("RAGBENCH_CACHE", cache)
	var b bytes.Buffer
	WriteWhere(&b)
	lines := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
	if len(lines) != 2 {
		t.Fatalf("wrote %q, want two lines", b.String())
	}
	wantData := "data data=" + data + " cache=" + filepath.Join(cache, "data")
	if !strings.HasPrefix(lines[0], wantData) {
		t.Errorf("data line %q, want it to start with %q (RAGBENCH_DATA first, then the cache)", lines[0], wantData)
	}
	if lines[1] != "cache "+cache {
		t.Errorf("cache line %q, want %q", lines[1], "cache "+cache)
	}
}
