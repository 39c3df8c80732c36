package prompts

import "testing"

func TestResolveExemplars(t *testing.T) {
	cases := []struct{ spec, dataset, want, why string }{
		{"auto", "hotpotqa-fullwiki", "hotpotqa", "auto is the dataset's own set"},
		{"auto", "nq_open", "", "auto on a dataset the authors give none is no set"},
		{"none", "hotpotqa", "", "none is no set"},
		{"2wikimultihopqa", "hotpotqa", "2wikimultihopqa", "a named set is kept"},
	}
	for _, c := range cases {
		if got := ResolveExemplars(c.spec, c.dataset); got != c.want {
			t.Errorf("%q on %s: %q, want %q (%s)", c.spec, c.dataset, got, c.want, c.why)
		}
	}
}
