// Package trec reads and writes TREC run files — one line "qid Q0 docid rank score tag" per retrieved
// document — and reads the query files that a run is made from.
package trec

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"unicode"

	"github.com/ragbench/ragbench/harness/retrieval"
)

// Line is one line of a run: the document ranked Rank for query QID, with its score and the run's tag.
type Line struct {
	QID   string
	DocID string
	Rank  int
	Score float64
	Tag   string
}

// Writer writes a run. Each line is "qid Q0 docid rank score tag" with the score printed to six decimal
// places; white space inside a qid or docid is replaced by "_" (see Field), so the line always has six
// fields. Call Flush when done.
type Writer struct {
	w   *bufio.Writer
	tag string
}

// NewWriter returns a Writer of run lines tagged tag (which must hold no white space).
func NewWriter(w io.Writer, tag string) *Writer {
	return &Writer{w: bufio.NewWriter(w), tag: tag}
}

// Write writes the hits of one query, in the order given, with each hit's own Rank and Score.
func (w *Writer) Write(qid string, hits []retrieval.Hit) error {
	q := Field(qid)
	for _, h := range hits {
		if _, err := fmt.Fprintf(w.w, "%s Q0 %s %d %.6f %s\n", q, Field(h.ID), h.Rank, h.Score, w.tag); err != nil {
			return err
		}
	}
	return nil
}

// Flush writes any buffered lines to the underlying writer.
func (w *Writer) Flush() error { return w.w.Flush() }

// Field returns s with each run of white space (as unicode.IsSpace defines it, the same as ReadRun's
// field separator) replaced by one "_" and leading and trailing white space removed, so that it is one
// column of a run line. A string without white space is returned as it is.
func Field(s string) string {
	if strings.IndexFunc(s, unicode.IsSpace) < 0 {
		return s
	}
	return strings.Join(strings.Fields(s), "_")
}

// ReadRun reads a run: lines of six white-space separated fields "qid Q0 docid rank score tag" (the
// second field is not checked; trec_eval ignores it too). Blank lines are skipped. A line with another
// number of fields, a rank that is not a positive integer or a score that is not a finite number is an
// error naming name and the line.
func ReadRun(r io.Reader, name string) ([]Line, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<16), 16<<20)
	var out []Line
	n := 0
	for sc.Scan() {
		n++
		f := strings.Fields(sc.Text())
		if len(f) == 0 {
			continue
		}
		if len(f) != 6 {
			return nil, fmt.Errorf("%s:%d: want 6 fields (qid Q0 docid rank score tag), got %d", name, n, len(f))
		}
		rank, err := strconv.Atoi(f[3])
		if err != nil || rank <= 0 {
			return nil, fmt.Errorf("%s:%d: rank %q is not a positive integer", name, n, f[3])
		}
		score, err := strconv.ParseFloat(f[4], 64)
		if err != nil || math.IsInf(score, 0) || math.IsNaN(score) {
			return nil, fmt.Errorf("%s:%d: score %q is not a finite number", name, n, f[4])
		}
		out = append(out, Line{QID: f[0], DocID: f[2], Rank: rank, Score: score, Tag: f[5]})
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: after line %d: %w", name, n, err)
	}
	return out, nil
}
