package predict

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
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
