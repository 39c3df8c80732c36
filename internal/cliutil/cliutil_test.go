package cliutil

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/urfave/cli/v2"
)

// app returns an app with one command "cmd" whose action records its context's findings.
func app(flags []cli.Flag, action cli.ActionFunc) *cli.App {
	cmd := &cli.Command{Name: "cmd", Flags: flags, Action: action}
	SetUsageHandler(cmd)
	var errw bytes.Buffer
	return &cli.App{Name: "t", Commands: []*cli.Command{cmd}, ErrWriter: &errw, Writer: &bytes.Buffer{},
		ExitErrHandler: func(*cli.Context, error) {}}
}

func isUsage(err error) bool {
	var u UsageError
	return errors.As(err, &u)
}

func TestRepeatedFlag(t *testing.T) {
	a := app([]cli.Flag{&cli.StringFlag{Name: "out"}, &cli.StringSliceFlag{Name: "set"}, &cli.BoolFlag{Name: "force"}}, nil)
	cases := []struct {
		args  []string
		usage bool
		why   string
	}{
		{[]string{"cmd", "--out", "a", "--out", "b"}, true, "a single-value flag twice: the last would silently win"},
		{[]string{"cmd", "--out=a", "--out=b"}, true, "the = form counts too"},
		{[]string{"cmd", "--set", "a", "--set", "b"}, false, "slice flags repeat by design"},
		{[]string{"cmd", "--force", "--force"}, false, "booleans take no value"},
		{[]string{"cmd", "--out", "a", "--", "--out", "b"}, false, "after -- nothing is a flag"},
		{[]string{"cmd", "--set", "--out", "--out", "x"}, false, "a value that looks like a flag is a value"},
	}
	for _, c := range cases {
		if err := RepeatedFlag(a, c.args); isUsage(err) != c.usage {
			t.Errorf("%v: err %v, want usage error %v (%s)", c.args, err, c.usage, c.why)
		}
	}
}

func TestRequiredAndFormat(t *testing.T) {
	var got string
	a := app(append(FormatFlags("text", "json"), &cli.StringFlag{Name: "in", Required: true}), func(c *cli.Context) error {
		var err error
		got, err = OutputFormat(c, "text", "json")
		return err
	})
	cases := []struct {
		args  []string
		want  string
		usage bool
		why   string
	}{
		{[]string{"t", "cmd", "--in", "x"}, "text", false, "the first value is the default"},
		{[]string{"t", "cmd", "--in", "x", "--json"}, "json", false, "--json is --format json"},
		{[]string{"t", "cmd", "--in", "x", "--json", "--format", "text"}, "", true, "--json and another --format disagree"},
		{[]string{"t", "cmd", "--in", "x", "--format", "xml"}, "", true, "an unknown format"},
		{[]string{"t", "cmd"}, "", true, "a missing required flag is a usage error, not help on stdout"},
		{[]string{"t", "cmd", "--in", "x", "--nope"}, "", true, "an unknown flag"},
	}
	for _, c := range cases {
		got = ""
		err := a.Run(c.args)
		if isUsage(err) != c.usage || (!c.usage && (err != nil || got != c.want)) {
			t.Errorf("%v: format %q, err %v; want %q, usage %v (%s)", c.args, got, err, c.want, c.usage, c.why)
		}
	}
}

func TestOneArgRenamedInterspersed(t *testing.T) {
	var arg, val string
	a := app([]cli.Flag{&cli.StringFlag{Name: "from"}, OldFlag("format", "from"), &cli.StringFlag{Name: "limit"}}, func(c *cli.Context) error {
		var err error
		if arg, err = OneArg(c, "SPEC"); err != nil {
			return err
		}
		val, err = Renamed(c, "from", "format")
		return err
	})
	if err := a.Run([]string{"t", "cmd", "--format", "x", "spec"}); err != nil || arg != "spec" || val != "x" {
		t.Errorf("old flag name: arg %q val %q err %v", arg, val, err)
	}
	if !strings.Contains(a.ErrWriter.(*bytes.Buffer).String(), "deprecated") {
		t.Error("the old flag name gave no deprecation note")
	}
	if err := a.Run([]string{"t", "cmd", "--from", "a", "--format", "b", "spec"}); !isUsage(err) {
		t.Errorf("old and new name together: %v, want a usage error", err)
	}
	if err := a.Run([]string{"t", "cmd", "a", "b"}); !isUsage(err) {
		t.Errorf("two arguments where one is wanted: %v, want a usage error", err)
	}
}

func TestInterspersed(t *testing.T) {
	var limit string
	var args []string
	a := app([]cli.Flag{&cli.StringFlag{Name: "limit"}}, func(c *cli.Context) error {
		c, err := Interspersed(c)
		if err != nil {
			return err
		}
		limit, args = c.String("limit"), c.Args().Slice()
		return nil
	})
	if err := a.Run([]string{"t", "cmd", "config.yaml", "--limit", "5"}); err != nil || limit != "5" || strings.Join(args, " ") != "config.yaml" {
		t.Errorf("a flag after the argument: limit %q args %q err %v; want 5 and [config.yaml]", limit, args, err)
	}
}

func TestFlagsFirst(t *testing.T) {
	sub := &cli.Command{Name: "build", Flags: []cli.Flag{&cli.StringFlag{Name: "out"}, &cli.BoolFlag{Name: "force"}}}
	grp := &cli.Command{Name: "index", Subcommands: []*cli.Command{sub}}
	rep := &cli.Command{Name: "report", Flags: []cli.Flag{&cli.BoolFlag{Name: "paper"}, &cli.StringFlag{Name: "format", Aliases: []string{"f"}}}}
	a := &cli.App{Name: "t", Flags: []cli.Flag{&cli.BoolFlag{Name: "quiet"}}, Commands: []*cli.Command{grp, rep}}
	cases := []struct{ in, want, why string }{
		{"t report RUN --paper", "t report --paper RUN", "a boolean after the argument"},
		{"t report A -f json B", "t report -f json A B", "a flag's value moves with it"},
		{"t report A --format=json", "t report --format=json A", "the = form"},
		{"t --quiet index build X --out d --force", "t --quiet index build --out d --force X", "a subcommand's flags"},
		{"t report A -- --paper", "t report -- A --paper", "after -- nothing is a flag, and the words before it stay arguments"},
		{"t report -5 - B --paper", "t report --paper -5 - B", "a negative number and - are arguments"},
		{"t report index", "t report index", "a command name after the command is an argument"},
		{"t report --format index A", "t report --format index A", "a flag's value that names a command is a value"},
	}
	for _, c := range cases {
		if got := strings.Join(FlagsFirst(a, strings.Fields(c.in)), " "); got != c.want {
			t.Errorf("%s: %q → %q, want %q", c.why, c.in, got, c.want)
		}
	}
}

func TestCheckArity(t *testing.T) {
	cases := []struct {
		usage string
		args  []string
		ok    bool
		why   string
	}{
		{"", nil, true, "no arguments"},
		{"", []string{"stray"}, false, "a command without ArgsUsage takes none"},
		{" ", []string{"stray"}, false, "a blank ArgsUsage is none"},
		{"SPEC", []string{"a"}, true, "one"},
		{"SPEC", []string{"a", "b"}, false, "one too many"},
		{"BASE NEW", []string{"a", "b"}, true, "two"},
		{"[PROMPT] (or --prompt; - reads standard input)", []string{"a", "b"}, false, "the parenthesis is prose"},
		{"RUN_DIR...", []string{"a", "b", "c"}, true, "any number"},
	}
	for _, c := range cases {
		cmd := &cli.Command{Name: "cmd", ArgsUsage: c.usage, Action: func(*cli.Context) error { return nil }}
		CheckArity(cmd)
		a := &cli.App{Name: "t", Commands: []*cli.Command{cmd}, ExitErrHandler: func(*cli.Context, error) {}, Writer: &bytes.Buffer{}, ErrWriter: &bytes.Buffer{}}
		err := a.Run(append([]string{"t", "cmd"}, c.args...))
		if (err == nil) != c.ok || (err != nil && !isUsage(err)) {
			t.Errorf("%s: usage %q args %q: err %v", c.why, c.usage, c.args, err)
		}
	}
}
