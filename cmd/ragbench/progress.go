package main

import (
	"bytes"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"time"

	"github.com/urfave/cli/v2"
)

// progressWriter is where a command's progress lines go: every line with --verbose; on a terminal
// (and not --quiet) one status line rewritten in place, with an ETA when the line counts "n/N";
// elsewhere (a log file) every line when the lines are user-level progress (logged), else nowhere
// (builder internals). done clears the status line; call it before printing the summary.
func progressWriter(c *cli.Context, logged bool) (w io.Writer, done func()) {
	switch {
	case c.Bool("quiet"):
		return io.Discard, func() {}
	case c.Bool("verbose"):
		return c.App.ErrWriter, func() {}
	case !isTerminal(c.App.ErrWriter) && logged:
		return c.App.ErrWriter, func() {}
	case !isTerminal(c.App.ErrWriter):
		return io.Discard, func() {}
	}
	s := &statusLine{w: c.App.ErrWriter, start: time.Now(), now: time.Now}
	return s, s.clear
}

// statusLine shows the last complete line written to it on one terminal line.
type statusLine struct {
	w     io.Writer
	buf   []byte
	start time.Time
	now   func() time.Time
	shown bool
}

var countRE = regexp.MustCompile(`(\d+)/(\d+)`)

func (s *statusLine) Write(p []byte) (int, error) {
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
func (s *statusLine) withETA(line string) string {
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

func (s *statusLine) clear() {
	if s.shown {
		fmt.Fprint(s.w, "\r\033[K")
		s.shown = false
	}
}
