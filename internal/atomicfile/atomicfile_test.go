package atomicfile

import (
	"os"
	"path/filepath"
	"testing"
)

func TestWriteFile(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "meta.json")
	cases := []struct {
		name, body string
	}{
		{"a new file is created with the data", `{"v":1}`},
		{"an existing file is replaced whole", `{"v":2,"more":true}`},
		{"empty data gives an empty file", ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if err := WriteFile(p, []byte(tc.body), 0o640); err != nil {
				t.Fatal(err)
			}
			b, err := os.ReadFile(p)
			if err != nil || string(b) != tc.body {
				t.Fatalf("read back %q, %v; want %q", b, err, tc.body)
			}
			st, _ := os.Stat(p)
			if st.Mode().Perm() != 0o640 {
				t.Fatalf("mode %v, want 0640", st.Mode().Perm())
			}
			entries, _ := os.ReadDir(dir)
			if len(entries) != 1 {
				t.Fatalf("left temporary files behind: %v", entries)
			}
		})
	}
}

func TestWriteFileFailureLeavesTargetAndNoTemp(t *testing.T) {
	dir := t.TempDir()
	// The target is a non-empty directory: the rename fails.
	p := filepath.Join(dir, "target")
	if err := os.MkdirAll(filepath.Join(p, "x"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := WriteFile(p, []byte("data"), 0o644); err == nil {
		t.Fatal("want an error when the rename cannot replace the target")
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 || entries[0].Name() != "target" {
		t.Fatalf("directory holds %v, want only the untouched target", entries)
	}
	if err := WriteFile(filepath.Join(dir, "no-such-dir", "f"), nil, 0o644); err == nil {
		t.Fatal("want an error for a missing directory")
	}
}
