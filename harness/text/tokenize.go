package text

import (
	"unicode"
	"unicode/utf8"
)

// Span is a token's byte range [Start, End) in the text it was cut from.
type Span struct {
	Start, End int
}

// Token is a token's text with its byte range.
type Token struct {
	Text       string
	Start, End int
}

// isWord reports whether r belongs to a word run: a letter, a digit or a combining mark
// (DPR's ALPHA_NUM class, [\p{L}\p{N}\p{M}]).
func isWord(r rune) bool {
	if r < utf8.RuneSelf {
		return 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9'
	}
	return unicode.IsLetter(r) || unicode.IsNumber(r) || unicode.IsMark(r)
}

// isSkip reports whether r is separated out entirely: white space, separators and control or other
// characters (the complement of DPR's NON_WS class, [^\p{Z}\p{C}]). Invalid UTF-8 bytes decode to
// utf8.RuneError and are kept as single-byte tokens, so that no input byte is silently lost.
func isSkip(r rune) bool {
	if r < utf8.RuneSelf {
		return r <= ' ' || r == 0x7f
	}
	return unicode.In(r, unicode.Z, unicode.C)
}

// EachSpan calls fn for every token of s in order, without allocating. A token is a maximal run of
// letters, digits and marks, or any other single non-space, non-control character.
func EachSpan(s string, fn func(start, end int)) {
	i := 0
	for i < len(s) {
		c := s[i]
		var r rune
		var n int
		if c < utf8.RuneSelf {
			r, n = rune(c), 1
		} else {
			r, n = utf8.DecodeRuneInString(s[i:])
		}
		switch {
		case isWord(r):
			start := i
			i += n
			for i < len(s) {
				c := s[i]
				if c < utf8.RuneSelf {
					if !isWord(rune(c)) {
						break
					}
					i++
					continue
				}
				r, n := utf8.DecodeRuneInString(s[i:])
				if !isWord(r) {
					break
				}
				i += n
			}
			fn(start, i)
		case r == utf8.RuneError && n == 1:
			fn(i, i+1) // an invalid byte is its own token
			i++
		case isSkip(r):
			i += n
		default:
			fn(i, i+n)
			i += n
		}
	}
}

// AppendSpans appends the token spans of s to dst and returns it.
func AppendSpans(dst []Span, s string) []Span {
	EachSpan(s, func(a, b int) { dst = append(dst, Span{a, b}) })
	return dst
}

// Tokenize returns the tokens of s with their byte offsets.
func Tokenize(s string) []Token {
	var out []Token
	EachSpan(s, func(a, b int) { out = append(out, Token{Text: s[a:b], Start: a, End: b}) })
	return out
}

// Words returns the token texts of s.
func Words(s string) []string {
	var out []string
	EachSpan(s, func(a, b int) { out = append(out, s[a:b]) })
	return out
}
