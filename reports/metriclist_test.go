package reports

import (
	"reflect"
	"testing"
)

func TestParseMetrics(t *testing.T) {
	cases := []struct {
		in   string
		want []string
		err  string
		why  string
	}{
		{"em,f1", []string{"em", "f1"}, "", "known keys in order"},
		{" em, ,ret ", []string{"em", "ret"}, "", "spaces and empty entries skipped"},
		{"em,nope", nil, `"nope": unknown metric`, "an unknown key is named"},
	}
	for _, c := range cases {
		got, err := ParseMetrics(c.in)
		if (c.err == "") != (err == nil) || (err != nil && err.Error() != c.err) || !reflect.DeepEqual(got, c.want) {
			t.Errorf("%q: %v, %v; want %v, %q (%s)", c.in, got, err, c.want, c.err, c.why)
		}
	}
}
