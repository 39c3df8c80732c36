package main

import (
	"fmt"
	"runtime"

	"github.com/urfave/cli/v2"
)

func init() {
	register(&cli.Command{
		Name:  "env",
		Usage: "print the build and runtime environment (version, Go, GOMAXPROCS, data directory)",
		Action: func(c *cli.Context) error {
			w := c.App.Writer
			fmt.Fprintf(w, "ragbench %s\n", version)
			fmt.Fprintf(w, "go %s %s/%s GOMAXPROCS=%d\n", runtime.Version(), runtime.GOOS, runtime.GOARCH, runtime.GOMAXPROCS(0))
			return nil
		},
	})
}
