package mmap

import (
	"os"
	"path/filepath"
	"testing"
)

func TestMap(t *testing.T) {
	dir := t.TempDir()
	cases := []struct {
		name, body string
	}{
		{"a small file maps to its bytes", "hello, index"},
		{"an empty file maps to an empty, non-nil slice", ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := filepath.Join(dir, "f")
			if err := os.WriteFile(p, []byte(tc.body), 0o644); err != nil {
				t.Fatal(err)
			}
			b, err := Map(p)
			if err != nil {
				t.Fatal(err)
			}
			if b == nil || string(b) != tc.body {
				t.Fatalf("Map = %q (nil %v), want %q", b, b == nil, tc.body)
			}
			if err := Unmap(b); err != nil {
				t.Fatal(err)
			}
		})
	}
	if _, err := Map(filepath.Join(dir, "missing")); !os.IsNotExist(err) {
		t.Fatalf("Map of a missing file: err %v, want not-exist", err)
	}
}

func TestUnmapAll(t *testing.T) {
	dir := t.TempDir()
	var maps [][]byte
	for i, body := range []string{"one", "", "three"} {
		p := filepath.Join(dir, string(rune('a'+i)))
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		b, err := Map(p)
		if err != nil {
			t.Fatal(err)
		}
		maps = append(maps, b)
	}
	if err := UnmapAll(append(maps, nil)); err != nil {
		t.Fatalf("UnmapAll of mapped, empty and nil slices: %v", err)
	}
	if err := UnmapAll(nil); err != nil {
		t.Fatalf("UnmapAll(nil): %v", err)
	}
}
