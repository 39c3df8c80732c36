package corpus

import (
	"context"
	"strings"
	"testing"

	"github.com/ragbench/ragbench/datasets"
	"github.com/ragbench/ragbench/internal/testenv"
)

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

// TestNQPageTitle: a title field that holds the page's document_text (three pages of the shared
// nq_longdoc file) gives way to the page's first heading; a real title is kept.
func TestNQPageTitle(t *testing.T) {
	cases := []struct{ title, want, why string }{
		{"Harry Potter", "Harry Potter", "a real title is kept"},
		{"Derek Shepherd - Wikipedia <H1> Derek Shepherd </H1> Jump to : navigation <P> He is . </P>", "Derek Shepherd", "the first heading"},
		{"Lost in Space - Wikipedia <P> no heading here . </P>", "Lost in Space", "the text before - Wikipedia"},
		{"<P> " + strings.Repeat("word ", 300) + "</P>", strings.TrimSpace(strings.Repeat("word ", 40)), "an over-long field without heading: its first 200 bytes"},
	}
	for _, c := range cases {
		if got := NQPageTitle(c.title, ""); got != c.want {
			t.Errorf("%s: %q, want %q", c.why, got, c.want)
		}
	}
	ds, err := datasets.Load(context.Background(), testenv.Data(t, "nq_longdoc/validation-00000-of-00001.parquet"), datasets.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	docs, st := Pool(ds.Examples)
	if st.TitlesFromText != 3 || len(docs) != 20 {
		t.Fatalf("pool: %+v", st)
	}
	for _, d := range docs {
		if len(d.ID) > 100 || strings.Contains(d.ID, "<") || d.Title != d.ID {
			t.Errorf("page named %.80q", d.ID)
		}
	}
	if !strings.Contains(st.Summary("nq_longdoc"), "3 pages titled from their first heading") {
		t.Errorf("summary %q", st.Summary("nq_longdoc"))
	}
}
