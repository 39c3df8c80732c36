package runner

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/ragbench/ragbench/internal/lockfile"
)

// dirLock is a run directory's lock (internal/lockfile on DIR/run.lock): a second process writing the
// same run is refused with the holder's description.
type dirLock struct{ l *lockfile.Lock }

// lockDir takes the lock of dir (created) or returns an error naming the holder.
func lockDir(dir string) (*dirLock, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	l, err := lockfile.Acquire(filepath.Join(dir, "run"))
	if err != nil {
		var he *lockfile.HeldError
		if errors.As(err, &he) {
			return nil, fmt.Errorf("run directory %s is in use by %s; wait for it to finish or stop it", dir, strings.TrimSpace(he.Holder))
		}
		return nil, err
	}
	return &dirLock{l: l}, nil
}

// unlock releases the lock.
func (l *dirLock) unlock() error {
	if l == nil || l.l == nil {
		return nil
	}
	err := l.l.Release()
	l.l = nil
	return err
}

// appender appends lines to a JSONL file opened with O_APPEND under an exclusive lock. Each line is
// one write call, so a killed process leaves whole lines and at most one torn last line.
type appender struct {
	path string
	f    *os.File
}

func openAppend(path string) (*appender, error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return nil, err
	}
	if err := lockfile.TryLock(f); err != nil {
		f.Close()
		if errors.Is(err, lockfile.ErrLocked) {
			return nil, fmt.Errorf("%s is being written by another process", path)
		}
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	return &appender{path: path, f: f}, nil
}

// write appends line (which ends in a newline).
func (a *appender) write(line []byte) error {
	if _, err := a.f.Write(line); err != nil {
		return fmt.Errorf("write %s: %w", a.path, err)
	}
	return nil
}

func (a *appender) close() error {
	if a == nil || a.f == nil {
		return nil
	}
	err := a.f.Close()
	a.f = nil
	return err
}

// lineHead is the part of a record or timing line that resuming and ordering read (Backend and Model:
// of a predictions file's lines).
type lineHead struct {
	ID      string `json:"id"`
	Error   string `json:"error"`
	Backend string `json:"backend"`
	Model   string `json:"model"`
}

// repairTail truncates a torn last line (one without its newline, left by a killed writer); a last
// line that is a whole JSON object without its newline gets the newline instead. It returns the number
// of bytes dropped.
func repairTail(path string) (int64, error) {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if errors.Is(err, os.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return 0, err
	}
	size := st.Size()
	if size == 0 {
		return 0, nil
	}
	// Search backwards for the last newline.
	const chunk = 64 << 10
	buf := make([]byte, chunk)
	end := size
	for end > 0 {
		start := max(end-chunk, 0)
		n, err := f.ReadAt(buf[:end-start], start)
		if err != nil && !errors.Is(err, io.EOF) {
			return 0, err
		}
		if i := bytes.LastIndexByte(buf[:n], '\n'); i >= 0 {
			return cutTail(f, start+int64(i)+1, size)
		}
		end = start
	}
	return cutTail(f, 0, size)
}

// cutTail ends f (of size bytes) after its last newline, at keep: the line after it is cut unless it
// is a whole JSON object, which gets its newline.
func cutTail(f *os.File, keep, size int64) (int64, error) {
	if keep == size {
		return 0, nil
	}
	tail := make([]byte, size-keep)
	if _, err := f.ReadAt(tail, keep); err != nil && !errors.Is(err, io.EOF) {
		return 0, err
	}
	if t := bytes.TrimSpace(tail); len(t) > 0 && t[0] == '{' && json.Valid(t) {
		_, err := f.WriteAt([]byte("\n"), size)
		return 0, err
	}
	return size - keep, f.Truncate(keep)
}

// eachLine calls fn with every line of path (without its newline) and its offset; blank lines are
// skipped.
func eachLine(path string, fn func(off int64, line []byte) error) error {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	defer f.Close()
	r := bufio.NewReaderSize(f, 256<<10)
	var off int64
	var long []byte
	for {
		line, err := r.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			long = append(long, line...)
			continue
		}
		if long != nil {
			line = append(long, line...)
			long = nil
		}
		if len(line) > 0 {
			n := int64(len(line))
			body := bytes.TrimSuffix(line, []byte("\n"))
			if len(bytes.TrimSpace(body)) > 0 {
				if ferr := fn(off, body); ferr != nil {
					return ferr
				}
			}
			off += n
		}
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

// scanned is what a records file holds, for resuming.
type scanned struct {
	// done are the ids whose last record has no error.
	done map[string]bool
	// records counts the lines, failed those with an error.
	records, failed int
	// labels are the distinct "backend / model" of the lines, in first-seen order.
	labels []string
}

// scanDone repairs a records file's tail and returns the ids recorded without error.
func scanDone(path string) (map[string]bool, error) {
	sc, err := scanRecords(path)
	if err != nil {
		return nil, err
	}
	return sc.done, nil
}

// scanRecords repairs a records file's tail (repairTail) and reads what it holds; a line that is not
// a JSON object is an error naming it.
func scanRecords(path string) (*scanned, error) {
	if _, err := repairTail(path); err != nil {
		return nil, fmt.Errorf("repair %s: %w", path, err)
	}
	sc := &scanned{done: map[string]bool{}}
	seen := map[string]bool{}
	err := eachLine(path, func(_ int64, line []byte) error {
		sc.records++
		var h lineHead
		if err := json.Unmarshal(line, &h); err != nil {
			return fmt.Errorf("%s:%d: not a record: %w", path, sc.records, err)
		}
		if h.ID == "" {
			return fmt.Errorf("%s:%d: not a record: no \"id\"", path, sc.records)
		}
		sc.done[h.ID] = h.Error == ""
		if h.Error != "" {
			sc.failed++
		}
		if l := h.Backend + " / " + h.Model; !seen[l] {
			seen[l] = true
			sc.labels = append(sc.labels, l)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	for id, ok := range sc.done {
		if !ok {
			delete(sc.done, id)
		}
	}
	return sc, nil
}

// sortFile rewrites a JSONL file with one line per id, the last one written, in the order pos gives
// (id → position); ids pos lacks follow in file order. It writes a temporary file beside it and
// renames it into place, so an interruption leaves the old file. Memory: one offset per line.
func sortFile(path string, pos map[string]int) (lines int, err error) {
	if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
		return 0, nil
	}
	if _, err := repairTail(path); err != nil {
		return 0, err
	}
	type ent struct {
		pos, seq int
		off      int64
		n        int
	}
	last := map[string]int{}
	var ents []ent
	seq := 0
	err = eachLine(path, func(off int64, line []byte) error {
		var h lineHead
		if err := json.Unmarshal(line, &h); err != nil {
			return fmt.Errorf("%s: line at byte %d: %w", path, off, err)
		}
		p, ok := pos[h.ID]
		if !ok {
			p = len(pos) + seq
		}
		e := ent{pos: p, seq: seq, off: off, n: len(line)}
		seq++
		if i, dup := last[h.ID]; dup {
			ents[i] = e
			return nil
		}
		last[h.ID] = len(ents)
		ents = append(ents, e)
		return nil
	})
	if err != nil {
		return 0, err
	}
	sort.Slice(ents, func(i, j int) bool {
		if ents[i].pos != ents[j].pos {
			return ents[i].pos < ents[j].pos
		}
		return ents[i].seq < ents[j].seq
	})
	in, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer in.Close()
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".sort-*")
	if err != nil {
		return 0, err
	}
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	w := bufio.NewWriterSize(tmp, 256<<10)
	var buf []byte
	for _, e := range ents {
		if cap(buf) < e.n+1 {
			buf = make([]byte, e.n+1)
		}
		b := buf[:e.n]
		if _, err := in.ReadAt(b, e.off); err != nil {
			return 0, fmt.Errorf("read %s: %w", path, err)
		}
		w.Write(b)
		w.WriteByte('\n')
	}
	if err := w.Flush(); err != nil {
		return 0, err
	}
	if err := tmp.Chmod(0o644); err != nil {
		return 0, err
	}
	if err := tmp.Sync(); err != nil {
		return 0, err
	}
	if err := tmp.Close(); err != nil {
		return 0, err
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return 0, err
	}
	return len(ents), nil
}
