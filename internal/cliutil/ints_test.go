package cliutil

import (
	"slices"
	"strings"
	"testing"
)

func TestParseInts(t *testing.T) {
	cases := []struct {
		in   string
		want []int
		err  string
		why  string
	}{
		{"2,4,8", []int{2, 4, 8}, "", "a plain list, in its order"},
		{" 1, 5 ,10,", []int{1, 5, 10}, "", "spaces and a trailing comma are ignored"},
		{"", nil, "", "an empty value gives none"},
		{"1,0", nil, `"0" is not a positive integer`, "zero is refused"},
		{"-3", nil, `"-3" is not a positive integer`, "negatives are refused"},
		{"1,x", nil, `"x" is not a positive integer`, "a word is refused, named"},
	}
	for _, c := range cases {
		got, err := ParseInts(c.in)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%s: ParseInts(%q) error %v, want %q", c.why, c.in, err, c.err)
			}
			continue
		}
		if err != nil || !slices.Equal(got, c.want) {
			t.Errorf("%s: ParseInts(%q) = %v, %v; want %v", c.why, c.in, got, err, c.want)
		}
	}
}
