package text

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestNormalizeAnswer(t *testing.T) {
	cases := []struct {
		in, want, why string
	}{
		{"", "", "empty stays empty"},
		{"The Eiffel Tower", "eiffel tower", "lower case and the leading article goes"},
		{"  Hello,   World!  ", "hello world", "punctuation removed, white space collapsed and trimmed"},
		{"an apple a day", "apple day", "all three articles go as whole words"},
		{"theatre anthem", "theatre anthem", "articles inside words stay"},
		{"A-Team", "ateam", "punctuation is removed before articles, so A-Team is one word"},
		{"U.S.A.", "usa", "dotted initialism collapses"},
		{"don't", "dont", "apostrophe is ASCII punctuation"},
		{"the_the", "thethe", "underscore is in string.punctuation"},
		{"1,000", "1000", "digit grouping comma removed"},
		{"THE", "", "an answer of only an article normalises to nothing"},
		{"a an the", "", "only articles"},
		{"café", "café", "non-ASCII letters are kept"},
		{"İstanbul", "i\u0307stanbul", "Python lowers U+0130 to i + combining dot above"},
		{"ΟΔΟΣ", "οδος"[:len("οδο")] + "ς", "final sigma at the end of a word (Python's Final_Sigma rule)"},
		{"ΣΑΣ ΟΔΟΣ", "σας οδος"[:len("σας οδο")] + "ς", "sigma inside a word is σ, at the end ς"},
		{"“Quoted” – dash", "“quoted” – dash", "non-ASCII punctuation is not in string.punctuation"},
		{"a\u00a0the\u2003b", "b", "no-break and em spaces are white space for str.split"},
		{"x\x1fthe\x1cy", "x y", "U+001C..U+001F are white space in Python but not in Go's unicode.IsSpace"},
		{"the€", "€", "the article before a non-word symbol is a whole word"},
		{"x€the€y", "x€ €y", "an article between symbols becomes a space"},
		{"the\u0301", "\u0301", "a combining mark is not a regex word character, so 'the' ends before it"},
		{"e\u0301", "e\u0301", "a decomposed accent stays (no Unicode normalisation)"},
		{"a\xffb", "\ufffdb", "an invalid byte becomes U+FFFD, a non-word character"},
		{"Theodore the Great", "theodore great", "mid-sentence article"},
		{"tab\tand\nnewline", "tab and newline", "ASCII white space"},
	}
	for _, tc := range cases {
		t.Run(tc.why, func(t *testing.T) {
			if got := NormalizeAnswer(tc.in); got != tc.want {
				t.Fatalf("NormalizeAnswer(%q) = %q, want %q", tc.in, got, tc.want)
			}
			if got := refNormalize(tc.in); got != tc.want {
				t.Fatalf("reference normaliser disagrees with the table: %q", got)
			}
		})
	}
}

// refNormalize is a literal, slow transcription of the Python steps, used to check the fast
// single-pass normaliser.
func refNormalize(s string) string {
	s = LowerPython(s)
	var b strings.Builder
	for _, r := range s {
		if r < 128 && isASCIIPunct(byte(r)) {
			continue
		}
		b.WriteRune(r)
	}
	rs := []rune(b.String())
	var out []rune
	for i := 0; i < len(rs); {
		if !isPyWord(rs[i]) {
			out = append(out, rs[i])
			i++
			continue
		}
		j := i
		for j < len(rs) && isPyWord(rs[j]) {
			j++
		}
		w := string(rs[i:j])
		if w == "a" || w == "an" || w == "the" {
			out = append(out, ' ')
		} else {
			out = append(out, rs[i:j]...)
		}
		i = j
	}
	return strings.Join(strings.FieldsFunc(string(out), IsPythonSpace), " ")
}

func FuzzNormalizeAnswer(f *testing.F) {
	for _, s := range []string{"The Eiffel Tower", "A-Team", "ΟΔΟΣ", "İ", "x€the€y", "a\xffb", "the\u0301"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n := NormalizeAnswer(s)
		if NormalizeAnswer(n) != n {
			t.Fatalf("not idempotent: %q -> %q -> %q", s, n, NormalizeAnswer(n))
		}
		if strings.HasPrefix(n, " ") || strings.HasSuffix(n, " ") || strings.Contains(n, "  ") {
			t.Fatalf("bad spacing in %q", n)
		}
		for _, w := range strings.Split(n, " ") {
			if w == "a" || w == "an" || w == "the" {
				t.Fatalf("article %q left in %q", w, n)
			}
		}
		for i := 0; i < len(n); i++ {
			if isASCIIPunct(n[i]) || 'A' <= n[i] && n[i] <= 'Z' {
				t.Fatalf("byte %q left in %q", n[i], n)
			}
		}
		if !utf8.ValidString(n) {
			t.Fatalf("input %q gave invalid UTF-8 %q", s, n)
		}
		if ref := refNormalize(s); ref != n {
			t.Fatalf("NormalizeAnswer(%q) = %q, reference %q", s, n, ref)
		}
	})
}

func TestMatchWords(t *testing.T) {
	cases := []struct {
		in   string
		want []string
		why  string
	}{
		{"New York", []string{"new", "york"}, "lower-cased tokens"},
		{"café", []string{"cafe\u0301"}, "NFD decomposes, the mark stays in the word"},
		{"New-York", []string{"new", "-", "york"}, "a hyphen is its own token"},
	}
	for _, tc := range cases {
		got := MatchWords(tc.in)
		if strings.Join(got, "|") != strings.Join(tc.want, "|") {
			t.Errorf("%s: MatchWords(%q) = %q, want %q", tc.why, tc.in, got, tc.want)
		}
	}
}

func BenchmarkNormalizeAnswer(b *testing.B) {
	s := "The Eiffel Tower, in Paris (France)"
	for b.Loop() {
		_ = AppendNormalizedAnswer(make([]byte, 0, 64), s)
	}
}
