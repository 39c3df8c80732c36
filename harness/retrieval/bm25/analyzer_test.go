package bm25

import (
	"reflect"
	"testing"
)

func TestAnalyze(t *testing.T) {
	cases := []struct {
		a    Analyzer
		in   string
		want []string
		why  string
	}{
		{AnalyzerStandard, "The Cats' running, FAST!", []string{"the", "cats", "running", "fast"}, "lowercase, punctuation dropped, no stemming"},
		{AnalyzerEnglish, "The Cats' running, FAST!", []string{"cat", "run", "fast"}, "stopword the removed, stems"},
		{AnalyzerEnglish, "John's book and Mary’s pen", []string{"john", "book", "mari", "pen"}, "possessive 's (ASCII and typographic) removed"},
		{AnalyzerEnglish, "John 's book", []string{"john", "s", "book"}, "a detached 's is not a possessive"},
		{AnalyzerEnglish, "the of and to", nil, "stopwords only"},
		{AnalyzerEnglish, "", nil, "empty"},
		{AnalyzerEnglish, "Ünïcode Straße", []string{"ünïcode", "straße"}, "Unicode lowercase; non-ASCII letters are consonants (cvc keeps the e)"},
		{AnalyzerStandard, "bad\xffbyte", []string{"bad", "byte"}, "invalid bytes are not indexed"},
		{AnalyzerEnglish, "1990s U.S.", []string{"1990", "u", "s"}, "digits and initials"},
	}
	for _, tc := range cases {
		got := Analyze(tc.a, tc.in)
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("Analyze(%s, %q) = %q, want %q (%s)", tc.a, tc.in, got, tc.want, tc.why)
		}
	}
}
