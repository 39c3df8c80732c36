package ngram

import (
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"
	"sync"

	"github.com/ragbench/ragbench/internal/atomicfile"
)

// VerifiedFile is the name of the file, inside an index directory, that remembers which index files
// were checked against their checksums, by size and modification time. It is an optimisation only:
// when it is missing, unreadable or cannot be written, every open checks every file.
const VerifiedFile = "verified.json"

// smallFile is the size under which a file is checked on every open whatever the stamp says.
var smallFile int = 1 << 20

type stamp struct {
	Bytes   int64  `json:"bytes"`
	MtimeNS int64  `json:"mtime_ns"`
	CRC32C  uint32 `json:"crc32c"`
}

// verifier checks index files against their manifest checksums, remembering each checked file's
// size and modification time in VerifiedFile so that a later open checks only files that changed.
type verifier struct {
	dir    string
	always bool // check every file, ignoring stamps

	mu      sync.Mutex
	stamps  map[string]stamp
	changed bool
	// Checked and Trusted count the files whose bytes were read and those trusted by their stamp.
	Checked, Trusted int
}

func newVerifier(dir string, always bool) *verifier {
	v := &verifier{dir: dir, always: always, stamps: map[string]stamp{}}
	if data, err := os.ReadFile(filepath.Join(dir, VerifiedFile)); err == nil {
		var f struct {
			Files map[string]stamp `json:"files"`
		}
		if json.Unmarshal(data, &f) == nil && f.Files != nil {
			v.stamps = f.Files
		}
	}
	return v
}

// check verifies that data (the contents of the index file name) has the checksum want.
func (v *verifier) check(name string, data []byte, want uint32) error {
	path := filepath.Join(v.dir, name)
	var st stamp
	if fi, err := os.Stat(path); err == nil {
		st = stamp{Bytes: fi.Size(), MtimeNS: fi.ModTime().UnixNano(), CRC32C: want}
	}
	v.mu.Lock()
	old, ok := v.stamps[name]
	v.mu.Unlock()
	if !v.always && len(data) >= smallFile && ok && old == st && st.Bytes == int64(len(data)) {
		v.mu.Lock()
		v.Trusted++
		v.mu.Unlock()
		return nil
	}
	if crc32.Checksum(data, castagnoli) != want {
		return fmt.Errorf("open %s: checksum mismatch: the file was changed or damaged after the index was built (rebuild it)", path)
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	v.Checked++
	if st.Bytes == int64(len(data)) && old != st {
		v.stamps[name] = st
		v.changed = true
	}
	return nil
}

// save writes the stamps when they changed; failure (a read-only index) is not an error.
func (v *verifier) save() {
	v.mu.Lock()
	defer v.mu.Unlock()
	if !v.changed {
		return
	}
	data, err := json.MarshalIndent(struct {
		Files map[string]stamp `json:"files"`
	}{v.stamps}, "", " ")
	if err != nil {
		return
	}
	if err := atomicfile.WriteFile(filepath.Join(v.dir, VerifiedFile), append(data, '\n'), 0o644); err != nil && !errors.Is(err, os.ErrPermission) {
		return
	}
	v.changed = false
}
