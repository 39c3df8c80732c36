package corpus

import "testing"

func TestPoolStatsSummary(t *testing.T) {
	st := PoolStats{Passages: 10, Docs: 6, Duplicates: 2, Empty: 1, TitleClashes: 1}
	want := "pool of hotpotqa: 10 passages, 6 documents (2 duplicates dropped, 1 empty, 1 title clashes)"
	if got := st.Summary("hotpotqa"); got != want {
		t.Errorf("Summary = %q, want %q", got, want)
	}
}

func TestParseColumns(t *testing.T) {
	got, err := ParseColumns("doc.id,meta.title,body")
	if err != nil || *got != (ParquetColumns{ID: "doc.id", Title: "meta.title", Text: "body"}) {
		t.Errorf("three columns: %+v, %v", got, err)
	}
	for _, bad := range []string{"", "id,text", "a,b,c,d"} {
		if _, err := ParseColumns(bad); err == nil {
			t.Errorf("%q: want an error (not three columns)", bad)
		}
	}
}
