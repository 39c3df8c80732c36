package datasets

import (
	"reflect"
	"testing"
)

func TestSplitAgreement(t *testing.T) {
	ds := &Dataset{Layout: Layout2Wiki, Examples: []Example{
		{ID: "a", Contexts: []Passage{
			{Title: "ok", Sentences: []string{"One sentence here.", "Another one there."}},
			{Title: "bad", Sentences: []string{"Dr.", "Smith went home."}},
			{Title: "none", Text: "no published sentences"},
		}},
	}}
	var got []SplitMismatch
	a := SplitAgreement(ds, func(m SplitMismatch) { got = append(got, m) })
	if a.Paragraphs != 2 || a.Exact != 1 {
		t.Errorf("agreement %+v; want 2 paragraphs with sentences, 1 split exactly", a)
	}
	if len(got) != 1 || got[0].Example != "a" || got[0].Title != "bad" || !reflect.DeepEqual(got[0].Published, []string{"Dr.", "Smith went home."}) {
		t.Errorf("mismatches %+v; want the 'bad' paragraph with its published sentences", got)
	}
	if SentenceSep(LayoutHotpotQA) != "" || SentenceSep(Layout2Wiki) != " " {
		t.Error("SentenceSep: HotpotQA joins with nothing, others with a space")
	}
}
