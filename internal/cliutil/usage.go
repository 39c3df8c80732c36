package cliutil

import (
	"flag"
	"fmt"
	"io"
	"reflect"
	"slices"
	"strings"

	"github.com/urfave/cli/v2"
)

// UsageError marks an error caused by bad usage; a command exits 2 on it.
type UsageError struct{ Err error }

func (u UsageError) Error() string { return u.Err.Error() }
func (u UsageError) Unwrap() error { return u.Err }

// Usagef returns a usage error.
func Usagef(format string, args ...any) error {
	return UsageError{fmt.Errorf(format, args...)}
}

// SetUsageHandler makes flag-parsing errors and missing required flags in c and every subcommand
// usage errors, and gives every command the OutputFlags (--quiet, --verbose) so that they may be
// written after the command name too.
func SetUsageHandler(c *cli.Command) {
	c.OnUsageError = func(_ *cli.Context, err error, _ bool) error { return UsageError{err} }
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
				path := CommandPath(ctx)
				return Usagef("%s needs %s (see 'ragbench %s --help')", path, strings.Join(missing, " and "), path)
			}
			if before != nil {
				return before(ctx)
			}
			return nil
		}
	}
	if !slices.ContainsFunc(c.Flags, func(f cli.Flag) bool { return f.Names()[0] == "quiet" }) {
		c.Flags = append(c.Flags, OutputFlags()...)
	}
	for _, s := range c.Subcommands {
		SetUsageHandler(s)
	}
}

// RepeatedFlag returns a usage error when a single-value flag is given twice for one command in args
// (the arguments after the program name): urfave/cli would silently keep the last value. Repeatable
// (slice) flags and booleans are fine.
func RepeatedFlag(app *cli.App, args []string) error {
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
				return Usagef("--%s is given more than once; it takes one value (the last would silently win)", key)
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

// Interspersed parses flags written after the positional argument (ragbench run CONFIG --limit 5),
// which urfave/cli leaves in the arguments, and returns a context that sees them.
func Interspersed(c *cli.Context) (*cli.Context, error) {
	if c.NArg() <= 1 {
		return c, nil
	}
	args := c.Args().Slice()
	set := flag.NewFlagSet(c.Command.Name, flag.ContinueOnError)
	set.SetOutput(io.Discard)
	for _, f := range c.Command.Flags {
		if err := f.Apply(set); err != nil {
			return nil, err
		}
	}
	var pos, rest []string
	for len(args) > 0 {
		if err := set.Parse(args); err != nil {
			return nil, err
		}
		rest = set.Args()
		if len(rest) == 0 {
			break
		}
		pos = append(pos, rest[0])
		args = rest[1:]
	}
	if err := set.Parse(pos); err != nil {
		return nil, err
	}
	nc := cli.NewContext(c.App, set, c)
	nc.Command = c.Command
	return nc, nil
}

// OneArg returns the single positional argument of c, named what in errors.
func OneArg(c *cli.Context, what string) (string, error) {
	if c.NArg() != 1 {
		for _, a := range c.Args().Slice()[min(1, c.NArg()):] {
			if strings.HasPrefix(a, "-") {
				return "", Usagef("%s: flags go before %s (got %q after it)", c.Command.Name, what, a)
			}
		}
		return "", Usagef("%s: want one argument %s, got %d", c.Command.Name, what, c.NArg())
	}
	return c.Args().First(), nil
}
