package dense

import (
	"bufio"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"math"
	"os"
	"path/filepath"
	"sync"
)

// Cache is an on-disk embedding cache: one append-only file per namespace (base URL, model and
// requested dimensions), holding records keyed by SHA-256 of the instruction prefix and the text. Only
// keys and offsets are held in memory; vectors are read back on demand. A torn last record (a crash
// during a write) is cut off on open and counted in Dropped. API keys never enter keys or files.
//
// Record layout: key [32]byte, dim uint32, dim float32, CRC-32C of all of the above (little-endian).
type Cache struct {
	mu      sync.Mutex
	path    string
	f       *os.File
	w       *bufio.Writer
	size    int64
	index   map[[32]byte]int64
	ns      string
	Dropped int64 // bytes of torn records cut off on open
}

// OpenCache opens (or creates) the cache file of namespace ns under dir. info is written beside it in a
// small JSON file so that people can tell the files apart; it must hold no secret.
func OpenCache(dir, ns string, info map[string]string) (*Cache, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("embedding cache: %w", err)
	}
	h := sha256.Sum256([]byte(ns))
	name := hex.EncodeToString(h[:8])
	path := filepath.Join(dir, name+".emb")
	if info != nil {
		b, _ := json.MarshalIndent(info, "", "  ")
		if err := os.WriteFile(filepath.Join(dir, name+".json"), append(b, '\n'), 0o644); err != nil {
			return nil, fmt.Errorf("embedding cache: %w", err)
		}
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("embedding cache: %w", err)
	}
	c := &Cache{path: path, f: f, index: map[[32]byte]int64{}, ns: ns}
	if err := c.load(); err != nil {
		f.Close()
		return nil, err
	}
	c.w = bufio.NewWriterSize(f, 1<<16)
	return c, nil
}

// load scans the file, indexing good records and truncating a bad tail.
func (c *Cache) load() error {
	st, err := c.f.Stat()
	if err != nil {
		return fmt.Errorf("embedding cache %s: %w", c.path, err)
	}
	r := bufio.NewReaderSize(io.NewSectionReader(c.f, 0, st.Size()), 1<<20)
	var off int64
	head := make([]byte, 36)
	var body []byte
	for {
		if _, err := io.ReadFull(r, head); err != nil {
			break
		}
		dim := binary.LittleEndian.Uint32(head[32:])
		n := int64(dim)*4 + 4
		if dim == 0 || off+36+n > st.Size() {
			break
		}
		body = append(body[:0], make([]byte, n)...)
		if _, err := io.ReadFull(r, body); err != nil {
			break
		}
		crc := crc32.Update(crc32.Checksum(head, castagnoli), castagnoli, body[:n-4])
		if crc != binary.LittleEndian.Uint32(body[n-4:]) {
			break
		}
		var key [32]byte
		copy(key[:], head[:32])
		c.index[key] = off
		off += 36 + n
	}
	if off < st.Size() {
		c.Dropped = st.Size() - off
		if err := c.f.Truncate(off); err != nil {
			return fmt.Errorf("embedding cache %s: cut a torn record: %w", c.path, err)
		}
	}
	c.size = off
	if _, err := c.f.Seek(off, io.SeekStart); err != nil {
		return fmt.Errorf("embedding cache %s: %w", c.path, err)
	}
	return nil
}

func (c *Cache) key(prefix, text string) [32]byte {
	h := sha256.New()
	var n [8]byte
	for _, s := range []string{c.ns, prefix, text} {
		binary.LittleEndian.PutUint64(n[:], uint64(len(s)))
		h.Write(n[:])
		h.Write([]byte(s))
	}
	var k [32]byte
	h.Sum(k[:0])
	return k
}

// Len returns the number of cached vectors.
func (c *Cache) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.index)
}

// Get returns the cached vector of (prefix, text).
func (c *Cache) Get(prefix, text string) ([]float32, bool, error) {
	k := c.key(prefix, text)
	c.mu.Lock()
	defer c.mu.Unlock()
	off, ok := c.index[k]
	if !ok {
		return nil, false, nil
	}
	if err := c.w.Flush(); err != nil {
		return nil, false, fmt.Errorf("embedding cache %s: %w", c.path, err)
	}
	var head [36]byte
	if _, err := c.f.ReadAt(head[:], off); err != nil {
		return nil, false, fmt.Errorf("embedding cache %s: %w", c.path, err)
	}
	dim := binary.LittleEndian.Uint32(head[32:])
	buf := make([]byte, dim*4)
	if _, err := c.f.ReadAt(buf, off+36); err != nil {
		return nil, false, fmt.Errorf("embedding cache %s: %w", c.path, err)
	}
	v := make([]float32, dim)
	for i := range v {
		v[i] = math.Float32frombits(binary.LittleEndian.Uint32(buf[4*i:]))
	}
	return v, true, nil
}

// Put appends the vector of (prefix, text) unless it is already cached.
func (c *Cache) Put(prefix, text string, v []float32) error {
	if len(v) == 0 {
		return errors.New("embedding cache: empty vector")
	}
	k := c.key(prefix, text)
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.index[k]; ok {
		return nil
	}
	rec := make([]byte, 36+4*len(v)+4)
	copy(rec, k[:])
	binary.LittleEndian.PutUint32(rec[32:], uint32(len(v)))
	for i, x := range v {
		binary.LittleEndian.PutUint32(rec[36+4*i:], math.Float32bits(x))
	}
	binary.LittleEndian.PutUint32(rec[len(rec)-4:], crc32.Checksum(rec[:len(rec)-4], castagnoli))
	if _, err := c.w.Write(rec); err != nil {
		return fmt.Errorf("embedding cache %s: %w", c.path, err)
	}
	c.index[k] = c.size
	c.size += int64(len(rec))
	return nil
}

// Close flushes and closes the cache file.
func (c *Cache) Close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.f == nil {
		return nil
	}
	err := c.w.Flush()
	if cerr := c.f.Close(); err == nil {
		err = cerr
	}
	c.f = nil
	return err
}
