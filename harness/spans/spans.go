// Package spans finds candidate entity mentions in English text: quoted titles, dates, capitalised names
// and numbers (Find), and parses the dates it finds (ParseDate). The rule-based extractor
// (harness/extract) and the offline reader (harness/llm/offline) both build on it; it depends only on
// harness/text.
//
// It is not a named-entity recogniser: spans are found by surface rules, without a model.
package spans

import (
	"regexp"
	"sort"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/ragbench/ragbench/harness/text"
)

// Kind classifies a span found by Find.
type Kind int

// The span kinds, in the order of precedence used when spans overlap.
const (
	// Title is a quoted title ("Greatest Hits Volume Two").
	Title Kind = iota
	// Date is a calendar date or a bare year (28 August 1921, November 18, 1901, August 1993, 1933).
	Date
	// Name is a capitalised span (Fernando Fernán Gómez, The Mask of Fu Manchu).
	Name
	// Number is a number, with a scale word or a per cent sign when present (150,782, 4.5 million, 12%).
	Number
)

// String returns the kind's lower-case name.
func (k Kind) String() string {
	switch k {
	case Title:
		return "title"
	case Date:
		return "date"
	case Name:
		return "name"
	case Number:
		return "number"
	}
	return "kind(" + strconv.Itoa(int(k)) + ")"
}

// Span is a candidate entity: the byte range [Start, End) of the text it was found in, and its kind.
type Span struct {
	Start, End int
	Kind       Kind
}

// sp is a space inside a date or number, ordinary or non-breaking.
const sp = `[ \x{00a0}]`

const monthRE = `(?:January|February|March|April|May|June|July|August|September|October|November|December|` +
	`Jan\.?|Feb\.?|Mar\.?|Apr\.?|Jun\.?|Jul\.?|Aug\.?|Sept?\.?|Oct\.?|Nov\.?|Dec\.?)`

var (
	dateRE = regexp.MustCompile(
		`\b(?:\d{1,2}(?:st|nd|rd|th)?` + sp + monthRE + `,?` + sp + `\d{1,4}` + // 28 August 1921
			`|` + monthRE + sp + `\d{1,2}(?:st|nd|rd|th)?,?` + sp + `\d{3,4}` + // November 18, 1901
			`|` + monthRE + sp + `\d{3,4}` + // August 1993
			`|\d{1,2}` + sp + monthRE + // 28 August
			`|` + monthRE + sp + `\d{1,2}\b` + // August 25
			`|(?:1\d{3}|20\d{2})(?:s)?)(?:\b|$)`) // 1933, 1990s
	numberRE = regexp.MustCompile(`(?:^|[^\p{L}\p{N}])(\d+(?:[.,]\d+)*(?:` + sp + `?(?:%|per ?cent|percent|thousand|million|billion|trillion))?)\b`)
	titleRE  = regexp.MustCompile(`"([^"\n]{1,120})"|“([^”\n]{1,120})”`)
	months   = map[string]int{
		"january": 1, "february": 2, "march": 3, "april": 4, "may": 5, "june": 6, "july": 7, "august": 8,
		"september": 9, "october": 10, "november": 11, "december": 12,
		"jan": 1, "feb": 2, "mar": 3, "apr": 4, "jun": 6, "jul": 7, "aug": 8, "sep": 9, "sept": 9,
		"oct": 10, "nov": 11, "dec": 12,
	}
)

// connectors may appear inside a capitalised name when another capitalised word follows.
var connectors = map[string]bool{
	"of": true, "the": true, "de": true, "da": true, "del": true, "della": true, "di": true, "du": true,
	"des": true, "la": true, "le": true, "von": true, "van": true, "der": true, "den": true, "y": true,
	"&": true, "-": true, "in": true, "on": true, "for": true, "al": true, "bin": true, "ibn": true,
	"'": true, "upon": true, "at": true,
}

// nameStop are capitalised words that do not begin a name (sentence openers, pronouns, question words).
var nameStop = map[string]bool{
	"a": true, "an": true, "he": true, "she": true, "it": true, "they": true, "we": true, "i": true,
	"you": true, "in": true, "on": true, "at": true, "after": true, "before": true, "this": true,
	"that": true, "these": true, "those": true, "his": true, "her": true, "their": true, "its": true,
	"when": true, "where": true, "what": true, "who": true, "whom": true, "whose": true, "which": true,
	"how": true, "why": true, "is": true, "are": true, "was": true, "were": true, "do": true, "does": true,
	"did": true, "thus": true, "so": true, "but": true, "and": true, "however": true, "both": true,
	"there": true, "since": true, "as": true, "for": true, "from": true, "by": true, "with": true,
	"while": true, "if": true, "although": true, "during": true, "also": true, "then": true, "yes": true,
	"no": true, "can": true, "could": true, "will": true, "would": true, "should": true, "has": true,
	"have": true, "had": true, "may": true, "might": true, "must": true, "therefore": true, "of": true,
	"to": true, "or": true, "not": true, "one": true, "some": true, "many": true, "most": true,
	"all": true, "each": true, "other": true, "another": true, "our": true, "my": true, "your": true,
	"him": true, "them": true, "us": true, "me": true, "be": true, "being": true, "been": true,
	"answer": true, "question": true, "sentence": true, "according": true, "based": true,
}

// Find returns the candidate entity spans of s in text order: quoted titles, dates, capitalised
// names and numbers. Where spans overlap, the kind earlier in the Kind list wins, then the longer span.
// Month names alone, sentence openers ("After", "In", "He") and question words are not names.
func Find(s string) []Span {
	var all []Span
	// Every date and number holds a digit and every title a quote: skip the regexps when there is none.
	hasDigit := strings.ContainsAny(s, "0123456789")
	hasQuote := strings.ContainsAny(s, "\"“")
	var titles, dates, numbers [][]int
	if hasQuote {
		titles = titleRE.FindAllStringSubmatchIndex(s, -1)
	}
	if hasDigit {
		dates = dateRE.FindAllStringIndex(s, -1)
		numbers = numberRE.FindAllStringSubmatchIndex(s, -1)
	}
	for _, m := range titles {
		a, b := m[2], m[3]
		if a < 0 {
			a, b = m[4], m[5]
		}
		inner := strings.TrimSpace(s[a:b])
		if inner == "" {
			continue
		}
		r, _ := utf8.DecodeRuneInString(inner)
		if !unicode.IsUpper(r) && !unicode.IsDigit(r) {
			continue
		}
		a += strings.Index(s[a:b], inner)
		all = append(all, Span{a, a + len(inner), Title})
	}
	for _, m := range dates {
		a, b := m[0], m[1]
		b = a + len(strings.TrimRight(s[a:b], ".,"))
		all = append(all, Span{a, b, Date})
	}
	for _, m := range numbers {
		all = append(all, Span{m[2], m[3], Number})
	}
	all = appendNames(all, s)
	sort.SliceStable(all, func(i, j int) bool {
		if all[i].Kind != all[j].Kind {
			return all[i].Kind < all[j].Kind
		}
		if li, lj := all[i].End-all[i].Start, all[j].End-all[j].Start; li != lj {
			return li > lj
		}
		return all[i].Start < all[j].Start
	})
	var kept []Span
	for _, sp := range all {
		ok := true
		for _, k := range kept {
			if sp.Start < k.End && k.Start < sp.End {
				ok = false
				break
			}
		}
		if ok {
			kept = append(kept, sp)
		}
	}
	sort.Slice(kept, func(i, j int) bool { return kept[i].Start < kept[j].Start })
	return kept
}

// appendNames appends the capitalised-name spans of s.
func appendNames(dst []Span, s string) []Span {
	toks := text.Tokenize(s)
	isCap := func(t text.Token) bool {
		r, _ := utf8.DecodeRuneInString(t.Text)
		return unicode.IsUpper(r)
	}
	// isNameWord also accepts words such as "13th" inside a name.
	isNameWord := func(t text.Token) bool {
		if isCap(t) {
			return months[strings.ToLower(t.Text)] == 0
		}
		r, _ := utf8.DecodeRuneInString(t.Text)
		return unicode.IsDigit(r) && !isDigits(t.Text)
	}
	for i := 0; i < len(toks); {
		if !isCap(toks[i]) || nameStop[strings.ToLower(toks[i].Text)] || months[strings.ToLower(toks[i].Text)] != 0 {
			i++
			continue
		}
		start, end := i, i // tokens [start, end]
		j := i + 1
		for j < len(toks) {
			t := toks[j]
			low := strings.ToLower(t.Text)
			adjacent := t.Start == toks[j-1].End
			switch {
			case isNameWord(t):
				end = j
				j++
				continue
			case t.Text == "." && adjacent && utf8.RuneCountInString(toks[j-1].Text) <= 2 && isCap(toks[j-1]):
				// an initial: "H. Bruce", "Jr."
				if j+1 < len(toks) && isCap(toks[j+1]) {
					end = j
					j++
					continue
				}
			case isDigits(t.Text) && len(t.Text) != 4 && isCap(toks[j-1]):
				end = j // "Local 282", "Louis 14"
				j++
				continue
			case connectors[low] || (low == "'" && adjacent):
				// A run of connectors must be followed by a capitalised word.
				k := j
				for k < len(toks) && (connectors[strings.ToLower(toks[k].Text)]) && k-j < 3 {
					k++
				}
				if k < len(toks) && k > j && isNameWord(toks[k]) &&
					(toks[j].Text != "'" || toks[j].Start == toks[j-1].End) {
					end = k
					j = k + 1
					continue
				}
			}
			break
		}
		if start != end || toks[start].Text != "The" {
			dst = append(dst, Span{toks[start].Start, toks[end].End, Name})
		}
		i = end + 1
	}
	return dst
}

func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// DateValue is a parsed date; a zero Month or Day means the date did not give it.
type DateValue struct {
	Year, Month, Day int
}

// Less reports whether d is earlier than e, comparing missing parts as zero.
func (d DateValue) Less(e DateValue) bool {
	if d.Year != e.Year {
		return d.Year < e.Year
	}
	if d.Month != e.Month {
		return d.Month < e.Month
	}
	return d.Day < e.Day
}

// Days returns an approximate day count since year 0, for differences between dates.
func (d DateValue) Days() int {
	return d.Year*365 + max(d.Month-1, 0)*30 + max(d.Day-1, 0)
}

// ParseDate parses the dates Find recognises ("28 August 1921", "November 18, 1901",
// "August 1993", "1933"). It reports false when s holds no year.
func ParseDate(s string) (DateValue, bool) {
	var d DateValue
	var nums []int
	for _, w := range text.Words(s) {
		low := strings.ToLower(w)
		if m, ok := months[low]; ok && d.Month == 0 {
			d.Month = m
			continue
		}
		low = strings.TrimRight(low, "stndrdh")
		if n, err := strconv.Atoi(low); err == nil {
			nums = append(nums, n)
		}
	}
	for _, n := range nums {
		if n > 31 || (len(nums) == 1 && d.Month == 0) {
			if d.Year == 0 {
				d.Year = n
			}
		} else if d.Day == 0 && n >= 1 && d.Month != 0 {
			d.Day = n
		}
	}
	if d.Year == 0 {
		return d, false
	}
	return d, true
}

// NameStop reports whether word, lower-cased, is one of the capitalised words that never begin a name
// (sentence openers, pronouns, question words such as "He", "After", "Which"); Find uses the same list.
func NameStop(word string) bool { return nameStop[strings.ToLower(word)] }
