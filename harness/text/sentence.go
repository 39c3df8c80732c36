package text

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// abbreviations are lower-cased words that a full stop does not end a sentence after.
var abbreviations = map[string]bool{
	"mr": true, "mrs": true, "ms": true, "dr": true, "st": true, "jr": true, "sr": true, "mt": true,
	"no": true, "vs": true, "etc": true, "inc": true, "ltd": true, "co": true, "corp": true, "gen": true,
	"col": true, "lt": true, "sgt": true, "capt": true, "prof": true, "rev": true, "hon": true, "gov": true,
	"sen": true, "rep": true, "fr": true, "ft": true, "jan": true, "feb": true, "mar": true, "apr": true,
	"jun": true, "jul": true, "aug": true, "sep": true, "sept": true, "oct": true, "nov": true, "dec": true,
	"e": true, "i": true, "al": true, "approx": true, "ca": true, "c": true, "op": true, "vol": true, "pp": true,
}

// SentenceSpans splits s into sentences and returns their byte ranges, trimmed of surrounding white
// space. A sentence ends at a line break, or at '.', '!' or '?' (with any closing quotes or brackets)
// followed by white space and an upper-case letter, a digit or an opening quote or bracket. A full stop
// after a single letter (an initial such as "H. Bruce") or a common abbreviation ("Dr.", "Jr.", "Aug.")
// does not end a sentence. It is a heuristic splitter for English prose, not a linguistic one.
func SentenceSpans(s string) []Span {
	var out []Span
	start := 0
	emit := func(a, b int) {
		for a < b {
			r, n := utf8.DecodeRuneInString(s[a:])
			if !unicode.IsSpace(r) {
				break
			}
			a += n
		}
		for b > a {
			r, n := utf8.DecodeLastRuneInString(s[a:b])
			if !unicode.IsSpace(r) {
				break
			}
			b -= n
		}
		if b > a {
			out = append(out, Span{a, b})
		}
	}
	for i := 0; i < len(s); {
		c := s[i]
		if c == '\n' {
			emit(start, i)
			i++
			start = i
			continue
		}
		if c != '.' && c != '!' && c != '?' {
			i++
			continue
		}
		end := i + 1
		for end < len(s) && strings.IndexByte("\"')]’”", s[end]) >= 0 {
			end++
		}
		// Multi-byte closing quotes.
		for {
			r, n := utf8.DecodeRuneInString(s[end:])
			if r == '’' || r == '”' || r == '»' {
				end += n
				continue
			}
			break
		}
		j := end
		for j < len(s) && (s[j] == ' ' || s[j] == '\t') {
			j++
		}
		if j == end || j >= len(s) || s[j] == '\n' {
			if j >= len(s) || s[j] == '\n' {
				i = j
				continue
			}
			i = end
			continue
		}
		r, _ := utf8.DecodeRuneInString(s[j:])
		if !(unicode.IsUpper(r) || unicode.IsDigit(r) || strings.ContainsRune("\"'([“‘", r)) {
			i = end
			continue
		}
		if c == '.' && isAbbreviation(s[start:i]) {
			i = end
			continue
		}
		emit(start, end)
		start = j
		i = j
	}
	emit(start, len(s))
	return out
}

// isAbbreviation reports whether the word ending prefix (just before a full stop) is an initial or a
// known abbreviation.
func isAbbreviation(prefix string) bool {
	k := len(prefix)
	for k > 0 {
		r, n := utf8.DecodeLastRuneInString(prefix[:k])
		if !unicode.IsLetter(r) {
			break
		}
		k -= n
	}
	word := prefix[k:]
	if word == "" {
		return false
	}
	if utf8.RuneCountInString(word) == 1 {
		r, _ := utf8.DecodeRuneInString(word)
		return unicode.IsUpper(r) || abbreviations[strings.ToLower(word)]
	}
	// "U.S." style: a letter preceded by a full stop.
	if k > 0 && prefix[k-1] == '.' && utf8.RuneCountInString(word) <= 2 {
		return true
	}
	return abbreviations[strings.ToLower(word)]
}

// Sentences returns the sentences of s (see SentenceSpans).
func Sentences(s string) []string {
	spans := SentenceSpans(s)
	if len(spans) == 0 {
		return nil
	}
	out := make([]string, len(spans))
	for i, sp := range spans {
		out[i] = s[sp.Start:sp.End]
	}
	return out
}
