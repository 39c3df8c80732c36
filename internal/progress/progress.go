// Package progress shows a command's progress lines on a terminal as one status line rewritten in
// place, with an estimate of the time left when a line counts "n/N".
package progress

import (
	"bytes"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"time"
)

// New returns a StatusLine writing to w (a terminal), timing from now.
func New(w io.Writer) *StatusLine {
	return &StatusLine{w: w, start: time.Now(), now: time.Now}
}

// StatusLine shows the last complete line written to it on one terminal line. It is an io.Writer for
// the progress lines of a builder or runner; Clear erases the line before a summary is printed.
type StatusLine struct {
	w     io.Writer
	buf   []byte
	start time.Time
	now   func() time.Time
	shown bool
}

var countRE = regexp.MustCompile(`(\d+)/(\d+)`)

// Write implements io.Writer: each complete line replaces the status line.
func (s *StatusLine) Write(p []byte) (int, error) {
	s.buf = append(s.buf, p...)
	for {
		i := bytes.IndexByte(s.buf, '\n')
		if i < 0 {
			return len(p), nil
		}
		line := string(s.buf[:i])
		s.buf = s.buf[i+1:]
		fmt.Fprintf(s.w, "\r\033[K%s", s.withETA(line))
		s.shown = true
	}
}

// withETA appends the estimated time left when the line counts n of N done, cut to fit a terminal.
func (s *StatusLine) withETA(line string) string {
	if m := countRE.FindStringSubmatch(line); m != nil {
		n, _ := strconv.Atoi(m[1])
		total, _ := strconv.Atoi(m[2])
		if n > 0 && total > n {
			el := s.now().Sub(s.start)
			line += fmt.Sprintf("  ETA %v", (el * time.Duration(total-n) / time.Duration(n)).Round(time.Second))
		}
	}
	if r := []rune(line); len(r) > 119 {
		line = string(r[:118]) + "…"
	}
	return line
}

// Clear erases the status line, if one is shown.
func (s *StatusLine) Clear() {
	if s.shown {
		fmt.Fprint(s.w, "\r\033[K")
		s.shown = false
	}
}
