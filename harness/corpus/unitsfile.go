package corpus

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
)

// UnitsFile is the name of the units sidecar in a unit index directory (`ragbench index build
// --units` writes one per granularity, OUT/gN/units.jsonl).
const UnitsFile = "units.jsonl"

// The units sidecar is JSON Lines, one Unit per line in the order the units were indexed, with the
// Text field left out (the text is in the index): id, doc_id, title (when not empty), size, start, end,
// tokens and parent (when not empty). WriteUnit writes a line; ReadUnits and ReadUnitsFile read them.

// WriteUnit appends u to a units sidecar without its text.
func WriteUnit(enc *json.Encoder, u Unit) error {
	u.Text = ""
	return enc.Encode(u)
}

// ReadUnits calls fn for each unit of a units sidecar, in file order. A line that is not a unit
// (bad JSON, no id, no doc_id, a span that is not 0 <= start < end, a size below 1) is an error naming
// the line; blank lines are skipped. An error from fn stops the read and is returned.
func ReadUnits(r io.Reader, fn func(Unit) error) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	line := 0
	for sc.Scan() {
		line++
		b := bytes.TrimSpace(sc.Bytes())
		if len(b) == 0 {
			continue
		}
		var u Unit
		if err := json.Unmarshal(b, &u); err != nil {
			return fmt.Errorf("line %d: %w", line, err)
		}
		switch {
		case u.ID == "":
			return fmt.Errorf("line %d: unit without an id", line)
		case u.DocID == "":
			return fmt.Errorf("line %d: unit %q without a doc_id", line, u.ID)
		case u.Start < 0 || u.End <= u.Start:
			return fmt.Errorf("line %d: unit %q has sentence span [%d, %d)", line, u.ID, u.Start, u.End)
		case u.Size < 1 && u.Size != LongSize:
			return fmt.Errorf("line %d: unit %q has size %d", line, u.ID, u.Size)
		}
		if err := fn(u); err != nil {
			return err
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("line %d: %w", line+1, err)
	}
	return nil
}

// ReadUnitsFile is ReadUnits on the file at path; errors name the file.
func ReadUnitsFile(path string, fn func(Unit) error) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	if err := ReadUnits(f, fn); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}
