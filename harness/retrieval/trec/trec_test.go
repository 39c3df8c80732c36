package trec

import (
	"bytes"
	"reflect"
	"strings"
	"testing"

	"github.com/ragbench/ragbench/harness/retrieval"
)

func TestWriterFormat(t *testing.T) {
	var b bytes.Buffer
	w := NewWriter(&b, "run1")
	if err := w.Write("q 1", []retrieval.Hit{{ID: "d1", Rank: 1, Score: 12.3456789}, {ID: "two words\tid", Rank: 2, Score: -0.5}}); err != nil {
		t.Fatal(err)
	}
	if err := w.Write("q2", nil); err != nil {
		t.Fatal(err)
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	want := "q_1 Q0 d1 1 12.345679 run1\nq_1 Q0 two_words_id 2 -0.500000 run1\n"
	if b.String() != want {
		t.Fatalf("got %q, want %q", b.String(), want)
	}
}

func TestField(t *testing.T) {
	cases := []struct{ in, want, why string }{
		{"abc", "abc", "no white space: unchanged"},
		{" a  b ", "a_b", "runs collapse to one _, ends trimmed"},
		{"a\u00a0b", "a_b", "a no-break space also separates fields in ReadRun"},
		{"a\r\nb", "a_b", "CR and LF"},
		{"", "", "empty stays empty"},
	}
	for _, c := range cases {
		if got := Field(c.in); got != c.want {
			t.Errorf("Field(%q) = %q, want %q (%s)", c.in, got, c.want, c.why)
		}
	}
}

// TestRoundTrip writes hits and reads them back: ids, ranks and scores (to six places) survive.
func TestRoundTrip(t *testing.T) {
	hits := []retrieval.Hit{{ID: "a", Rank: 1, Score: 3.25}, {ID: "b c", Rank: 2, Score: 1}}
	var b bytes.Buffer
	w := NewWriter(&b, "t")
	w.Write("7", hits)
	w.Flush()
	got, err := ReadRun(&b, "run")
	if err != nil {
		t.Fatal(err)
	}
	want := []Line{{QID: "7", DocID: "a", Rank: 1, Score: 3.25, Tag: "t"}, {QID: "7", DocID: "b_c", Rank: 2, Score: 1, Tag: "t"}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %+v, want %+v", got, want)
	}
}

func TestReadRunErrors(t *testing.T) {
	cases := []struct{ in, wantErr, why string }{
		{"q Q0 d 1 1.0\n", "run:1: want 6 fields", "a missing tag"},
		{"\nq Q0 d 1 1.0 t extra\n", "run:2: want 6 fields", "an extra field; the line number counts blank lines"},
		{"q Q0 d 0 1.0 t\n", `run:1: rank "0"`, "ranks are 1-based"},
		{"q Q0 d x 1.0 t\n", `run:1: rank "x"`, "rank not a number"},
		{"q Q0 d 1 NaN t\n", `run:1: score "NaN"`, "NaN score"},
		{"q Q0 d 1 inf t\n", `run:1: score "inf"`, "infinite score"},
		{"q Q0 d 1 1e t\n", `run:1: score "1e"`, "malformed score"},
	}
	for _, c := range cases {
		_, err := ReadRun(strings.NewReader(c.in), "run")
		if err == nil || !strings.Contains(err.Error(), c.wantErr) {
			t.Errorf("%s: err %v, want it to contain %q", c.why, err, c.wantErr)
		}
	}
}

func TestReadQueries(t *testing.T) {
	in := strings.Join([]string{
		`{"qid": "a", "query": "first"}`,
		``,
		`{"id": 42, "question": "second"}`,
		"t1\tthird query",
		"plain fourth\r",
		`{"text": "fifth", "query": 3}`,
	}, "\n")
	got, err := ReadQueries(strings.NewReader(in), "q")
	if err != nil {
		t.Fatal(err)
	}
	want := []Query{{"a", "first"}, {"42", "second"}, {"t1", "third query"}, {"4", "plain fourth"}, {"5", "fifth"}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %q, want %q", got, want)
	}
	for _, c := range []struct{ in, wantErr, why string }{
		{`{"qid": 1}`, "q:1: no query, question or text field", "JSON without text"},
		{"x\n{bad", "q:2:", "malformed JSON names its line"},
	} {
		if _, err := ReadQueries(strings.NewReader(c.in), "q"); err == nil || !strings.Contains(err.Error(), c.wantErr) {
			t.Errorf("%s: err %v, want %q", c.why, err, c.wantErr)
		}
	}
}
