package cliutil

import (
	"testing"

	"github.com/urfave/cli/v2"
)

func TestFractions(t *testing.T) {
	flags := []cli.Flag{&cli.Float64Flag{Name: "level", Value: 0.95}, &cli.Float64Flag{Name: "alpha", Value: 0.05}}
	a := app(flags, func(c *cli.Context) error { return Fractions(c, "level", "alpha") })
	cases := []struct {
		args []string
		want string
		why  string
	}{
		{[]string{"t", "cmd"}, "", "the defaults are fractions"},
		{[]string{"t", "cmd", "--level", "1"}, "--level 1: want a number between 0 and 1", "1 is excluded"},
		{[]string{"t", "cmd", "--alpha", "0"}, "--alpha 0: want a number between 0 and 1", "0 is excluded"},
		{[]string{"t", "cmd", "--level", "2", "--alpha", "-1"}, "--level 2: want a number between 0 and 1", "the first bad flag in the order given"},
	}
	for _, c := range cases {
		err := a.Run(c.args)
		if c.want == "" {
			if err != nil {
				t.Errorf("%s: %v", c.why, err)
			}
			continue
		}
		if !isUsage(err) || err.Error() != c.want {
			t.Errorf("%s: %v (usage %v), want usage error %q", c.why, err, isUsage(err), c.want)
		}
	}
}
