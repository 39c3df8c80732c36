package text

import (
	"reflect"
	"testing"
	"unicode/utf8"
)

func TestTokenize(t *testing.T) {
	cases := []struct {
		name, in string
		want     []string
	}{
		{"empty input gives no tokens", "", nil},
		{"words and punctuation are separate", "Hello, world!", []string{"Hello", ",", "world", "!"}},
		{"digits join letters in one run", "abc123 4.5", []string{"abc123", "4", ".", "5"}},
		{"apostrophe is its own token", "don't", []string{"don", "'", "t"}},
		{"accents and combining marks stay in the word", "café Ame\u0301lie", []string{"café", "Ame\u0301lie"}},
		{"non-Latin scripts are words", "東京 Москва", []string{"東京", "Москва"}},
		{"control characters and tabs are skipped", "a\tb\u0000c\n", []string{"a", "b", "c"}},
		{"non-breaking space separates", "a\u00a0b", []string{"a", "b"}},
		{"each symbol is a single token", "--$", []string{"-", "-", "$"}},
		{"invalid UTF-8 bytes are kept one per token", "a\xffb", []string{"a", "\xff", "b"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := Words(tc.in)
			if !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("Words(%q) = %q, want %q", tc.in, got, tc.want)
			}
		})
	}
}

func TestTokenOffsets(t *testing.T) {
	s := "The Eiffel Tower (1889) é."
	for _, tok := range Tokenize(s) {
		if s[tok.Start:tok.End] != tok.Text {
			t.Fatalf("token %q has offsets [%d,%d) = %q", tok.Text, tok.Start, tok.End, s[tok.Start:tok.End])
		}
	}
}

func FuzzTokenize(f *testing.F) {
	for _, s := range []string{"", "Hello, world!", "a\xffb", "東京 Москва", "don't 4.5"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		prev := 0
		EachSpan(s, func(a, b int) {
			if a < prev || b <= a || b > len(s) {
				t.Fatalf("bad span [%d,%d) after %d in %q", a, b, prev, s)
			}
			// Only skippable characters may lie between tokens.
			for _, r := range s[prev:a] {
				if !isSkip(r) {
					t.Fatalf("non-space %q dropped in %q", r, s)
				}
			}
			prev = b
		})
		if !utf8.ValidString(s) {
			return
		}
		for _, r := range s[prev:] {
			if !isSkip(r) {
				t.Fatalf("trailing %q dropped in %q", r, s)
			}
		}
	})
}

func BenchmarkEachSpan(b *testing.B) {
	s := "Does He Love You is a song written by Sandy Knox and Billy Stritch, and recorded as a duet by American country music artists Reba McEntire and Linda Davis. It was released in August 1993."
	b.SetBytes(int64(len(s)))
	for b.Loop() {
		n := 0
		EachSpan(s, func(a, b int) { n++ })
	}
}
