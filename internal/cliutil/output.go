package cliutil

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime/debug"
	"slices"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/ragbench/ragbench/internal/progress"
)

// OutputFlags are the global flags that set how much a command says on stderr.
func OutputFlags() []cli.Flag {
	return []cli.Flag{
		&cli.BoolFlag{Name: "verbose", Usage: "also print internal detail on stderr (spill and merge lines, per-phase timings)"},
		&cli.BoolFlag{Name: "quiet", Usage: "print only warnings and errors on stderr (no progress, no notes)"},
	}
}

// InfoWriter is where progress and summary notes go: stderr, or nowhere with --quiet.
func InfoWriter(c *cli.Context) io.Writer {
	if c.Bool("quiet") {
		return io.Discard
	}
	return c.App.ErrWriter
}

// VerboseWriter is where internal detail (spill and merge lines, per-phase timings) goes: stderr with
// --verbose, else nowhere.
func VerboseWriter(c *cli.Context) io.Writer {
	if c.Bool("verbose") && !c.Bool("quiet") {
		return c.App.ErrWriter
	}
	return io.Discard
}

// FormatFlags are --format, the output format (one of values; the first is the default), and the
// hidden --json kept for scripts (= --format json).
func FormatFlags(values ...string) []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "format", Aliases: []string{"f"}, Value: values[0], Usage: "output format: " + strings.Join(values, ", ")},
		&cli.BoolFlag{Name: "json", Hidden: true, Usage: "deprecated: --format json"},
	}
}

// OutputFormat returns the --format of FormatFlags, checked against values.
func OutputFormat(c *cli.Context, values ...string) (string, error) {
	f := c.String("format")
	if c.Bool("json") {
		if c.IsSet("format") && f != "json" {
			return "", Usagef("--json and --format %s disagree; give --format only", f)
		}
		f = "json"
	}
	if !slices.Contains(values, f) {
		return "", Usagef("--format %q: want %s", f, strings.Join(values, ", "))
	}
	return f, nil
}

// OldFlag is a hidden string flag keeping a renamed flag's old name working.
func OldFlag(old, now string) cli.Flag {
	return &cli.StringFlag{Name: old, Hidden: true, Usage: "deprecated: --" + now}
}

// Renamed returns the value of the string flag now, or of its old name old (see OldFlag), with a
// deprecation note on stderr; giving both is a usage error.
func Renamed(c *cli.Context, now, old string) (string, error) {
	if !c.IsSet(old) {
		return c.String(now), nil
	}
	if c.IsSet(now) {
		return "", Usagef("--%s is the old name of --%s; give --%s only", old, now, now)
	}
	fmt.Fprintf(InfoWriter(c), "note: --%s is deprecated here; it is now --%s\n", old, now)
	return c.String(old), nil
}

// ProgressWriter is where a command's progress lines go: every line with --verbose; on a terminal
// (and not --quiet) one status line rewritten in place, with an ETA when the line counts "n/N";
// elsewhere (a log file) every line when the lines are user-level progress (logged), else nowhere
// (builder internals). done clears the status line; call it before printing the summary.
func ProgressWriter(c *cli.Context, logged bool) (w io.Writer, done func()) {
	switch {
	case c.Bool("quiet"):
		return io.Discard, func() {}
	case c.Bool("verbose"):
		return c.App.ErrWriter, func() {}
	case !IsTerminal(c.App.ErrWriter) && logged:
		return c.App.ErrWriter, func() {}
	case !IsTerminal(c.App.ErrWriter):
		return io.Discard, func() {}
	}
	s := progress.New(c.App.ErrWriter)
	return s, s.Clear
}

// IsTerminal reports whether w is a character device (a terminal).
func IsTerminal(w any) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// GitCommit returns the commit the binary was built from (from the build info, else from git in the
// working directory), with "-dirty" for a modified tree, or "unknown".
func GitCommit() string {
	if bi, ok := debug.ReadBuildInfo(); ok {
		rev, dirty := "", false
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				rev = s.Value
			case "vcs.modified":
				dirty = s.Value == "true"
			}
		}
		if rev != "" {
			if dirty {
				rev += "-dirty"
			}
			return rev
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, "git", "rev-parse", "HEAD").Output()
	if err != nil {
		return "unknown"
	}
	return strings.TrimSpace(string(out))
}
