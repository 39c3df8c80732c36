package text

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// NormalizeAnswer applies the SQuAD answer normalisation exactly as the official SQuAD v1.1, HotpotQA,
// DRAGIN, QuCo-RAG and FlashRAG evaluators do in Python, white_space_fix(remove_articles(
// remove_punc(lower(s)))). The four steps are:
//
//   - lower: Python's str.lower, i.e. the Unicode lower-case mapping, including the full mapping of
//     U+0130 (İ → i + U+0307) and the final-sigma rule (Σ → ς at the end of a word);
//   - remove_punc: delete every character of Python's string.punctuation, the 32 ASCII punctuation
//     characters !"#$%&'()*+,-./:;<=>?@[\]^_`{|}~ (other punctuation such as “ ” – … is kept);
//   - remove_articles: replace each whole word a, an, the by a space, where a word is a maximal run
//     of Python regex word characters (Unicode letters and numbers, and _);
//   - white_space_fix: split on Python white space (Unicode White_Space plus U+001C–U+001F) and
//     join with single spaces.
//
// Invalid UTF-8 bytes, which Python strings cannot hold, each become U+FFFD, a non-word character;
// the output is always valid UTF-8.
func NormalizeAnswer(s string) string {
	return string(AppendNormalizedAnswer(nil, s))
}

// AppendNormalizedAnswer appends NormalizeAnswer(s) to dst and returns it, allocating only to grow
// dst. Its output words are separated by single ASCII spaces.
func AppendNormalizedAnswer(dst []byte, s string) []byte {
	base := len(dst)
	pendingSpace := false
	// wordStart is where the current word run began in dst (or -1 when not in a word run).
	wordStart := -1
	// closeWord ends the word run at the end of dst; an article run is removed and becomes a space.
	closeWord := func() {
		if wordStart < 0 {
			return
		}
		w := dst[wordStart:]
		if isArticle(w) {
			dst = dst[:wordStart]
			// The article separated what came before it from what follows.
			pendingSpace = true
			if len(dst) > base && dst[len(dst)-1] == ' ' {
				// A space was written before the article: keep just one.
				dst = dst[:len(dst)-1]
			}
		}
		wordStart = -1
	}
	emit := func(b []byte, word bool) {
		if word {
			if wordStart < 0 {
				if pendingSpace && len(dst) > base {
					dst = append(dst, ' ')
				}
				pendingSpace = false
				wordStart = len(dst)
			}
		} else {
			closeWord()
			if pendingSpace && len(dst) > base {
				dst = append(dst, ' ')
			}
			pendingSpace = false
		}
		dst = append(dst, b...)
	}
	var buf [utf8.UTFMax]byte
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			i++
			switch {
			case 'A' <= c && c <= 'Z':
				buf[0] = c + 'a' - 'A'
				emit(buf[:1], true)
			case 'a' <= c && c <= 'z' || '0' <= c && c <= '9':
				buf[0] = c
				emit(buf[:1], true)
			case isASCIIPunct(c):
				// removed; it neither separates nor joins words
			case isPySpaceASCII(c):
				closeWord()
				pendingSpace = true
			default:
				buf[0] = c
				emit(buf[:1], false)
			}
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && n == 1 {
			// An invalid byte becomes U+FFFD, so that removing punctuation around it can never
			// assemble a valid character out of stray bytes and the output is valid UTF-8.
			emit([]byte("\ufffd"), false)
			i++
			continue
		}
		switch {
		case unicode.IsSpace(r):
			closeWord()
			pendingSpace = true
		case r == 'İ':
			// Python: 'İ'.lower() == 'i\u0307'; the combining dot is not a word character.
			emit([]byte{'i'}, true)
			emit([]byte("\u0307"), false)
		case r == 'Σ':
			lr := 'σ'
			if finalSigma(s, i, n) {
				lr = 'ς'
			}
			m := utf8.EncodeRune(buf[:], lr)
			emit(buf[:m], true)
		default:
			lr := unicode.ToLower(r)
			m := utf8.EncodeRune(buf[:], lr)
			emit(buf[:m], isPyWord(lr))
		}
		i += n
	}
	closeWord()
	return dst
}

// isArticle reports whether w is a, an or the.
func isArticle(w []byte) bool {
	switch len(w) {
	case 1:
		return w[0] == 'a'
	case 2:
		return w[0] == 'a' && w[1] == 'n'
	case 3:
		return w[0] == 't' && w[1] == 'h' && w[2] == 'e'
	}
	return false
}

// isASCIIPunct reports whether c is in Python's string.punctuation.
func isASCIIPunct(c byte) bool {
	return '!' <= c && c <= '/' || ':' <= c && c <= '@' || '[' <= c && c <= '`' || '{' <= c && c <= '~'
}

// isPySpaceASCII reports whether the ASCII byte c is white space for Python's str.split.
func isPySpaceASCII(c byte) bool {
	return c == ' ' || '\t' <= c && c <= '\r' || 0x1c <= c && c <= 0x1f
}

// IsPythonSpace reports whether r is white space for Python's str.split and str.strip.
func IsPythonSpace(r rune) bool {
	if r < utf8.RuneSelf {
		return isPySpaceASCII(byte(r))
	}
	return unicode.IsSpace(r)
}

// isPyWord reports whether r matches Python's regex \w for str patterns (letters, numbers, _).
func isPyWord(r rune) bool {
	if r < utf8.RuneSelf {
		return 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9' || r == '_'
	}
	return unicode.IsLetter(r) || unicode.IsNumber(r)
}

// isCased reports whether r is a cased letter in the sense of Unicode's Final_Sigma condition.
func isCased(r rune) bool {
	return unicode.IsUpper(r) || unicode.IsLower(r) || unicode.IsTitle(r)
}

// isCaseIgnorable approximates Unicode's Case_Ignorable property.
func isCaseIgnorable(r rune) bool {
	switch r {
	case '\'', '.', ':', '^', '`', '\u00b7', '\u2018', '\u2019', '\u2024', '\u2027':
		return true
	}
	return unicode.In(r, unicode.Mn, unicode.Me, unicode.Cf, unicode.Lm, unicode.Sk)
}

// finalSigma reports whether the capital sigma at s[i:i+n] is in final position: preceded by a
// cased letter and not followed by one (skipping case-ignorable characters), as Python's lower()
// decides.
func finalSigma(s string, i, n int) bool {
	before := false
	for j := i; j > 0; {
		r, m := utf8.DecodeLastRuneInString(s[:j])
		j -= m
		if isCaseIgnorable(r) {
			continue
		}
		before = isCased(r)
		break
	}
	if !before {
		return false
	}
	for j := i + n; j < len(s); {
		r, m := utf8.DecodeRuneInString(s[j:])
		j += m
		if isCaseIgnorable(r) {
			continue
		}
		return !isCased(r)
	}
	return true
}

// LowerPython returns s lower-cased as Python's str.lower does (see NormalizeAnswer).
func LowerPython(s string) string {
	ascii := true
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			ascii = false
			break
		}
	}
	if ascii {
		return strings.ToLower(s)
	}
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			b.WriteByte(s[i])
		case r == 'İ':
			b.WriteString("i\u0307")
		case r == 'Σ':
			if finalSigma(s, i, n) {
				b.WriteRune('ς')
			} else {
				b.WriteRune('σ')
			}
		default:
			b.WriteRune(unicode.ToLower(r))
		}
		i += n
	}
	return b.String()
}

// NFD returns the canonical decomposition of s (Python's unicodedata.normalize("NFD", s)), as DPR
// applies before matching answers.
func NFD(s string) string {
	return norm.NFD.String(s)
}

// MatchWords returns the lower-cased DPR SimpleTokenizer words of s after NFD normalisation: the
// token sequence that DPR's has_answer compares (tokenizer.tokenize(_normalize(s)).words(uncased=True)).
func MatchWords(s string) []string {
	s = NFD(s)
	var out []string
	EachSpan(s, func(a, b int) { out = append(out, LowerPython(s[a:b])) })
	return out
}
