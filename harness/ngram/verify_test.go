package ngram

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/ragbench/ragbench/harness/corpus"
)

// TestVerifyOnOpenByDefault edits one byte of each index file, keeping its length and modification
// time (bit rot, cp -a of a damaged copy), and checks that a plain Open refuses the index, also after
// earlier opens had found it good: no count is served from unverified bytes (a remembered size and
// mtime trusted such a file: 35 records changed, QuCo EM 19.0 → 21.0).
func TestVerifyOnOpenByDefault(t *testing.T) {
	for _, name := range []string{"table.0", "tokenized.0", "offset.0", "vocab.txt"} {
		for _, opened := range []bool{false, true} {
			ix, dir := buildDocs(t, []string{"reba mcentire sang fancy", "reba mcentire was born in oklahoma", "d e"}, BuildOptions{})
			ix.Close()
			if opened {
				for i := 0; i < 2; i++ {
					ix, err := OpenIndex(dir, OpenOptions{})
					if err != nil {
						t.Fatal(err)
					}
					if c := ix.Verified(); c == 0 {
						t.Errorf("%s: open %d checked no file", name, i)
					}
					ix.Close()
				}
			}
			p := filepath.Join(dir, name)
			fi, err := os.Stat(p)
			if err != nil {
				t.Fatal(err)
			}
			data, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			data[len(data)/2] ^= 0x01
			if err := os.WriteFile(p, data, 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.Chtimes(p, fi.ModTime(), fi.ModTime()); err != nil {
				t.Fatal(err)
			}
			_, err = OpenIndex(dir, OpenOptions{})
			if err == nil || !strings.Contains(err.Error(), "checksum mismatch") || !strings.Contains(err.Error(), name) {
				t.Errorf("%s (opened before %v): one flipped byte, same size and mtime, not caught: %v", name, opened, err)
			}
		}
	}
}

// TestCacheKeyedByBuild rebuilds an index at the same path and checks that the persistent cache does
// not answer with the old index's counts.
func TestCacheKeyedByBuild(t *testing.T) {
	ctx := context.Background()
	ix, dir := buildDocs(t, []string{"reba mcentire", "reba mcentire again"}, BuildOptions{})
	cpath := filepath.Join(t.TempDir(), "cache.jsonl")
	c, err := OpenCache(cpath, ix, "idx", "")
	if err != nil {
		t.Fatal(err)
	}
	r, err := c.Count(ctx, "reba mcentire")
	if err != nil || r.Count != 2 {
		t.Fatalf("first index: %v %v", r, err)
	}
	c.Close()
	ix.Close()
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	if _, err := BuildFrom(ctx, &memReader{docs: docsOf("reba mcentire", "reba mcentire", "reba mcentire", "x")}, dir, BuildOptions{}); err != nil {
		t.Fatal(err)
	}
	ix2, err := OpenIndex(dir, OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer ix2.Close()
	c2, err := OpenCache(cpath, ix2, "idx", "")
	if err != nil {
		t.Fatal(err)
	}
	defer c2.Close()
	r, err = c2.Count(ctx, "reba mcentire")
	if err != nil || r.Count != 3 {
		t.Fatalf("after the rebuild the cache answered %v (%v), want the new index's 3", r.Count, err)
	}
}

// TestCacheTornTailOpenedThrice writes a cache whose last line is torn and opens it three times: each
// open succeeds, and new records land on lines of their own.
func TestCacheTornTailOpenedThrice(t *testing.T) {
	ctx := context.Background()
	ix, _ := buildDocs(t, []string{"a b c", "a b"}, BuildOptions{})
	cpath := filepath.Join(t.TempDir(), "cache.jsonl")
	c, err := OpenCache(cpath, ix, "idx", "")
	if err != nil {
		t.Fatal(err)
	}
	c.Count(ctx, "a b")
	c.Close()
	f, _ := os.OpenFile(cpath, os.O_APPEND|os.O_WRONLY, 0o644)
	f.WriteString(`{"key":"{\"args\":[\"a\"],"kwa`)
	f.Close()
	for i := 0; i < 3; i++ {
		c, err := OpenCache(cpath, ix, "idx", "")
		if err != nil {
			t.Fatalf("open %d: %v", i+1, err)
		}
		if c.Len() != 1+i {
			t.Errorf("open %d: %d records, want %d", i+1, c.Len(), 1+i)
		}
		q := []string{"b", "c", "a"}[i]
		if _, err := c.Count(ctx, q); err != nil {
			t.Fatal(err)
		}
		c.Close()
	}
	data, _ := os.ReadFile(cpath)
	if n := strings.Count(string(data), "\n"); n != 4 || !strings.HasSuffix(string(data), "\n") {
		t.Errorf("cache file has %d lines:\n%s", n, data)
	}
}

func docsOf(texts ...string) []corpus.Document {
	var ds []corpus.Document
	for i, s := range texts {
		ds = append(ds, corpus.Document{ID: strconv.Itoa(i), Text: s})
	}
	return ds
}
