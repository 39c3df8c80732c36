package bm25

import (
	"math/rand"
	"slices"
	"testing"
)

// tokensOf returns appendTokens' tokens of s as strings.
func tokensOf(s string, possessive bool) []string {
	buf, toks := appendTokens(nil, nil, s, possessive)
	var out []string
	for _, t := range toks {
		out = append(out, string(buf[t.s:t.e]))
	}
	return out
}

// eachTokens returns eachToken's tokens of s, the reference.
func eachTokens(s string, possessive bool) []string {
	var out []string
	eachToken(s, possessive, func(tok []byte) { out = append(out, string(tok)) })
	return out
}

// TestAppendTokens checks the builder's ASCII fast path against eachToken (the query path) on cases
// chosen for the possessive rule, punctuation, control characters and the non-ASCII fallback.
func TestAppendTokens(t *testing.T) {
	cases := []struct{ s, why string }{
		{"", "empty"},
		{"The Cat's hat", "possessive s dropped"},
		{"cats' toys", "apostrophe after s, no possessive"},
		{"it's 'S s'S", "possessive with capital S, quote at word start"},
		{"a''s", "two apostrophes: the s is kept"},
		{"o' s", "space between apostrophe and s"},
		{"x\x01y\x7fz\tw", "control characters separate"},
		{"U.S.A. 3.14 e-mail", "punctuation splits"},
		{"naïve café's", "non-ASCII text takes the general path"},
		{"rock’s", "typographic apostrophe"},
		{"ABC123def", "mixed case and digits"},
		{"'s", "apostrophe without a word before it"},
		{"\xff\xfe abc", "invalid UTF-8"},
	}
	for _, c := range cases {
		for _, poss := range []bool{false, true} {
			got, want := tokensOf(c.s, poss), eachTokens(c.s, poss)
			if !slices.Equal(got, want) {
				t.Errorf("%s: %q possessive=%v: got %q, want %q", c.why, c.s, poss, got, want)
			}
		}
	}
}

// TestAppendTokensRandom compares the fast path with eachToken on random strings over an
// alphabet rich in the characters that matter (its multi-byte letters are also drawn byte by byte, which
// makes invalid UTF-8).
func TestAppendTokensRandom(t *testing.T) {
	r := rand.New(rand.NewSource(4))
	const alpha = "aAsS's'' .,-\t\n\x00\x7f09zZé’"
	for i := 0; i < 20000; i++ {
		b := make([]byte, r.Intn(24))
		for j := range b {
			b[j] = alpha[r.Intn(len(alpha))]
		}
		s := string(b)
		for _, poss := range []bool{false, true} {
			if got, want := tokensOf(s, poss), eachTokens(s, poss); !slices.Equal(got, want) {
				t.Fatalf("%q possessive=%v: got %q, want %q", s, poss, got, want)
			}
		}
	}
}

// FuzzAppendTokens checks the fast path against eachToken on any input.
func FuzzAppendTokens(f *testing.F) {
	for _, s := range []string{"The Cat's hat", "a''s", "naïve café's", "x\x01y", "\xff's"} {
		f.Add(s, true)
	}
	f.Fuzz(func(t *testing.T, s string, poss bool) {
		if got, want := tokensOf(s, poss), eachTokens(s, poss); !slices.Equal(got, want) {
			t.Fatalf("%q possessive=%v: got %q, want %q", s, poss, got, want)
		}
	})
}
