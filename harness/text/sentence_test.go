package text

import (
	"reflect"
	"strings"
	"testing"
)

func TestSentences(t *testing.T) {
	cases := []struct {
		name, in string
		want     []string
	}{
		{"empty input has no sentences", "", nil},
		{"blank input has no sentences", "  \n ", nil},
		{"two plain sentences", "It rained. We stayed in.", []string{"It rained.", "We stayed in."}},
		{"a digit may start a sentence", "It ended. 1993 was next.", []string{"It ended.", "1993 was next."}},
		{"lower case after a stop does not split", "approx. five of them.", []string{"approx. five of them."}},
		{"an initial does not split", "H. Bruce Humberstone was a director.", []string{"H. Bruce Humberstone was a director."}},
		{"an abbreviation does not split", "Dr. Smith met Mr. Jones. They spoke.", []string{"Dr. Smith met Mr. Jones.", "They spoke."}},
		{"closing quotes stay with the sentence", `He said "go." Then he left.`, []string{`He said "go."`, "Then he left."}},
		{"questions and exclamations split", "Who? Me! Yes.", []string{"Who?", "Me!", "Yes."}},
		{"a line break splits", "Title\nBody text here", []string{"Title", "Body text here"}},
		{"a decimal does not split", "It cost 4.5 million. Fine.", []string{"It cost 4.5 million.", "Fine."}},
		{"U.S. style acronyms do not split", "He moved to the U.S. In 1990 he died.", []string{"He moved to the U.S. In 1990 he died."}},
		{"no final stop keeps the tail", "One. Two", []string{"One.", "Two"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := Sentences(tc.in)
			if !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("Sentences(%q) = %q, want %q", tc.in, got, tc.want)
			}
		})
	}
}

func FuzzSentenceSpans(f *testing.F) {
	for _, s := range []string{"", "A. B.", "Dr. X met Y. Z!", "a\nb", "\"x.\" Y", "é. É.", "..."} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		prev := 0
		for _, sp := range SentenceSpans(s) {
			if sp.Start < prev || sp.End <= sp.Start || sp.End > len(s) {
				t.Fatalf("bad span %v after %d in %q", sp, prev, s)
			}
			if strings.TrimSpace(s[prev:sp.Start]) != "" {
				t.Fatalf("text %q dropped between sentences of %q", s[prev:sp.Start], s)
			}
			prev = sp.End
		}
		if strings.TrimSpace(s[prev:]) != "" {
			t.Fatalf("tail %q dropped from %q", s[prev:], s)
		}
	})
}
