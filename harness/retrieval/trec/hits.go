package trec

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/ragbench/ragbench/harness/retrieval"
)

// HitFormats are the formats a HitWriter writes: a TREC run, readable text with the passages, or
// JSON lines {qid, hits}.
var HitFormats = []string{"trec", "text", "json"}

// HitWriter writes each query's hits in one of HitFormats.
type HitWriter struct {
	format string
	w      *bufio.Writer
	run    *Writer
}

// NewHitWriter returns a writer of hits to w in format (one of HitFormats; anything else is trec),
// tagging TREC lines with tag.
func NewHitWriter(w io.Writer, format, tag string) *HitWriter {
	return &HitWriter{format: format, w: bufio.NewWriter(w), run: NewWriter(w, tag)}
}

// Write writes one query's hits.
func (h *HitWriter) Write(q Query, hits []retrieval.Hit) error {
	switch h.format {
	case "json":
		b, err := json.Marshal(map[string]any{"qid": q.ID, "hits": hits})
		if err != nil {
			return err
		}
		h.w.Write(b)
		return h.w.WriteByte('\n')
	case "text":
		return WriteHitText(h.w, q, hits)
	}
	return h.run.Write(q.ID, hits)
}

// Flush writes out what is buffered (also after an error, so that the lines written stay).
func (h *HitWriter) Flush() error {
	if err := h.w.Flush(); err != nil {
		return err
	}
	return h.run.Flush()
}

// WriteHitText prints a query's hits readably: a header line "# QID: QUERY", then per hit its rank,
// id, score and title, and the passage text indented with white space runs collapsed.
func WriteHitText(w io.Writer, q Query, hits []retrieval.Hit) error {
	if _, err := fmt.Fprintf(w, "# %s: %s\n", q.ID, q.Text); err != nil {
		return err
	}
	for _, h := range hits {
		title := ""
		if h.Title != "" {
			title = "  " + h.Title
		}
		if _, err := fmt.Fprintf(w, "%d. %s  %.4f%s\n   %s\n", h.Rank, h.ID, h.Score, title, strings.Join(strings.Fields(h.Text), " ")); err != nil {
			return err
		}
	}
	return nil
}
