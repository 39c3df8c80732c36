package bm25

import (
	"fmt"
	"math/rand"
	"slices"
	"testing"
)

// tokensOf returns appendTokens' tokens of s as strings.
func tokensOf(s string, possessive bool) []string {
	buf, toks := appendTokens(nil, nil, s, possessive)
	var out []string
	for _, t := range toks {
		if t.pk != 0 && t.pk != packKey(buf[t.s:t.e]) {
			out = append(out, fmt.Sprintf("<packed key %#x, want %#x>", t.pk, packKey(buf[t.s:t.e])))
		}
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

// TestASCIIWordEnd checks the 8-bytes-at-a-time word scan against a byte loop, with every byte value
// at every position of the first two 8-byte words and in the tail.
func TestASCIIWordEnd(t *testing.T) {
	ref := func(s string, i int) int {
		for i < len(s) && asciiWord[s[i]] {
			i++
		}
		return i
	}
	base := "Az09azAZ09mMqQ19xYwW"
	for c := 0; c < 256; c++ {
		for p := 0; p < len(base); p++ {
			b := []byte(base)
			b[p] = byte(c)
			s := string(b)
			for i := 0; i <= len(s); i++ {
				if got, want := asciiWordEnd(s, i), ref(s, i); got != want {
					t.Fatalf("asciiWordEnd(%q, %d) = %d, want %d", s, i, got, want)
				}
			}
		}
	}
}

// TestAppendTokensLongRandom is TestAppendTokensRandom with longer words and every byte value, for the
// 8-byte scan and the packed short keys.
func TestAppendTokensLongRandom(t *testing.T) {
	r := rand.New(rand.NewSource(5))
	for i := 0; i < 20000; i++ {
		b := make([]byte, r.Intn(80))
		for j := range b {
			switch r.Intn(10) {
			case 0:
				b[j] = byte(r.Intn(128 << (i % 2))) // every other string all ASCII, for the fast path
			case 1:
				b[j] = " '"[r.Intn(2)]
			default:
				b[j] = "aAbBsSzZ0189mMXx"[r.Intn(16)]
			}
		}
		s := string(b)
		for _, poss := range []bool{false, true} {
			if got, want := tokensOf(s, poss), eachTokens(s, poss); !slices.Equal(got, want) {
				t.Fatalf("%q possessive=%v: got %q, want %q", s, poss, got, want)
			}
		}
	}
}
