package offline

import (
	"math"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/ragbench/ragbench/harness/text"
)

// stopWords are not content words: they carry no weight in matching and get a fixed probability.
var stopWords = map[string]bool{}

func init() {
	for _, w := range strings.Fields(`a an the of in on at to for from by with about as into onto upon over under
		and or but nor so yet if then than that this these those there here is are was were be been being am
		do does did done doing have has had having will would shall should can could may might must
		i me my we our you your he him his she her it its they them their who whom whose what which when
		where why how whether not no yes also both either neither each all any some such same other another
		more most less least very too just only own up down out off again further once s t following question
		answer please one`) {
		stopWords[w] = true
	}
}

// irregular maps word forms to a shared stem.
var irregular = map[string]string{
	"died": "die", "dies": "die", "death": "die", "dead": "die", "dying": "die",
	"born": "birth", "births": "birth",
	"directed": "direct", "director": "direct", "directors": "direct", "directing": "direct",
	"married": "marri", "marriage": "marri", "wife": "spouse", "husband": "spouse",
	"older": "old", "oldest": "old", "younger": "young", "youngest": "young",
}

// stem lower-cases w and strips common suffixes.
func stem(w string) string {
	w = strings.ToLower(w)
	if s, ok := irregular[w]; ok {
		return s
	}
	for _, suf := range []string{"ing", "ed", "es", "s"} {
		if strings.HasSuffix(w, suf) && utf8.RuneCountInString(w)-len(suf) >= 4 {
			return w[:len(w)-len(suf)]
		}
	}
	return w
}

// isContent reports whether a token is a content word (not a stop word or punctuation).
func isContent(tok string) bool {
	r, _ := utf8.DecodeRuneInString(tok)
	if !unicode.IsLetter(r) && !unicode.IsDigit(r) {
		return false
	}
	return !stopWords[strings.ToLower(tok)]
}

// terms returns the distinct stemmed content words of s in order.
func terms(s string) []string {
	var out []string
	seen := map[string]bool{}
	text.EachSpan(s, func(a, b int) {
		if !isContent(s[a:b]) {
			return
		}
		t := stem(s[a:b])
		if !seen[t] {
			seen[t] = true
			out = append(out, t)
		}
	})
	return out
}

// sentence is one sentence of a context passage.
type sentence struct {
	text     string
	psg, idx int
	terms    map[string]bool
}

// index holds the prompt's sentences with IDF weights computed over them.
type index struct {
	sents []*sentence
	df    map[string]int
}

func newIndex(passages []string) *index {
	ix := &index{df: map[string]int{}}
	for pi, p := range passages {
		for si, s := range text.SplitSentences(p) {
			st := &sentence{text: s, psg: pi, idx: si, terms: map[string]bool{}}
			for _, t := range terms(s) {
				st.terms[t] = true
				ix.df[t]++
			}
			ix.sents = append(ix.sents, st)
		}
	}
	return ix
}

// weight is the IDF of a term over the prompt's sentences: ln(1 + N/df), with df at least 1.
func (ix *index) weight(t string) float64 {
	df := ix.df[t]
	if df == 0 {
		df = 1
	}
	return math.Log(1 + float64(len(ix.sents))/float64(df))
}

// coverage is the IDF-weighted share of q's terms that s contains, in [0, 1].
func (ix *index) coverage(q []string, s *sentence) float64 {
	var hit, all float64
	for _, t := range q {
		w := ix.weight(t)
		all += w
		if s.terms[t] {
			hit += w
		}
	}
	if all == 0 {
		return 0
	}
	return hit / all
}

// scored is a sentence with a score.
type scored struct {
	s     *sentence
	score float64
}

// rank orders the sentences by score, best first; ties go to the earlier passage and sentence.
func (ix *index) rank(score func(*sentence) float64) []scored {
	out := make([]scored, 0, len(ix.sents))
	for _, s := range ix.sents {
		out = append(out, scored{s, score(s)})
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].score > out[j].score })
	return out
}
