package bm25

import (
	"encoding/binary"
	"fmt"
	"math/bits"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
	"unsafe"

	"github.com/ragbench/ragbench/harness/text"
)

// Analyzer names the text analysis applied to documents and queries.
type Analyzer string

// The analyzers.
const (
	// AnalyzerStandard lowercases the tokens of harness/text (DPR SimpleTokenizer-style words) and drops
	// punctuation tokens.
	AnalyzerStandard Analyzer = "standard"
	// AnalyzerEnglish is AnalyzerStandard plus Elasticsearch's "english" analyzer steps: the possessive
	// 's is removed, Lucene's 33 English stopwords are dropped, and the Porter stemmer is applied. It is
	// the default, as in Pyserini and the Elasticsearch setup of QuCo-RAG/DRAGIN.
	AnalyzerEnglish Analyzer = "english"
)

// Validate reports an unknown analyzer.
func (a Analyzer) Validate() error {
	switch a {
	case AnalyzerStandard, AnalyzerEnglish:
		return nil
	}
	return fmt.Errorf("bm25: unknown analyzer %q (want standard or english)", string(a))
}

// englishStopwords is Lucene's EnglishAnalyzer.ENGLISH_STOP_WORDS_SET, which Elasticsearch's "_english_"
// stopword list also is.
var englishStopwords = map[string]bool{}

func init() {
	for _, w := range strings.Fields(`a an and are as at be but by for if in into is it no not of on or such
		that the their then there these they this to was will with`) {
		englishStopwords[w] = true
	}
}

// isWordToken reports whether tok starts with a letter, digit or mark (the tokenizer's word runs);
// punctuation and symbol tokens are not indexed.
func isWordToken(tok string) bool {
	c := tok[0]
	if c < utf8.RuneSelf {
		return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
	}
	r, _ := utf8.DecodeRuneInString(tok)
	return r != utf8.RuneError && (unicode.IsLetter(r) || unicode.IsNumber(r) || unicode.IsMark(r))
}

// isApostrophe reports whether tok is an apostrophe that can start a possessive 's.
func isApostrophe(tok string) bool { return tok == "'" || tok == "\u2019" || tok == "\uff07" }

// lower appends the lowercase form of tok to dst.
func lower(dst []byte, tok string) []byte {
	start := len(dst)
	for i := 0; i < len(tok); i++ {
		c := tok[i]
		if c >= utf8.RuneSelf {
			return append(dst[:start], strings.ToLower(tok)...)
		}
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		dst = append(dst, c)
	}
	return dst
}

// eachToken calls fn with every lowercased indexable token of s, before stopword removal and stemming.
// The slice passed to fn is reused after fn returns. With possessive set, the "s" of a possessive 's
// (a word, an apostrophe and the letter s, with no space between) is skipped, as Elasticsearch's
// english_possessive_stemmer does.
func eachToken(s string, possessive bool, fn func(tok []byte)) {
	var buf []byte
	var prevEnd, aposEnd = -1, -1 // end of the last word token; end of an apostrophe right after it
	text.EachSpan(s, func(a, b int) {
		tok := s[a:b]
		if !isWordToken(tok) {
			if possessive && a == prevEnd && isApostrophe(tok) {
				aposEnd = b
			} else {
				aposEnd = -1
			}
			prevEnd = -1
			return
		}
		if possessive && a == aposEnd && (tok == "s" || tok == "S") {
			aposEnd, prevEnd = -1, -1
			return
		}
		aposEnd = -1
		prevEnd = b
		buf = lower(buf[:0], tok)
		fn(buf)
	})
}

// asciiWord marks the ASCII letters and digits (the tokenizer's ASCII word characters).
var asciiWord = func() (t [256]bool) {
	for c := 0; c < 256; c++ {
		t[c] = 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
	}
	return
}()

// asciiLower maps each byte to itself, except ASCII capitals to lowercase.
var asciiLower = func() (t [256]byte) {
	for c := range t {
		t[c] = byte(c)
		if 'A' <= c && c <= 'Z' {
			t[c] += 'a' - 'A'
		}
	}
	return
}()

// asciiWordEnd returns the end of the run of ASCII letters and digits in s that starts at or before i
// (len(s) at most), testing 8 bytes at a time.
func asciiWordEnd(s string, i int) int {
	const (
		low7 = 0x7f7f7f7f7f7f7f7f
		high = 0x8080808080808080
		ones = 0x0101010101010101
	)
	for i+8 <= len(s) {
		x := binary.LittleEndian.Uint64(unsafe.Slice(unsafe.StringData(s[i:]), 8))
		// Per byte, with the high bit as the flag (no carries cross bytes: every sum stays below 0x100):
		// y is the byte without its high bit, l that lowercased if it is a letter.
		y := x & low7
		l := y | 0x2020202020202020
		alpha := (l + (0x80-'a')*ones) &^ (l + (0x80-'z'-1)*ones)
		digit := (y + (0x80-'0')*ones) &^ (y + (0x80-'9'-1)*ones)
		word := (alpha | digit) &^ x & high // not ASCII (high bit set) is not a word byte here
		if other := ^word & high; other != 0 {
			return i + bits.TrailingZeros64(other)/8
		}
		i += 8
	}
	for i < len(s) && asciiWord[s[i]] {
		i++
	}
	return i
}

// appendTokens appends the tokens that eachToken yields for s to buf (lowercased, concatenated) and
// their spans in buf to toks. Pure-ASCII text, most of a typical corpus, takes a fast path that does
// what text.EachSpan and eachToken do for ASCII without a call per token; other text takes eachToken.
func appendTokens(buf []byte, toks []tokRef, s string, possessive bool) ([]byte, []tokRef) {
	buf0, toks0 := len(buf), len(toks)
	prevEnd, aposEnd := -1, -1 // as in eachToken
	for i := 0; i < len(s); {
		c := s[i]
		if c >= utf8.RuneSelf {
			// Not ASCII: drop what this string gave so far and take the general path.
			buf, toks = buf[:buf0], toks[:toks0]
			eachToken(s, possessive, func(tok []byte) {
				start := len(buf)
				buf = append(buf, tok...)
				toks = append(toks, tokRef{s: uint32(start), e: uint32(len(buf))})
			})
			return buf, toks
		}
		if asciiWord[c] {
			start := i
			i = asciiWordEnd(s, i+1)
			if i < len(s) && s[i] >= utf8.RuneSelf {
				continue // the word may go on in non-ASCII letters: the check above falls back
			}
			if possessive && start == aposEnd && i-start == 1 && (c == 's' || c == 'S') {
				aposEnd, prevEnd = -1, -1
				continue
			}
			aposEnd, prevEnd = -1, i
			off := len(buf)
			if n := i - start; n <= 8 {
				// A short word (most of them): lowercase and pack it in one integer, which the lookup
				// uses as the key, and store its bytes with one 8-byte write.
				var x uint64
				if start+8 <= len(s) {
					x = binary.LittleEndian.Uint64(unsafe.Slice(unsafe.StringData(s[start:]), 8))
				} else {
					for j := n - 1; j >= 0; j-- {
						x = x<<8 | uint64(s[start+j])
					}
				}
				pk := (x | 0x2020202020202020) & (^uint64(0) >> (64 - 8*n)) // letters and digits: |0x20 lowercases
				buf = slices.Grow(buf, 8)
				binary.LittleEndian.PutUint64(buf[off:off+8], pk)
				buf = buf[:off+n]
				toks = append(toks, tokRef{s: uint32(off), e: uint32(off + n), pk: pk})
				continue
			}
			buf = slices.Grow(buf, i-start)[:off+i-start]
			dst, src := buf[off:], s[start:i]
			for j := range dst {
				dst[j] = asciiLower[src[j]]
			}
			toks = append(toks, tokRef{s: uint32(off), e: uint32(len(buf))})
			continue
		}
		if c <= ' ' || c == 0x7f { // white space and control characters separate tokens
			i++
			continue
		}
		// A punctuation or symbol token of one byte: not indexed, but an apostrophe right after a word
		// can start a possessive.
		if possessive && i == prevEnd && c == '\'' {
			aposEnd = i + 1
		} else {
			aposEnd = -1
		}
		prevEnd = -1
		i++
	}
	return buf, toks
}

// analyze returns the index terms of s in order under analyzer a (stopwords removed, stems applied).
// It is the reference path used by queries and tests; the index builder caches the same mapping.
func analyze(a Analyzer, s string) []string {
	var out []string
	eachToken(s, a == AnalyzerEnglish, func(tok []byte) {
		if t, ok := termOf(a, tok); ok {
			out = append(out, t)
		}
	})
	return out
}

// termOf maps one lowercased token to its index term; ok is false for a stopword.
func termOf(a Analyzer, tok []byte) (string, bool) {
	if a != AnalyzerEnglish {
		return string(tok), true
	}
	if englishStopwords[string(tok)] {
		return "", false
	}
	return stemPorter(string(tok)), true
}

// Analyze returns the index terms of s under analyzer a, in order, with stopwords removed and stems
// applied. It is exported for inspection (ragbench search --explain) and tests.
func Analyze(a Analyzer, s string) []string { return analyze(a, s) }
