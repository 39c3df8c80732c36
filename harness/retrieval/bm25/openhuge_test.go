package bm25

import (
	"bytes"
	"context"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestOpenReadPostings opens one index with postings.bin read into memory (HugePostings, for files from
// hugePostingsMin bytes, here lowered to 0) and mapped (the default): the postings must be the same
// bytes, searches must give the same results, and damage must give the same errors naming the file.
func TestOpenReadPostings(t *testing.T) {
	defer func(m int64) { hugePostingsMin = m }(hugePostingsMin)
	hugePostingsMin = 0
	docs := randomCorpus(rand.New(rand.NewSource(5)), 2000, 300)
	_, dir := build(t, docs, Options{})
	read, err := OpenWith(dir, OpenOptions{HugePostings: true})
	if err != nil {
		t.Fatal(err)
	}
	defer read.Close()
	mapped, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer mapped.Close()
	if len(read.frees) == 0 && len(read.maps) == len(mapped.maps) {
		t.Fatal("HugePostings mapped postings.bin: the read path was not taken")
	}
	if len(mapped.frees) != 0 {
		t.Fatal("the default Open read the postings into memory")
	}
	if !bytes.Equal(read.postings, mapped.postings) {
		t.Fatal("the postings read differ from the file's")
	}
	if err := read.Verify(); err != nil {
		t.Fatal(err)
	}
	for q := 0; q < 40; q++ {
		query := fmt.Sprintf("w%d w%d w%d", q, 3*q+1, q*q%300)
		a, err1 := read.Search(context.Background(), query, 10)
		b, err2 := mapped.Search(context.Background(), query, 10)
		if err1 != nil || err2 != nil || !slices.Equal(a, b) {
			t.Fatalf("query %q: read %v (%v), mapped %v (%v)", query, a, err1, b, err2)
		}
	}
	for _, tc := range []struct {
		name, want string
		damage     func(p string)
	}{
		{"flipped byte", "postings.bin checksum", func(p string) { flip(t, p, 100) }},
		{"truncated", "postings.bin is", func(p string) { truncate(t, p, 10) }},
		{"missing", "postings.bin", func(p string) { os.Remove(p) }},
	} {
		d := t.TempDir()
		if _, err := BuildDocs(context.Background(), docs, d, Options{}); err != nil {
			t.Fatal(err)
		}
		tc.damage(filepath.Join(d, filePostings))
		if _, err := OpenWith(d, OpenOptions{HugePostings: true}); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Fatalf("%s: err = %v, want %q", tc.name, err, tc.want)
		}
	}
}
