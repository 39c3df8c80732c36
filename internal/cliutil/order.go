package cliutil

import (
	"slices"
	"strings"

	"github.com/urfave/cli/v2"
)

// FlagsFirst returns the command line args (args[0] is the program name) with every command's flags
// moved before its positional arguments, so that 'ragbench report RUN --paper' means what it says:
// urfave/cli, like the standard flag package, stops reading flags at the first positional argument
// and would take --paper for a run directory. A flag's value stays with it (a flag takes one when
// its definition says so, unless written --flag=value); after "--" nothing is a flag. Negative
// numbers and "-" (standard input) are positional.
func FlagsFirst(app *cli.App, args []string) []string {
	if len(args) == 0 {
		return args
	}
	out := []string{args[0]}
	flags, subs := app.Flags, app.Commands
	var fl, pos []string
	i := 1
	for ; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			break
		}
		if isFlagWord(a) {
			fl = append(fl, a)
			name, _, hasValue := strings.Cut(strings.TrimLeft(a, "-"), "=")
			if !hasValue && takesValue(flags, name) && i+1 < len(args) {
				i++
				fl = append(fl, args[i])
			}
			continue
		}
		if len(pos) == 0 {
			if s := findCommand(subs, a); s != nil {
				out = append(append(out, fl...), a)
				fl, flags, subs = nil, s.Flags, s.Subcommands
				continue
			}
		}
		pos = append(pos, a)
	}
	out = append(out, fl...)
	if i < len(args) {
		// "--" ends the flags: the positional words before it follow it, so none is read as a flag.
		out = append(out, "--")
		out = append(out, pos...)
		return append(out, args[i+1:]...)
	}
	return append(out, pos...)
}

// isFlagWord reports whether a is written as a flag: -x or --x, not "-" or a negative number.
func isFlagWord(a string) bool {
	if len(a) < 2 || a[0] != '-' {
		return false
	}
	c := strings.TrimLeft(a, "-")
	return c != "" && !(c[0] >= '0' && c[0] <= '9' || c[0] == '.')
}

func takesValue(flags []cli.Flag, name string) bool {
	for _, f := range flags {
		if slices.Contains(f.Names(), name) {
			v, ok := f.(cli.DocGenerationFlag)
			return ok && v.TakesValue()
		}
	}
	return false
}

func findCommand(cmds []*cli.Command, name string) *cli.Command {
	for _, c := range cmds {
		if c.HasName(name) {
			return c
		}
	}
	return nil
}

// CheckArity makes c and every subcommand refuse more positional arguments than its ArgsUsage
// names, as a usage error naming the first extra word: "search … stray --k 1" silently ignored
// "stray". ArgsUsage is read up to a parenthesis: no words (or blank) means none, "[X]" one optional,
// "X..." any number.
func CheckArity(c *cli.Command) {
	for _, s := range c.Subcommands {
		CheckArity(s)
	}
	if c.Action == nil {
		return
	}
	max := MaxArgs(c.ArgsUsage)
	if max < 0 {
		return
	}
	action := c.Action
	c.Action = func(ctx *cli.Context) error {
		if n := ctx.NArg(); n > max {
			extra := ctx.Args().Get(max)
			path := CommandPath(ctx)
			if max == 0 {
				return Usagef("%s takes no arguments, got %q (see 'ragbench %s --help')", path, extra, path)
			}
			return Usagef("%s takes %s, got the extra argument %q (see 'ragbench %s --help')", path, strings.TrimSpace(c.ArgsUsage), extra, path)
		}
		return action(ctx)
	}
}

// MaxArgs is the most positional arguments a command's ArgsUsage names; -1 is any number (a word
// ending in "..."). CheckArity enforces it; the docs test checks doc lines against it.
func MaxArgs(usage string) int {
	usage, _, _ = strings.Cut(usage, "(")
	n := 0
	for _, w := range strings.Fields(usage) {
		if strings.HasSuffix(w, "...") || strings.HasSuffix(w, "...]") {
			return -1
		}
		n++
	}
	return n
}

// CommandPath is the command's full name as typed after the program name ("index build").
func CommandPath(ctx *cli.Context) string {
	var names []string
	seen := map[*cli.Command]bool{}
	for _, c := range ctx.Lineage() {
		if c.Command != nil && c.Command.Name != "" && c.Command.Name != ctx.App.Name && !seen[c.Command] {
			seen[c.Command] = true
			names = append([]string{c.Command.Name}, names...)
		}
	}
	return strings.Join(names, " ")
}
