package ngram

import (
	"fmt"
	"hash/crc32"
	"path/filepath"
	"sync"
)

// verifier checks index files against their manifest checksums. Every open checks every file: a
// file's size and modification time say nothing of a flipped bit or a damaged copy made with cp -a,
// and no count may be served from unverified bytes. CRC-32C runs at memory speed (hardware
// instructions), so the check costs a fraction of an open (docs/corpus-statistics.md).
//
// Checks run concurrently, each in its own goroutine, with one another and with the rest of the open
// (the vocabulary's map); wait joins them before anything reads the files' contents.
type verifier struct {
	dir string
	wg  sync.WaitGroup

	mu   sync.Mutex
	errs []error
	// Checked counts the files whose checksums were read.
	Checked int
}

func newVerifier(dir string) *verifier { return &verifier{dir: dir} }

// check starts verifying that data (the contents of the index file name) has the checksum want.
func (v *verifier) check(name string, data []byte, want uint32) {
	v.wg.Add(1)
	go func() {
		defer v.wg.Done()
		ok := crc32.Checksum(data, castagnoli) == want
		v.mu.Lock()
		defer v.mu.Unlock()
		v.Checked++
		if !ok {
			v.errs = append(v.errs, fmt.Errorf("open %s: checksum mismatch: the file was changed or damaged after the index was built (rebuild it)", filepath.Join(v.dir, name)))
		}
	}()
}

// wait waits for the checks started and returns the first mismatch (in the order found).
func (v *verifier) wait() error {
	v.wg.Wait()
	v.mu.Lock()
	defer v.mu.Unlock()
	if len(v.errs) > 0 {
		return v.errs[0]
	}
	return nil
}
