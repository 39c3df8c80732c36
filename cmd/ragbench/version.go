package main

import (
	"fmt"
	"runtime"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/ragbench/ragbench/datasets"
)

func init() {
	register(&cli.Command{
		Name:  "env",
		Usage: "print the build and runtime environment (version, Go, GOMAXPROCS, data directories, cache)",
		Action: func(c *cli.Context) error {
			w := c.App.Writer
			fmt.Fprintf(w, "ragbench %s\n", version)
			fmt.Fprintf(w, "go %s %s/%s GOMAXPROCS=%d\n", runtime.Version(), runtime.GOOS, runtime.GOARCH, runtime.GOMAXPROCS(0))
			dirs := datasets.DataDirs()
			if len(dirs) == 0 {
				dirs = []string{"(none found: set RAGBENCH_DATA or run beside ../shared/data)"}
			}
			fmt.Fprintf(w, "data %s\n", strings.Join(dirs, " "))
			cache, err := datasets.CacheDir()
			if err != nil {
				cache = "(" + err.Error() + ")"
			}
			fmt.Fprintf(w, "cache %s\n", cache)
			return nil
		},
	})
}
