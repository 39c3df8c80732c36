// Package cliutil is the command-line plumbing shared by ragbench's commands, independent of what
// they do: usage errors (exit status 2), strict flag checks urfave/cli lacks (a single-value flag
// given twice, a missing required flag, flags written after a positional argument), the output
// flags (--format, --quiet, --verbose) and where progress and notes go, and the build's commit.
package cliutil
