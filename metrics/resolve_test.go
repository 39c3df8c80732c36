package metrics

import "testing"

func TestResolveAnswerRule(t *testing.T) {
	cases := []struct {
		spec, dataset string
		fallback      AnswerRule
		want          AnswerRule
		err           bool
		why           string
	}{
		{"auto", "hotpotqa-distractor", ExtractNone, ExtractQuCoHotpotQA, false, "auto is the dataset's QuCo-RAG rule"},
		{"auto", "nq_open", ExtractNone, ExtractNone, false, "no rule for the dataset: the fallback (none)"},
		{"auto", "pubmedqa", ExtractQuCo2Wiki, ExtractQuCo2Wiki, false, "no rule for the dataset: the fallback (2wiki)"},
		{"", "hotpotqa", ExtractQuCo2Wiki, ExtractNone, false, "empty is none, not auto"},
		{string(ExtractQuCo2Wiki), "hotpotqa", ExtractNone, ExtractQuCo2Wiki, false, "a named rule wins over the dataset's"},
		{"nonsense", "hotpotqa", ExtractNone, "", true, "an unknown rule is an error"},
	}
	for _, c := range cases {
		got, err := ResolveAnswerRule(c.spec, c.dataset, c.fallback)
		if got != c.want || (err != nil) != c.err {
			t.Errorf("%q on %s: %q, %v; want %q, error %v (%s)", c.spec, c.dataset, got, err, c.want, c.err, c.why)
		}
	}
}
