package trec

import (
	"bytes"
	"testing"

	"github.com/ragbench/ragbench/harness/retrieval"
)

func TestHitWriter(t *testing.T) {
	q := Query{ID: "7", Text: "who"}
	hits := []retrieval.Hit{{ID: "d1", Rank: 1, Score: 2.5, Title: "T", Text: "a  b\nc"}, {ID: "d2", Rank: 2, Score: 1}}
	cases := []struct {
		format, want, why string
	}{
		{"trec", "7 Q0 d1 1 2.500000 tag\n7 Q0 d2 2 1.000000 tag\n", "a TREC run"},
		{"text", "# 7: who\n1. d1  2.5000  T\n   a b c\n2. d2  1.0000\n   \n", "readable, white space collapsed, no title when none"},
	}
	for _, c := range cases {
		var b bytes.Buffer
		w := NewHitWriter(&b, c.format, "tag")
		if err := w.Write(q, hits); err != nil {
			t.Fatal(err)
		}
		if err := w.Flush(); err != nil {
			t.Fatal(err)
		}
		if b.String() != c.want {
			t.Errorf("%s: got %q, want %q (%s)", c.format, b.String(), c.want, c.why)
		}
	}
	var b bytes.Buffer
	w := NewHitWriter(&b, "json", "tag")
	w.Write(q, hits[:1])
	w.Flush()
	if want := `{"hits":[`; !bytes.HasPrefix(b.Bytes(), []byte(want)) || !bytes.HasSuffix(b.Bytes(), []byte(`"qid":"7"}`+"\n")) {
		t.Errorf("json: got %q; want one line {hits, qid}", b.String())
	}
}
