package main

import (
	"fmt"
	"runtime"
	"runtime/debug"

	"github.com/urfave/cli/v2"

	"github.com/ragbench/ragbench/internal/cliutil"

	"github.com/ragbench/ragbench/datasets"
)

// moduleVersion is the version of the binary: the -ldflags version when set, else the main module's
// version from the build info ("(devel)" for a build from a checkout).
func moduleVersion() string {
	if version != "dev" {
		return version
	}
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" {
		return bi.Main.Version
	}
	return version
}

// versionString is what --version prints after the name: the module version and the git commit.
func versionString() string {
	return moduleVersion() + " (commit " + cliutil.GitCommit() + ")"
}

func init() {
	register(&cli.Command{
		Name:  "env",
		Usage: "print the build and runtime environment (version, commit, Go, GOMAXPROCS, data directories, cache)",
		Action: func(c *cli.Context) error {
			w := c.App.Writer
			fmt.Fprintf(w, "ragbench %s\n", moduleVersion())
			fmt.Fprintf(w, "commit %s\n", cliutil.GitCommit())
			fmt.Fprintf(w, "go %s %s/%s GOMAXPROCS=%d\n", runtime.Version(), runtime.GOOS, runtime.GOARCH, runtime.GOMAXPROCS(0))
			datasets.WriteWhere(w)
			return nil
		},
	})
}
