package predict

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"slices"
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

// Resume is a predictions file opened for appending the records a resumed run still has to write.
type Resume struct {
	// Done is what the file held.
	*Done
	// File is the predictions file, positioned after its last well-formed record (a cut-short last
	// line is truncated; a missing final newline has been written). The caller closes it.
	File *os.File
	// Todo are the positions in the selected ids of the examples still to run, in order: those without a
	// successful record (failed ones are retried).
	Todo []int
}

// OpenResume opens the predictions file at path (created if missing) to resume a run over the selected
// example ids. known reports whether an id belongs to the dataset, named dataset in errors: a record for
// any other id is an error (the file holds another dataset's predictions), found before anything is
// written.
func OpenResume(path string, selected []string, known func(id string) bool, dataset string) (*Resume, error) {
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
	r := &Resume{Done: done}
	for i, id := range selected {
		if !done.IDs[id] {
			r.Todo = append(r.Todo, i)
		}
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return nil, fmt.Errorf("resume: %w", err)
	}
	if err := f.Truncate(done.Size); err != nil {
		f.Close()
		return nil, fmt.Errorf("resume: truncate the cut-short last line of %s: %w", path, err)
	}
	if _, err := f.Seek(done.Size, io.SeekStart); err != nil {
		f.Close()
		return nil, fmt.Errorf("resume %s: %w", path, err)
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
