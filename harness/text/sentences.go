package text

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// SentenceSpans returns the byte spans of the sentences of s, in order. Each span is trimmed of
// surrounding white space; text that is only white space yields no span.
//
// The splitter is rule-based. Its rules were fitted to the sentence splits published with HotpotQA
// (made with a PTB-style tokenizer) and 2WikiMultihopQA; docs/metrics.md gives its agreement with
// them (ragbench text split-eval).
//
//   - ! and ? followed by white space end a sentence, whatever follows ("Teen Titans Go! is" splits,
//     as HotpotQA's published splits do), except that a quoted or bracketed title followed by a
//     lower-case word does not ("Where Did You Go?" and ...). Closing quotes and brackets after the
//     mark stay with the sentence, except a quote that is followed by , . ; or : or ends the text,
//     which is left to the next piece ("Teen Titans Go!", and ... splits before the quote, as
//     published).
//   - A full stop followed by white space ends a sentence, whatever the case of the next word, unless
//     the word before it is a title or other abbreviation that continues the sentence (Mr., Dr., St.,
//     Mt., Gen., vs., e.g.; see abbrevContinues); an abbreviation such as no., c., fl. or vol. before
//     a number or a lower-case word (see abbrevBeforeNumber); an initial (J. R. R. Tolkien) other than
//     the Roman numerals I, V and X before a sentence opener ("World War I. In 1918"); or a dotted
//     initialism (U.S., D.C., Ph.D.). Company suffixes (Inc., Co., Ltd., Bros., Jr., Sr.) end a
//     sentence only before a capital.
//   - An ellipsis (... or …) does not end a sentence.
//   - Decimals (3.5) and dotted names (Node.js) never split, as no white space follows the full stop,
//     but a full stop after a closing bracket or quote with no space before a capitalised word does
//     ("Road).It is").
//   - A no-break space after a full stop separates sentences only before a capital or a quote
//     ("38\u00a0Stat.\u00a0114" stays whole).
//   - Newlines are white space like any other (2WikiMultihopQA keeps them inside sentences).
func SentenceSpans(s string) []Span {
	return AppendSentenceSpans(nil, s)
}

// AppendSentenceSpans appends the sentence spans of s to dst and returns it.
func AppendSentenceSpans(dst []Span, s string) []Span {
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
		if a < b {
			dst = append(dst, Span{a, b})
		}
	}
	i := 0
	for i < len(s) {
		n := terminalLen(s, i)
		if n == 0 {
			i++
			continue
		}
		cut, resume := sentenceEnd(s, start, i, n)
		if cut > 0 {
			emit(start, cut)
			start = cut
		}
		i = resume
	}
	emit(start, len(s))
	return dst
}

// sentenceEnd examines the terminal punctuation of length n at s[mark:] in the sentence that began at
// start. It returns where the next sentence begins (0 for no split) and where scanning resumes.
func sentenceEnd(s string, start, mark, n int) (cut, resume int) {
	end := mark + n
	for end < len(s) {
		m := terminalLen(s, end)
		if m == 0 {
			break
		}
		end += m
	}
	last := s[end-1]
	dot := last == '.' && end-mark == 1
	if end-mark > 1 && last == '.' || strings.HasSuffix(s[:end], "…") {
		return 0, end // an ellipsis does not end a sentence
	}
	// Closing quotes and brackets after the mark.
	closeEnd := end
	for closeEnd < len(s) {
		r, m := utf8.DecodeRuneInString(s[closeEnd:])
		if !isCloser(r) {
			break
		}
		closeEnd += m
	}
	if closeEnd >= len(s) {
		if !dot && closeEnd > end && s[end] == '"' {
			return end, closeEnd // "... 'Allo 'Allo!" at the very end: the quote is left over
		}
		return 0, closeEnd
	}
	r, m := utf8.DecodeRuneInString(s[closeEnd:])
	if r == '\u00a0' && closeEnd+m < len(s) {
		// A no-break space splits only before a capital or a quote ("Morty.\u00a0The"), not before
		// a number ("38\u00a0Stat.\u00a0114").
		r2, _ := utf8.DecodeRuneInString(s[closeEnd+m:])
		if unicode.IsUpper(r2) || r2 == '"' {
			r = ' '
		}
	}
	if !isSplitSpace(r) {
		if !dot && closeEnd > end && s[end] == '"' && strings.IndexByte(",.;:", s[closeEnd]) >= 0 {
			return end, closeEnd // "Teen Titans Go!", and ...
		}
		if dot && closeEnd == end && glued(s, start, mark) {
			return end, end // "... North Carolina.Crescent Resources ..."
		}
		return 0, closeEnd
	}
	next := closeEnd + m
	for next < len(s) {
		r, m := utf8.DecodeRuneInString(s[next:])
		if !isSplitSpace(r) {
			break
		}
		next += m
	}
	if next >= len(s) {
		return 0, next
	}
	if !dot {
		if closeEnd > end {
			if r, _ := utf8.DecodeRuneInString(s[next:]); unicode.IsLower(r) {
				return 0, next // a quoted title: "Where Did You Go?" and ...
			}
		}
		return next, next
	}
	word := wordBefore(s, start, mark)
	nextWord := wordAt(s, next)
	if word != "" && !dotEnds(word, s[next:], nextWord) {
		return 0, next
	}
	return next, next
}

// dotEnds decides whether a full stop after word ends the sentence, given the text that follows.
func dotEnds(word, rest, nextWord string) bool {
	if abbrevContinues[word] {
		return false
	}
	if abbrevBeforeNumber[word] || len(word) <= 2 && isLowerWord(word) {
		// c. 1295, no. 42, fl. late 2nd century, cand. mag.
		r, _ := utf8.DecodeRuneInString(rest)
		return !unicode.IsDigit(r) && !unicode.IsLower(r)
	}
	if abbrevMaybeEnds[word] {
		r, _ := utf8.DecodeRuneInString(rest)
		return unicode.IsUpper(r)
	}
	if isInitial(word) {
		return isRoman(word) && romanStarters[nextWord]
	}
	if strings.IndexByte(word, '.') >= 0 && isInitialism(word) {
		return false
	}
	return true
}

// isSplitSpace reports whether r is white space that can separate sentences (a non-breaking space
// cannot).
func isSplitSpace(r rune) bool {
	return unicode.IsSpace(r) && r != '\u00a0' && r != '\u202f'
}

// glued reports whether the full stop at s[mark] joins two sentences with no space between them: a
// closing bracket or quote before it and a capitalised word after it ("Road).It is"). A lower-case
// letter before it is not enough: the published splits are as often joined as split there.
func glued(s string, start, mark int) bool {
	if mark+2 >= len(s) {
		return false
	}
	p, _ := utf8.DecodeLastRuneInString(s[start:mark])
	if p != ')' && p != '\'' {
		return false
	}
	r, m := utf8.DecodeRuneInString(s[mark+1:])
	r2, _ := utf8.DecodeRuneInString(s[mark+1+m:])
	return unicode.IsUpper(r) && unicode.IsLower(r2)
}

// SplitSentences returns the sentences of s, each trimmed of surrounding white space.
func SplitSentences(s string) []string {
	spans := SentenceSpans(s)
	out := make([]string, len(spans))
	for k, sp := range spans {
		out[k] = s[sp.Start:sp.End]
	}
	return out
}

// terminalLen returns the byte length of the terminal punctuation mark at s[i], or 0.
func terminalLen(s string, i int) int {
	switch s[i] {
	case '.', '!', '?':
		return 1
	case 0xE2: // … U+2026
		if strings.HasPrefix(s[i:], "…") {
			return len("…")
		}
	}
	return 0
}

func isCloser(r rune) bool {
	switch r {
	case '"', '\'', ')', ']', '}', '”', '’', '»', '›':
		return true
	}
	return false
}

func isOpener(r rune) bool {
	switch r {
	case '"', '\'', '(', '[', '{', '“', '‘', '«', '‹', '¿', '¡':
		return true
	}
	return false
}

// wordBefore returns the white-space delimited word that ends at s[mark] (the full stop), without
// opening brackets or quotes.
func wordBefore(s string, start, mark int) string {
	a := mark
	for a > start {
		r, n := utf8.DecodeLastRuneInString(s[start:a])
		if unicode.IsSpace(r) || isOpener(r) {
			break
		}
		a -= n
	}
	return s[a:mark]
}

// wordAt returns the run of letters at s[i:], skipping opening quotes and brackets.
func wordAt(s string, i int) string {
	for i < len(s) {
		r, n := utf8.DecodeRuneInString(s[i:])
		if !isOpener(r) {
			break
		}
		i += n
	}
	j := i
	for j < len(s) {
		r, n := utf8.DecodeRuneInString(s[j:])
		if !unicode.IsLetter(r) {
			break
		}
		j += n
	}
	return s[i:j]
}

// isInitial reports whether w is one capital letter (an initial).
func isInitial(w string) bool {
	r, n := utf8.DecodeRuneInString(w)
	return n == len(w) && unicode.IsUpper(r)
}

// isInitialism reports whether w is letters separated by full stops (U.S, F.W, e.g).
func isInitialism(w string) bool {
	for _, part := range strings.Split(w, ".") {
		if utf8.RuneCountInString(part) > 2 || part == "" {
			return false
		}
		for _, r := range part {
			if !unicode.IsLetter(r) {
				return false
			}
		}
	}
	return true
}

func isRoman(w string) bool { return w == "I" || w == "V" || w == "X" }

func isLowerWord(w string) bool {
	for _, r := range w {
		if !unicode.IsLower(r) {
			return false
		}
	}
	return w != ""
}

// romanStarters are the words after which "Abbas I." ends a sentence ("World War I. In 1918").
var romanStarters = setOf("The", "In", "He", "She", "It", "His", "Her", "They", "This", "After", "During",
	"Located", "On", "At", "A", "As", "When", "Its", "Their")

// abbrevContinues lists abbreviations after which a full stop never ends the sentence: titles and
// other abbreviations that are followed by more of the same sentence.
var abbrevContinues = setOf(
	"Mr", "Mrs", "Ms", "Messrs", "Dr", "Prof", "Rev", "Gen", "Col", "Lt", "Sgt", "Capt", "Maj", "Adm",
	"Gov", "Sen", "Rep", "Cpl", "Pvt", "Ger", "Mt", "Ft", "St", "Ste", "Ct", "vs", "v", "e.g", "i.e", "cf", "viz", "approx",
	"Jan", "Feb", "Aug", "Sept", "Oct", "Nov", "Dec", "Ave", "Blvd", "Mme", "Mlle", "Msgr",
)

// abbrevBeforeNumber lists abbreviations that do not end a sentence before a number or a lower-case
// word (dates, numbering, degrees).
var abbrevBeforeNumber = setOf("no", "No", "est", "Vol", "vol", "Op", "op", "fl", "ca", "bef", "aft", "lit",
	"cand", "mag", "philol", "transl", "translit", "approx", "nos", "pp", "ch")

// abbrevMaybeEnds lists abbreviations that end a sentence only before a capitalised word
// ("Warner Bros. Interactive" splits in the published data; "Inc. and" does not).
var abbrevMaybeEnds = setOf("Inc", "Ltd", "Co", "Corp", "Bros", "Jr", "Sr", "Esq", "Pte", "al")

func setOf(words ...string) map[string]bool {
	m := make(map[string]bool, len(words))
	for _, w := range words {
		m[w] = true
	}
	return m
}
