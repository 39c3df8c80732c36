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

// TestWillNeed checks that the hint accepts every range a caller may give, in bounds or not, on a
// mapping and on a slice that is not one, and leaves the bytes as they are.
func TestWillNeed(t *testing.T) {
	body := make([]byte, 3*os.Getpagesize()+100)
	for i := range body {
		body[i] = byte(i * 7)
	}
	p := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(p, body, 0o644); err != nil {
		t.Fatal(err)
	}
	b, err := Map(p)
	if err != nil {
		t.Fatal(err)
	}
	defer Unmap(b)
	ps := os.Getpagesize()
	cases := []struct {
		name   string
		b      []byte
		off, n int
	}{
		{"a row inside one page", b, 10, 100},
		{"a row across a page boundary", b, ps - 8, 64},
		{"a row running past the end", b, len(b) - 10, 100},
		{"an offset past the end", b, len(b) + 5, 10},
		{"a negative offset", b, -1, 10},
		{"an empty range", b, 0, 0},
		{"a sub-slice that does not start on a page", b[1:], 0, 10},
		{"an empty slice", nil, 0, 10},
		{"a heap slice", make([]byte, 50), 5, 10},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			WillNeed(tc.b, tc.off, tc.n)
		})
	}
	if string(b) != string(body) {
		t.Fatal("the mapping changed")
	}
}
