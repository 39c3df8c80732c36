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
	"sort"
	"syscall"

	"github.com/urfave/cli/v2"

	"github.com/ragbench/ragbench/internal/cliutil"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "dev"

// registry holds the top-level commands; each command-group file appends to it in an init function,
// so that files for different command groups never touch one another.
var registry []*cli.Command

// register adds top-level commands to the application.
func register(cmds ...*cli.Command) { registry = append(registry, cmds...) }

// usageError marks an error caused by bad usage; run's caller exits 2 on it.
type usageError = cliutil.UsageError

// usagef returns a usage error (exit code 2).
var usagef = cliutil.Usagef

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
	var ec interface{ ExitCode() int }
	if errors.As(err, &ec) {
		return ec.ExitCode()
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
		Flags:                cliutil.OutputFlags(),
		Writer:               stdout,
		ErrWriter:            stderr,
		Commands:             cmds,
		EnableBashCompletion: true,
		// A repeatable flag's value is one value: --set methods.quco.sweep.tau_cooc=[1,5] and
		// --stop "," must not be split at their commas.
		DisableSliceFlagSeparator: true,
		// Errors are printed once by main; keep urfave/cli from exiting the process.
		ExitErrHandler: func(*cli.Context, error) {},
		OnUsageError: func(c *cli.Context, err error, isSub bool) error {
			return usageError{Err: err}
		},
		CommandNotFound: func(c *cli.Context, name string) {},
	}
	for _, c := range cmds {
		cliutil.SetUsageHandler(c)
		cliutil.CheckArity(c)
	}
	if len(args) <= 1 {
		app.Writer = stderr
		if err := app.RunContext(ctx, []string{"ragbench", "--help"}); err != nil {
			return err
		}
		return usagef("no command given")
	}
	args = cliutil.FlagsFirst(app, args)
	if err := cliutil.RepeatedFlag(app, args[1:]); err != nil {
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
