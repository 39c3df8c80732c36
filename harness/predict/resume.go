package predict

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"strings"

	"github.com/ragbench/ragbench/internal/atomicfile"
	"github.com/ragbench/ragbench/internal/lockfile"
)

// Done is what an existing predictions file holds, for resuming.
type Done struct {
	// IDs are the examples with a successful record; a resumed run skips them.
	IDs map[string]bool
	// Failed counts records with an error (a resumed run retries those examples).
	Failed int
	// Records counts all records read.
	Records int
	// Backends lists the distinct "backend / model" labels seen, in first-seen order.
	Backends []string
	// Size is the byte length of the well-formed part of the file: a last line cut short by a kill
	// (no newline, not valid JSON) lies beyond it and is to be truncated before appending.
	Size int64
	// NeedNewline is true when the last record has no final newline (one is to be written first).
	NeedNewline bool
}

// ReadDone reads a predictions file written by Run (a missing file is an empty Done). A malformed
// line other than a cut-short last line is an error naming the line.
func ReadDone(path string) (*Done, error) {
	d := &Done{IDs: map[string]bool{}}
	f, err := os.Open(path)
	if os.IsNotExist(err) {
		return d, nil
	}
	if err != nil {
		return nil, fmt.Errorf("resume: %w", err)
	}
	defer f.Close()
	br := bufio.NewReaderSize(f, 1<<16)
	seen := map[string]bool{}
	for n := 1; ; n++ {
		line, err := br.ReadBytes('\n')
		if len(line) == 0 && err == io.EOF {
			return d, nil
		}
		if err != nil && err != io.EOF {
			return nil, fmt.Errorf("resume %s:%d: %w", path, n, err)
		}
		complete := err == nil
		b := bytes.TrimSpace(line)
		if len(b) == 0 {
			if !complete {
				return d, nil // trailing blanks without a newline are truncated
			}
			d.Size += int64(len(line))
			continue
		}
		var rec struct {
			ID      *string `json:"id"`
			Error   string  `json:"error"`
			Backend string  `json:"backend"`
			Model   string  `json:"model"`
		}
		if jerr := json.Unmarshal(b, &rec); jerr != nil || rec.ID == nil {
			if !complete {
				return d, nil // a last line cut short: Size stops before it
			}
			if jerr == nil {
				jerr = fmt.Errorf("no \"id\" field")
			}
			return nil, fmt.Errorf("resume %s:%d: not a prediction record: %v", path, n, jerr)
		}
		d.Size += int64(len(line))
		d.Records++
		if rec.Error != "" {
			d.Failed++
		} else {
			d.IDs[*rec.ID] = true
		}
		if l := rec.Backend + " / " + rec.Model; !seen[l] {
			seen[l] = true
			d.Backends = append(d.Backends, l)
		}
		if !complete {
			d.NeedNewline = true
			return d, nil
		}
	}
}

// Settings are what determines a record besides its example: backend, model, prompt templates and
// their hash, shots, extraction rule, generation limits. They are stored beside the predictions file
// (SettingsPath) when it is created, and a resume with other settings is refused, naming each
// difference.
type Settings map[string]string

// SettingsPath is the sidecar of a predictions file holding the Settings it was made with.
func SettingsPath(path string) string { return path + ".settings.json" }

// diff lists the keys whose values differ between the stored settings and s, as "key: stored → now".
func (s Settings) diff(stored Settings) []string {
	keys := map[string]bool{}
	for k := range s {
		keys[k] = true
	}
	for k := range stored {
		keys[k] = true
	}
	var out []string
	for _, k := range slices.Sorted(maps.Keys(keys)) {
		if s[k] != stored[k] {
			out = append(out, fmt.Sprintf("%s: %q then, %q now", k, stored[k], s[k]))
		}
	}
	return out
}

// ResumeOptions configure OpenResume.
type ResumeOptions struct {
	// Settings of this run; nil skips the check (and writes no sidecar).
	Settings Settings
	// Force appends even when the stored settings differ (the sidecar is then rewritten).
	Force bool
}

// Resume is a predictions file opened for appending the records a resumed run still has to write.
type Resume struct {
	// Done is what the file held.
	*Done
	lock *lockfile.Lock
	// File is the predictions file, positioned after its last well-formed record (a cut-short last
	// line is truncated; a missing final newline has been written). The caller closes it.
	File *os.File
	// Todo are the positions in the selected ids of the examples still to run, in order: those without a
	// successful record (failed ones are retried).
	Todo []int
}

// OpenResume opens the predictions file at path (created if missing) to resume a run over the selected
// example ids. It first takes the file's lock (a second writer is refused, naming the holder). known
// reports whether an id belongs to the dataset, named dataset in errors: a record for any other id is
// an error (the file holds another dataset's predictions); so is a file made with other settings
// (o.Settings against the stored sidecar), unless o.Force. All this is found before anything is
// written. Close the Resume to release the lock.
func OpenResume(path string, selected []string, known func(id string) bool, dataset string, o ResumeOptions) (r *Resume, err error) {
	lock, err := lockfile.Acquire(path)
	if err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			lock.Release()
		}
	}()
	done, err := ReadDone(path)
	if err != nil {
		return nil, err
	}
	stray := make([]string, 0)
	for id := range done.IDs {
		if !known(id) {
			stray = append(stray, id)
		}
	}
	if len(stray) > 0 {
		slices.Sort(stray)
		return nil, fmt.Errorf("resume %s: it holds a record for id %q, which is not in %s (another dataset's predictions?)", path, stray[0], dataset)
	}
	if o.Settings != nil {
		if err := checkSettings(path, done, o); err != nil {
			return nil, err
		}
	}
	r = &Resume{Done: done, lock: lock}
	for i, id := range selected {
		if !done.IDs[id] {
			r.Todo = append(r.Todo, i)
		}
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("resume: %w", err)
	}
	if err := f.Truncate(done.Size); err != nil {
		f.Close()
		return nil, fmt.Errorf("resume: truncate the cut-short last line of %s: %w", path, err)
	}
	if done.NeedNewline {
		if _, err := f.Write([]byte("\n")); err != nil {
			f.Close()
			return nil, fmt.Errorf("resume %s: %w", path, err)
		}
	}
	r.File = f
	return r, nil
}

// Close closes the file and releases its lock.
func (r *Resume) Close() error {
	err := r.File.Close()
	if lerr := r.lock.Release(); err == nil {
		err = lerr
	}
	return err
}

// checkSettings compares o.Settings with the sidecar of path (or, for a file made before sidecars, the
// backend and model its records name), and writes the sidecar for a new file or a forced resume.
func checkSettings(path string, done *Done, o ResumeOptions) error {
	sp := SettingsPath(path)
	data, err := os.ReadFile(sp)
	switch {
	case err == nil:
		var stored Settings
		if err := json.Unmarshal(data, &stored); err != nil {
			return fmt.Errorf("resume %s: %s: %w", path, sp, err)
		}
		if d := o.Settings.diff(stored); len(d) > 0 && !o.Force {
			return fmt.Errorf("resume %s: it was made with other settings (%s); use another --out, or --force to append anyway", path, strings.Join(d, "; "))
		} else if len(d) == 0 {
			return nil
		}
	case !errors.Is(err, os.ErrNotExist):
		return fmt.Errorf("resume %s: %w", path, err)
	case done.Records > 0 && !o.Force:
		// A file from before settings were stored: its records still name backend and model.
		want := o.Settings["backend"] + " / " + o.Settings["model"]
		for _, b := range done.Backends {
			if b != want && b != " / " {
				return fmt.Errorf("resume %s: its records were made by %s, this run is %s; use another --out, or --force to append anyway", path, b, want)
			}
		}
	}
	data, err = json.MarshalIndent(o.Settings, "", "  ")
	if err != nil {
		return err
	}
	return atomicfile.WriteFile(sp, append(data, '\n'), 0o644)
}
