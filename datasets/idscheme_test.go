package datasets

import (
	"strings"
	"testing"
)

func TestIDScheme(t *testing.T) {
	cases := []struct {
		ds   Dataset
		want string
		why  string
	}{
		{Dataset{Name: "nq_open", Layout: LayoutNQOpen, Examples: []Example{{ID: "0"}}}, `nq_open ids are zero-based row indices in file order (the first is "0")`, "NQ-open has no id column"},
		{Dataset{Name: "pubmedqa", Layout: LayoutPubMedQA}, "PubMed ids", "PubMedQA uses its pubid"},
		{Dataset{Name: "mine", Layout: LayoutCustom}, "--id-col", "a custom dataset names the flag that sets its ids"},
		{Dataset{Name: "hotpotqa-distractor", Layout: LayoutHotpotQA, Examples: []Example{{ID: "5a8b"}}}, `its id column (id or _id`, "the others use their id column"},
	}
	for _, tc := range cases {
		if got := tc.ds.IDScheme(); !strings.Contains(got, tc.want) {
			t.Errorf("%s: %q lacks %q", tc.why, got, tc.want)
		}
	}
}

func TestKnown(t *testing.T) {
	ds := &Dataset{Examples: []Example{{ID: "a"}, {ID: "0"}}}
	known := ds.Known()
	ds.Examples = append(ds.Examples, Example{ID: "late"})
	cases := []struct {
		id   string
		want bool
		why  string
	}{
		{"a", true, "an example's id"},
		{"0", true, "a row-index id"},
		{"b", false, "an id of no example"},
		{"", false, "the empty id"},
		{"late", false, "the set is taken when Known is called"},
	}
	for _, c := range cases {
		if got := known(c.id); got != c.want {
			t.Errorf("%s: known(%q) = %v, want %v", c.why, c.id, got, c.want)
		}
	}
}
