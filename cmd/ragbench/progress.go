package main

import (
	"io"

	"github.com/urfave/cli/v2"

	"github.com/ragbench/ragbench/internal/progress"
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
	s := progress.New(c.App.ErrWriter)
	return s, s.Clear
}
