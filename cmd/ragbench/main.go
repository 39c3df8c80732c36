// Command ragbench is the benchmark and evaluation harness for retrieval-augmented generation research.
//
// main is thin: it calls run, which builds the command tree, and maps errors to exit codes
// (0 success, 1 failure, 2 bad usage).
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"reflect"
	"slices"
	"sort"
	"strings"
	"syscall"

	"github.com/urfave/cli/v2"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "dev"

// registry holds the top-level commands; each command-group file appends to it in an init function,
// so that files for different command groups never touch one another.
var registry []*cli.Command

// register adds top-level commands to the application.
func register(cmds ...*cli.Command) { registry = append(registry, cmds...) }

// usageError marks an error caused by bad usage; run's caller exits 2 on it.
type usageError struct{ err error }

func (u usageError) Error() string { return u.err.Error() }
func (u usageError) Unwrap() error { return u.err }

// usagef returns a usage error (exit code 2).
func usagef(format string, args ...any) error {
	return usageError{fmt.Errorf(format, args...)}
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args, os.Stdout, os.Stderr)
	stop()
	os.Exit(exitCode(err, os.Stderr))
}

// exitCode prints err to stderr and maps it to the process exit code.
func exitCode(err error, stderr io.Writer) int {
	if err == nil {
		return 0
	}
	fmt.Fprintln(stderr, "ragbench:", err)
	var u usageError
	if errors.As(err, &u) {
		return 2
	}
	return 1
}

// run builds the application and runs it with args (args[0] is the program name).
func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	cmds := append([]*cli.Command(nil), registry...)
	sort.Slice(cmds, func(i, j int) bool { return cmds[i].Name < cmds[j].Name })
	app := &cli.App{
		Name:                 "ragbench",
		Usage:                "benchmark and evaluation harness for retrieval-augmented generation",
		Version:              versionString(),
		Flags:                outputFlags(),
		Writer:               stdout,
		ErrWriter:            stderr,
		Commands:             cmds,
		EnableBashCompletion: true,
		// Errors are printed once by main; keep urfave/cli from exiting the process.
		ExitErrHandler: func(*cli.Context, error) {},
		OnUsageError: func(c *cli.Context, err error, isSub bool) error {
			return usageError{err}
		},
		CommandNotFound: func(c *cli.Context, name string) {},
	}
	for _, c := range cmds {
		setUsageHandler(c)
	}
	if len(args) <= 1 {
		app.Writer = stderr
		if err := app.RunContext(ctx, []string{"ragbench", "--help"}); err != nil {
			return err
		}
		return usagef("no command given")
	}
	if err := repeatedFlag(app, args[1:]); err != nil {
		return err
	}
	var unknown string
	app.CommandNotFound = func(c *cli.Context, name string) { unknown = name }
	err := app.RunContext(ctx, args)
	if err == nil && unknown != "" {
		return usagef("unknown command %q; see 'ragbench --help'", unknown)
	}
	return err
}

// setUsageHandler makes flag-parsing errors and missing required flags in every subcommand usage
// errors (exit 2), and gives every command the output flags (--quiet, --verbose) so that they may be
// written after the command name too.
func setUsageHandler(c *cli.Command) {
	c.OnUsageError = func(_ *cli.Context, err error, _ bool) error { return usageError{err} }
	var required []string
	for _, f := range c.Flags {
		// urfave/cli reports a missing required flag as a plain error after printing help on stdout;
		// check it here instead, as a usage error.
		if r, ok := f.(cli.RequiredFlag); ok && r.IsRequired() {
			required = append(required, f.Names()[0])
			if v := reflect.ValueOf(f); v.Kind() == reflect.Pointer {
				if fld := v.Elem().FieldByName("Required"); fld.IsValid() && fld.CanSet() {
					fld.SetBool(false)
				}
			}
		}
	}
	if len(required) > 0 {
		before := c.Before
		c.Before = func(ctx *cli.Context) error {
			var missing []string
			for _, n := range required {
				if !ctx.IsSet(n) {
					missing = append(missing, "--"+n)
				}
			}
			if len(missing) > 0 {
				return usagef("%s needs %s (see 'ragbench %s --help')", c.Name, strings.Join(missing, " and "), c.FullName())
			}
			if before != nil {
				return before(ctx)
			}
			return nil
		}
	}
	if !slices.ContainsFunc(c.Flags, func(f cli.Flag) bool { return f.Names()[0] == "quiet" }) {
		c.Flags = append(c.Flags, outputFlags()...)
	}
	for _, s := range c.Subcommands {
		setUsageHandler(s)
	}
}

// outputFlags are the global flags that set how much a command says on stderr.
func outputFlags() []cli.Flag {
	return []cli.Flag{
		&cli.BoolFlag{Name: "verbose", Usage: "also print internal detail on stderr (spill and merge lines, per-phase timings)"},
		&cli.BoolFlag{Name: "quiet", Usage: "print only warnings and errors on stderr (no progress, no notes)"},
	}
}

// repeatedFlag returns a usage error when a single-value flag is given twice for one command:
// urfave/cli would silently keep the last value. Repeatable (slice) flags and booleans are fine.
func repeatedFlag(app *cli.App, args []string) error {
	flags, subs := app.Flags, app.Commands
	seen := map[string]bool{}
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			return nil
		}
		if !strings.HasPrefix(a, "-") || a == "-" {
			for _, s := range subs {
				if s.HasName(a) {
					flags, subs, seen = s.Flags, s.Subcommands, map[string]bool{}
					break
				}
			}
			continue
		}
		name, _, hasValue := strings.Cut(strings.TrimLeft(a, "-"), "=")
		for _, f := range flags {
			if !slices.Contains(f.Names(), name) {
				continue
			}
			takes := false
			if v, ok := f.(cli.DocGenerationFlag); ok {
				takes = v.TakesValue()
			}
			if !takes {
				break
			}
			if !hasValue {
				i++ // the value
			}
			if isSliceFlag(f) {
				break
			}
			key := f.Names()[0]
			if seen[key] {
				return usagef("--%s is given more than once; it takes one value (the last would silently win)", key)
			}
			seen[key] = true
			break
		}
	}
	return nil
}

// isSliceFlag reports whether f may be repeated to give several values.
func isSliceFlag(f cli.Flag) bool {
	switch f.(type) {
	case *cli.StringSliceFlag, *cli.IntSliceFlag, *cli.Int64SliceFlag, *cli.Float64SliceFlag, *cli.UintSliceFlag, *cli.Uint64SliceFlag:
		return true
	}
	return false
}
