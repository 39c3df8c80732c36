package bm25

import "unicode/utf8"

// porter implements the original Porter (1980) stemming algorithm as Lucene's PorterStemFilter applies it
// (Elasticsearch's "porter_stem", the last step of its "english" analyzer). It follows Martin Porter's
// reference implementation, including its two departures from the paper (step 2 maps -bli to -ble and
// -logi to -log), and leaves words of one or two characters alone. Letters outside a-z count as
// consonants, as in Lucene, which works on the characters of the already lowercased token.
type porter struct {
	b    []rune
	k, j int // b[0..k] is the current word; j marks the end of the stem for the last matched suffix
}

// stemPorter returns the Porter stem of a lowercased word.
func stemPorter(w string) string {
	if len(w) <= 2 {
		return w
	}
	var buf [64]rune
	p := porter{b: buf[:0]}
	for _, r := range w {
		p.b = append(p.b, r)
	}
	p.k = len(p.b) - 1
	if p.k <= 1 {
		return w
	}
	p.step1ab()
	p.step1c()
	p.step2()
	p.step3()
	p.step4()
	p.step5()
	if p.k+1 == utf8.RuneCountInString(w) {
		// Unchanged length; compare to avoid an allocation when nothing changed.
		i := 0
		for _, r := range w {
			if p.b[i] != r {
				return string(p.b[:p.k+1])
			}
			i++
		}
		return w
	}
	return string(p.b[:p.k+1])
}

// cons reports whether b[i] is a consonant.
func (p *porter) cons(i int) bool {
	switch p.b[i] {
	case 'a', 'e', 'i', 'o', 'u':
		return false
	case 'y':
		return i == 0 || !p.cons(i-1)
	}
	return true
}

// m measures the number of consonant sequences in b[0..j]: [C](VC)^m[V] gives m.
func (p *porter) m() int {
	n, i := 0, 0
	for {
		if i > p.j {
			return n
		}
		if !p.cons(i) {
			break
		}
		i++
	}
	i++
	for {
		for {
			if i > p.j {
				return n
			}
			if p.cons(i) {
				break
			}
			i++
		}
		i++
		n++
		for {
			if i > p.j {
				return n
			}
			if !p.cons(i) {
				break
			}
			i++
		}
		i++
	}
}

// vowelInStem reports whether b[0..j] contains a vowel.
func (p *porter) vowelInStem() bool {
	for i := 0; i <= p.j; i++ {
		if !p.cons(i) {
			return true
		}
	}
	return false
}

// doubleC reports whether b[i-1..i] is a double consonant.
func (p *porter) doubleC(i int) bool {
	return i >= 1 && p.b[i] == p.b[i-1] && p.cons(i)
}

// cvc reports whether b[i-2..i] is consonant-vowel-consonant with the last not w, x or y.
func (p *porter) cvc(i int) bool {
	if i < 2 || !p.cons(i) || p.cons(i-1) || !p.cons(i-2) {
		return false
	}
	switch p.b[i] {
	case 'w', 'x', 'y':
		return false
	}
	return true
}

// ends reports whether b[0..k] ends with s, and if so sets j to the end of the stem before it.
func (p *porter) ends(s string) bool {
	o := p.k - len(s) + 1
	if o < 0 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if p.b[o+i] != rune(s[i]) {
			return false
		}
	}
	p.j = p.k - len(s)
	return true
}

// setTo replaces b[j+1..k] with s.
func (p *porter) setTo(s string) {
	p.b = p.b[:p.j+1]
	for i := 0; i < len(s); i++ {
		p.b = append(p.b, rune(s[i]))
	}
	p.k = p.j + len(s)
}

// r replaces the suffix with s when the stem's measure is positive.
func (p *porter) r(s string) {
	if p.m() > 0 {
		p.setTo(s)
	}
}

// truncate sets the word end to k. The characters after k stay in b: as in the reference
// implementation, the last step may still measure them through j.
func (p *porter) truncate(k int) { p.k = k }

// step1ab removes plurals and -ed or -ing.
func (p *porter) step1ab() {
	if p.b[p.k] == 's' {
		switch {
		case p.ends("sses"):
			p.truncate(p.k - 2)
		case p.ends("ies"):
			p.setTo("i")
		case p.b[p.k-1] != 's':
			p.truncate(p.k - 1)
		}
	}
	if p.ends("eed") {
		if p.m() > 0 {
			p.truncate(p.k - 1)
		}
		return
	}
	if (p.ends("ed") || p.ends("ing")) && p.vowelInStem() {
		p.truncate(p.j)
		switch {
		case p.ends("at"):
			p.setTo("ate")
		case p.ends("bl"):
			p.setTo("ble")
		case p.ends("iz"):
			p.setTo("ize")
		case p.doubleC(p.k):
			switch p.b[p.k] {
			case 'l', 's', 'z':
			default:
				p.truncate(p.k - 1)
			}
		default:
			p.j = p.k
			if p.m() == 1 && p.cvc(p.k) {
				p.setTo("e")
			}
		}
	}
}

// step1c turns a terminal y into i when there is another vowel in the stem.
func (p *porter) step1c() {
	if p.ends("y") && p.vowelInStem() {
		p.b[p.k] = 'i'
	}
}

// suffixRule maps a suffix to its replacement.
type suffixRule struct{ from, to string }

// step2Rules maps double suffixes to single ones, keyed by the penultimate letter.
var step2Rules = map[rune][]suffixRule{
	'a': {{"ational", "ate"}, {"tional", "tion"}},
	'c': {{"enci", "ence"}, {"anci", "ance"}},
	'e': {{"izer", "ize"}},
	'l': {{"bli", "ble"}, {"alli", "al"}, {"entli", "ent"}, {"eli", "e"}, {"ousli", "ous"}},
	'o': {{"ization", "ize"}, {"ation", "ate"}, {"ator", "ate"}},
	's': {{"alism", "al"}, {"iveness", "ive"}, {"fulness", "ful"}, {"ousness", "ous"}},
	't': {{"aliti", "al"}, {"iviti", "ive"}, {"biliti", "ble"}},
	'g': {{"logi", "log"}},
}

// step3Rules handles -ic-, -full, -ness and the like, keyed by the last letter.
var step3Rules = map[rune][]suffixRule{
	'e': {{"icate", "ic"}, {"ative", ""}, {"alize", "al"}},
	'i': {{"iciti", "ic"}},
	'l': {{"ical", "ic"}, {"ful", ""}},
	's': {{"ness", ""}},
}

// applyFirst applies the first rule whose suffix matches (and only that one).
func (p *porter) applyFirst(rules []suffixRule) {
	for _, rule := range rules {
		if p.ends(rule.from) {
			p.r(rule.to)
			return
		}
	}
}

func (p *porter) step2() {
	if p.k == 0 {
		return
	}
	p.applyFirst(step2Rules[p.b[p.k-1]])
}

func (p *porter) step3() { p.applyFirst(step3Rules[p.b[p.k]]) }

// step4Suffixes are removed in context m > 1, keyed by the penultimate letter.
var step4Suffixes = map[rune][]string{
	'a': {"al"},
	'c': {"ance", "ence"},
	'e': {"er"},
	'i': {"ic"},
	'l': {"able", "ible"},
	'n': {"ant", "ement", "ment", "ent"},
	'o': {"ion", "ou"},
	's': {"ism"},
	't': {"ate", "iti"},
	'u': {"ous"},
	'v': {"ive"},
	'z': {"ize"},
}

// step4 takes off -ant, -ence and the like when the stem's measure exceeds 1.
func (p *porter) step4() {
	if p.k == 0 {
		return
	}
	matched := false
	for _, s := range step4Suffixes[p.b[p.k-1]] {
		if !p.ends(s) {
			continue
		}
		if s == "ion" && (p.j < 0 || (p.b[p.j] != 's' && p.b[p.j] != 't')) {
			continue // -ion goes only after s or t; try the next suffix
		}
		matched = true
		break
	}
	if matched && p.m() > 1 {
		p.truncate(p.j)
	}
}

// step5 removes a final -e when m > 1 (or m = 1 and not *o), and -ll to -l when m > 1.
func (p *porter) step5() {
	p.j = p.k
	if p.b[p.k] == 'e' {
		a := p.m()
		if a > 1 || a == 1 && !p.cvc(p.k-1) {
			p.truncate(p.k - 1)
		}
	}
	if p.b[p.k] == 'l' && p.doubleC(p.k) && p.m() > 1 {
		p.truncate(p.k - 1)
	}
}
