package cliutil

import "github.com/urfave/cli/v2"

// Fractions checks that each named float flag lies strictly between 0 and 1 (a confidence level, a
// significance level), in the order given; the first that does not is a usage error naming it.
func Fractions(c *cli.Context, names ...string) error {
	for _, n := range names {
		if v := c.Float64(n); v <= 0 || v >= 1 {
			return Usagef("--%s %v: want a number between 0 and 1", n, v)
		}
	}
	return nil
}
