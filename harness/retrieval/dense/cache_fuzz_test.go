package dense

import (
	"os"
	"path/filepath"
	"testing"
)

// FuzzCacheLoad feeds arbitrary bytes to the cache loader: it must not panic, must keep only whole,
// checksummed records, and must leave a file that appends and reads back correctly.
func FuzzCacheLoad(f *testing.F) {
	dir := f.TempDir()
	c, err := OpenCache(dir, "seed", nil)
	if err != nil {
		f.Fatal(err)
	}
	c.Put("p", "a", []float32{1, 2, 3})
	c.Put("p", "b", []float32{4})
	c.Close()
	matches, _ := filepath.Glob(filepath.Join(dir, "*.emb"))
	good, _ := os.ReadFile(matches[0])
	f.Add(good)
	f.Add(good[:len(good)-1])
	f.Add([]byte{})
	f.Add(make([]byte, 40))
	f.Fuzz(func(t *testing.T, data []byte) {
		dir := t.TempDir()
		probe, err := OpenCache(dir, "seed", nil)
		if err != nil {
			t.Fatal(err)
		}
		probe.Close()
		matches, _ := filepath.Glob(filepath.Join(dir, "*.emb"))
		if err := os.WriteFile(matches[0], data, 0o644); err != nil {
			t.Fatal(err)
		}
		c, err := OpenCache(dir, "seed", nil)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		if c.size+c.Dropped != int64(len(data)) {
			t.Fatalf("kept %d + dropped %d != %d bytes", c.size, c.Dropped, len(data))
		}
		if err := c.Put("q", "new", []float32{7, 8}); err != nil {
			t.Fatal(err)
		}
		v, ok, err := c.Get("q", "new")
		if err != nil || !ok || len(v) != 2 || v[1] != 8 {
			t.Fatalf("read back %v %v %v", v, ok, err)
		}
	})
}
