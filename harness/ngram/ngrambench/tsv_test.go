package ngrambench

import (
	"context"
	"errors"
	"io"
	"path/filepath"
	"slices"
	"testing"

	"github.com/ragbench/ragbench/harness/corpus"
	"github.com/ragbench/ragbench/harness/text"
)

// TestWriteTSVRoundTrip checks that the corpus file the bench builds from holds the same tokens as
// the documents it was written from, for texts that need care in a TSV.
func TestWriteTSVRoundTrip(t *testing.T) {
	docs := []corpus.Document{
		{ID: "a", Text: "plain words here"},
		{ID: "b", Text: "a\ttab and a\nnewline and a\r\ncarriage return"},
		{ID: "c", Text: `"quoted from start to end"`},
		{ID: "d", Text: `"quotes "" inside" and after`},
		{ID: "e", Text: `ends with a quote"`},
		{ID: "f", Text: ""},
		{ID: "g", Text: "unicode: Zürich, 東京, naïve"},
	}
	path := filepath.Join(t.TempDir(), "c.tsv")
	src := func() (corpus.Reader, error) { return corpus.NewSliceReader(docs), nil }
	if _, err := writeTSV(context.Background(), src, path); err != nil {
		t.Fatal(err)
	}
	r, err := corpus.Open(path, corpus.FormatDPR)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	for i := 0; ; i++ {
		d, err := r.Next()
		if errors.Is(err, io.EOF) {
			if i != len(docs) {
				t.Fatalf("read %d documents back, wrote %d", i, len(docs))
			}
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if got, want := text.Words(d.Text), text.Words(docs[i].Text); !slices.Equal(got, want) {
			t.Errorf("document %s: tokens %q after the round trip, want %q", docs[i].ID, got, want)
		}
	}
}
