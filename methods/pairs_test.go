package methods

import (
	"reflect"
	"testing"
)

func TestParseSettings(t *testing.T) {
	cases := []struct {
		in   []string
		want map[string]any
		err  string
		why  string
	}{
		{nil, map[string]any{}, "", "no pairs: an empty map"},
		{[]string{"top_k=3", "on=true", "ks=[1,5]", `s="x"`}, map[string]any{"top_k": 3.0, "on": true, "ks": []any{1.0, 5.0}, "s": "x"}, "", "JSON values"},
		{[]string{"prompt_key=new_prompt_v1", "e="}, map[string]any{"prompt_key": "new_prompt_v1", "e": ""}, "", "non-JSON values are strings"},
		{[]string{" k =a=b", "k=2"}, map[string]any{"k": 2.0}, "", "the key is trimmed, a later pair wins"},
		{[]string{"x"}, nil, `"x": want KEY=VALUE`, "no ="},
		{[]string{" =1"}, nil, `" =1": want KEY=VALUE`, "an empty key"},
	}
	for _, c := range cases {
		got, err := ParseSettings(c.in)
		if c.err != "" {
			if err == nil || err.Error() != c.err {
				t.Errorf("%s: error %v, want %q", c.why, err, c.err)
			}
			continue
		}
		if err != nil || !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s: %v, %v; want %v", c.why, got, err, c.want)
		}
	}
}
