package extract

import (
	"context"
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/ragbench/ragbench/harness/spans"
	"github.com/ragbench/ragbench/harness/text"
)

// Rules is the offline, model-free Extractor. Entities are the spans spans.Find finds; triples come from
// subject–verb–object patterns:
//
//   - life spans: "X (28 August 1921 – 21 November 2007)" gives X's date of birth and date of death;
//   - "born [on] DATE [in PLACE]", "died [on] DATE [in PLACE]";
//   - "directed/produced/written/composed/performed/published by Y", "starring Y";
//   - "married Y", "X's husband/wife/father/mother ... Y", "son/daughter of Y [and Z]";
//   - "educated at / studied at / graduated from / attended Y";
//   - "X is a 1964 Spanish film" gives a publication date and a country of origin, "X was an
//     American actor" a country of citizenship;
//   - otherwise the subject, a short verb phrase and the next entity ("Kumbasaram was released in 2017"
//     gives ("Kumbasaram", "released in", "2017")).
//
// The subject is the entity that opens the sentence; a sentence opening with a pronoun or a common
// noun ("He", "The film") gives no subject, and the patterns that need one give nothing. Relations are
// named like Wikidata properties where a pattern knows the property. For a question, Triplets returns
// (head, relation) pairs. Rules is stateless and safe for concurrent use.
type Rules struct{}

// NewRules returns the rule-based extractor.
func NewRules() *Rules { return &Rules{} }

// Entities returns the question's entity spans, longest-first duplicates removed.
func (r *Rules) Entities(ctx context.Context, question string) ([]string, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	var out []string
	for _, sp := range spans.Find(question) {
		out = append(out, strings.TrimSpace(question[sp.Start:sp.End]))
	}
	return dedupe(out), nil
}

// Triplets returns the triples of a declarative sentence, or the (head, relation) pairs of a question.
func (r *Rules) Triplets(ctx context.Context, sentence string) ([]Triplet, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s := strings.TrimSpace(sentence)
	if s == "" {
		return nil, nil
	}
	found := spans.Find(s)
	var out []Triplet
	if IsQuestion(s) {
		out = questionPairs(s, found)
	} else {
		out = sentenceTriples(s, found)
	}
	return dedupeTriplets(out), nil
}

var questionOpeners = map[string]bool{
	"who": true, "whom": true, "whose": true, "what": true, "which": true, "when": true, "where": true,
	"why": true, "how": true, "is": true, "are": true, "was": true, "were": true, "do": true, "does": true,
	"did": true, "can": true, "could": true, "will": true, "would": true, "should": true, "has": true,
	"have": true, "had": true, "in": true,
}

// IsQuestion reports whether s is a question: it ends with '?' or opens with a question word.
func IsQuestion(s string) bool {
	s = strings.TrimSpace(s)
	if strings.HasSuffix(s, "?") {
		return true
	}
	w := text.Words(s)
	return len(w) > 0 && questionOpeners[strings.ToLower(w[0])] && !strings.HasSuffix(s, ".")
}

var (
	possessiveRE = regexp.MustCompile(`^'s?\s+((?:[a-z-]+\s+){0,2}?[a-z-]+)`)
	theRofRE     = regexp.MustCompile(`the\s+([a-z][a-z -]*?)\s+of\s+(?:the\s+)?(?:(?:film|song|album|novel|book|band|group|company|show|series|play|magazine)\s+)?$`)
	optionsRE    = regexp.MustCompile(`(?:,|:|between)\s*(.+?)\s+(?:or|and)\s+(.+?)\s*\??$`)
)

// questionStop are words that never form a question's relation.
var questionStop = map[string]bool{
	"who": true, "whom": true, "whose": true, "what": true, "which": true, "when": true, "where": true,
	"why": true, "how": true, "is": true, "are": true, "was": true, "were": true, "do": true, "does": true,
	"did": true, "the": true, "a": true, "an": true, "of": true, "or": true, "and": true, "first": true,
	"both": true, "same": true, "in": true, "on": true, "to": true, "by": true, "for": true, "from": true,
	"that": true, "this": true, "has": true, "have": true, "had": true, "be": true, "out": false,
	"film": true, "person": true, "one": true, "earlier": true, "later": true, "than": true, "with": true,
}

// questionPairs returns (entity, relation) pairs for a question.
func questionPairs(q string, found []spans.Span) []Triplet {
	var out []Triplet
	for _, sp := range found {
		if sp.Kind == spans.Number || sp.Kind == spans.Date {
			continue
		}
		head := strings.TrimSpace(q[sp.Start:sp.End])
		rel := ""
		if m := possessiveRE.FindStringSubmatch(q[sp.End:]); m != nil {
			rel = m[1] // "Diane Meyer Simon's husband"
		} else if m := theRofRE.FindStringSubmatch(q[:sp.Start]); m != nil {
			rel = lastWords(m[1], 2) // "the director of film X"
		} else {
			rel = predicate(q, found)
		}
		if rel != "" {
			out = append(out, Triplet{Head: head, Relation: rel})
		}
	}
	return out
}

// predicate returns the question's content words outside its entities, at most three.
func predicate(q string, found []spans.Span) string {
	var words []string
	text.EachSpan(q, func(a, b int) {
		for _, sp := range found {
			if a >= sp.Start && b <= sp.End {
				return
			}
		}
		w := strings.ToLower(q[a:b])
		r, _ := utf8.DecodeRuneInString(w)
		if !unicode.IsLetter(r) || questionStop[w] {
			return
		}
		words = append(words, w)
	})
	if len(words) > 3 {
		words = words[:3]
	}
	return strings.Join(words, " ")
}

func lastWords(s string, n int) string {
	w := strings.Fields(s)
	if len(w) > n {
		w = w[len(w)-n:]
	}
	return strings.Join(w, " ")
}

var (
	lifeRE = regexp.MustCompile(`^\s*\(([^()]*?)\s*[–—−-]+\s*([^()]*?)\)`)
	bornRE = regexp.MustCompile(`^\s*\(\s*(?:born|b\.)\s+([^()]*?)\)`)
	// byRE captures the relation of "<verb> by" and the byte offset of the agent.
	byRE = regexp.MustCompile(`\b(directed|produced|written|composed|performed|sung|recorded|published|founded|created|designed|developed|presented|hosted|narrated)\s+by\s+`)
	// verbRE matches verbs whose object is the next entity.
	verbRE = regexp.MustCompile(`\b(born|died|married|starring|stars|educated at|studied at|graduated from|attended|buried (?:at|in)|son of|daughter of|child of|wife of|husband of|spouse of|father of|mother of)\b\s*(?:on\s+|in\s+|at\s+|the\s+)?`)
	// isARE matches "is a 1964 Spanish" / "was an American".
	isARE = regexp.MustCompile(`\b(?:is|was)\s+an?\s+(?:[a-z]+\s+)?(?:(\d{4})\s+)?([A-Z][\p{L}]+(?:[- ][A-Z][\p{L}]+)?)?\s*([a-z][a-z -]*)?`)
	// possessive relation nouns: "X's husband, Y" / "X's father is Y".
	possRelRE = regexp.MustCompile(`^'s?\s+(husband|wife|father|mother|son|daughter|brother|sister|director|spouse)\s*(?:,|is|was)\s*`)
)

var byRelation = map[string]string{
	"directed": "director", "produced": "producer", "written": "screenwriter", "composed": "composer",
	"performed": "performer", "sung": "performer", "recorded": "performer", "published": "publisher",
	"founded": "founded by", "created": "creator", "designed": "designer", "developed": "developer",
	"presented": "presenter", "hosted": "presenter", "narrated": "narrator",
}

var workNouns = map[string]bool{
	"film": true, "movie": true, "song": true, "album": true, "novel": true, "book": true, "play": true,
	"series": true, "single": true, "documentary": true, "opera": true, "drama": true, "comedy": true,
	"thriller": true, "western": true, "musical": true, "game": true, "video": true, "short": true,
	"television": true, "silent": true, "horror": true, "crime": true, "action": true, "romantic": true,
	"war": true, "black": true, "adventure": true, "animated": true, "biographical": true, "mystery": true,
}

var personNouns = map[string]bool{
	"director": true, "actor": true, "actress": true, "singer": true, "writer": true, "poet": true,
	"producer": true, "politician": true, "player": true, "painter": true, "composer": true,
	"screenwriter": true, "filmmaker": true, "journalist": true, "king": true, "queen": true, "prince": true,
	"princess": true, "footballer": true, "musician": true, "author": true, "artist": true, "novelist": true,
	"businessman": true, "engineer": true, "scientist": true, "lawyer": true, "officer": true, "editor": true,
	"animator": true, "photographer": true, "cinematographer": true, "dancer": true, "comedian": true,
	"philosopher": true, "sociologist": true, "physicist": true, "mathematician": true, "botanist": true,
	"architect": true, "historian": true, "diplomat": true, "bishop": true, "priest": true, "general": true,
	"soldier": true, "noble": true, "nobleman": true, "noblewoman": true, "regent": true, "duke": true,
	"count": true, "countess": true, "duchess": true, "emperor": true, "empress": true, "executive": true,
	"presenter": true, "host": true, "rapper": true, "guitarist": true, "drummer": true, "pianist": true,
	"conductor": true, "sculptor": true, "designer": true, "model": true, "athlete": true, "coach": true,
	"manager": true, "economist": true, "physician": true, "surgeon": true, "chemist": true, "biologist": true,
	"teacher": true, "professor": true, "critic": true, "activist": true, "entrepreneur": true, "wrestler": true,
	"boxer": true, "cyclist": true, "swimmer": true, "sprinter": true, "runner": true, "cricketer": true,
	"lyricist": true, "playwright": true, "dramatist": true, "choreographer": true, "stuntman": true,
}

// sentenceTriples applies the declarative patterns.
func sentenceTriples(s string, found []spans.Span) []Triplet {
	subj, subjEnd := subject(s, found)
	var out []Triplet
	add := func(h, r, t string) {
		h, t = strings.TrimSpace(h), strings.Trim(strings.TrimSpace(t), ",;")
		if h != "" && t != "" && !strings.EqualFold(h, t) {
			out = append(out, Triplet{Head: h, Relation: r, Tail: t})
		}
	}
	// Life spans right after an entity.
	for _, sp := range found {
		if sp.Kind != spans.Name && sp.Kind != spans.Title {
			continue
		}
		head := s[sp.Start:sp.End]
		if sp == firstSpan(found) {
			head = subjOr(subj, head)
		} else if subj != "" || sp.Start > 0 {
			continue // a life span belongs to the sentence's subject
		}
		rest := s[sp.End:]
		if m := lifeRE.FindStringSubmatchIndex(rest); m != nil {
			if d := lastSpanOf(rest[m[2]:m[3]], spans.Date); d != "" {
				add(head, "date of birth", d)
			}
			if d := firstSpanOf(rest[m[4]:m[5]], spans.Date); d != "" {
				add(head, "date of death", d)
			}
		} else if m := bornRE.FindStringSubmatchIndex(rest); m != nil {
			if d := lastSpanOf(rest[m[2]:m[3]], spans.Date); d != "" {
				add(head, "date of birth", d)
			}
		}
	}
	if subj != "" {
		// "<verb> by Y"
		for _, m := range byRE.FindAllStringSubmatchIndex(s, -1) {
			if t := spanAfter(s, found, m[1], spans.Name, spans.Title); t != "" {
				add(subj, byRelation[s[m[2]:m[3]]], t)
			}
		}
		// verbs with an object
		for _, m := range verbRE.FindAllStringSubmatchIndex(s, -1) {
			verb := s[m[2]:m[3]]
			sp, ok := spanStarting(s, found, m[1])
			if !ok {
				continue
			}
			t := s[sp.Start:sp.End]
			switch {
			case verb == "born" || verb == "died":
				what := "birth"
				if verb == "died" {
					what = "death"
				}
				if sp.Kind == spans.Date {
					add(subj, "date of "+what, t)
					if sp2, ok := spanStarting(s, found, skipWord(s, sp.End, "in")); ok && sp2.Kind == spans.Name {
						add(subj, "place of "+what, s[sp2.Start:sp2.End])
					}
				} else if sp.Kind == spans.Name {
					add(subj, "place of "+what, t)
				}
			case verb == "married" || strings.HasPrefix(verb, "wife") || strings.HasPrefix(verb, "husband") || strings.HasPrefix(verb, "spouse"):
				add(subj, "spouse", t)
			case verb == "starring" || verb == "stars":
				add(subj, "cast member", t)
			case strings.HasPrefix(verb, "son") || strings.HasPrefix(verb, "daughter") || strings.HasPrefix(verb, "child"):
				add(subj, "father", t)
				if sp2, ok := spanStarting(s, found, skipWord(s, sp.End, "and")); ok && sp2.Kind == spans.Name {
					add(subj, "mother", s[sp2.Start:sp2.End])
				}
			case strings.HasPrefix(verb, "father of") || strings.HasPrefix(verb, "mother of"):
				add(t, strings.Fields(verb)[0], subj)
			case strings.HasPrefix(verb, "buried"):
				add(subj, "place of burial", t)
			default:
				add(subj, "educated at", t)
			}
		}
		// "is a 1964 Spanish film", "was an American actor"
		if m := isARE.FindStringSubmatchIndex(s[subjEnd:]); m != nil && m[0] <= 120 && !strings.ContainsAny(s[subjEnd:subjEnd+m[0]], ";") {
			year, nat, noun := sub(s[subjEnd:], m, 1), sub(s[subjEnd:], m, 2), sub(s[subjEnd:], m, 3)
			isWork, isPerson := false, false
			for _, w := range strings.Fields(noun) {
				isWork = isWork || workNouns[w]
				isPerson = isPerson || personNouns[strings.TrimSuffix(w, "s")]
			}
			isWork = isWork && !isPerson
			if year != "" && isWork {
				add(subj, "publication date", year)
			}
			if nat != "" && isDemonym(nat) {
				if isWork {
					add(subj, "country of origin", nat)
				} else {
					add(subj, "country of citizenship", nat)
				}
			}
		}
		// "X's husband, Y" / "X's father is Y"
		if m := possRelRE.FindStringSubmatchIndex(s[subjEnd:]); m != nil {
			if sp, ok := spanStarting(s, found, subjEnd+m[1]); ok {
				rel := s[subjEnd+m[2] : subjEnd+m[3]]
				if rel == "husband" || rel == "wife" {
					rel = "spouse"
				}
				add(subj, rel, s[sp.Start:sp.End])
			}
		}
	}
	if len(out) == 0 && subj != "" {
		// Generic: subject, short verb phrase, next entity.
		for _, sp := range found {
			if sp.Start < subjEnd {
				continue
			}
			if rel, ok := verbPhrase(s[subjEnd:sp.Start]); ok {
				add(subj, rel, s[sp.Start:sp.End])
			}
			break
		}
	}
	return out
}

func sub(s string, m []int, i int) string {
	if m[2*i] < 0 {
		return ""
	}
	return strings.TrimSpace(s[m[2*i]:m[2*i+1]])
}

// isDemonym reports whether w looks like a nationality adjective (Spanish, Italian, Danish, Greek).
func isDemonym(w string) bool {
	for _, suf := range []string{"an", "ish", "ese", "ch", "ic", "i", "ian", "ean", "ek", "ss"} {
		if strings.HasSuffix(w, suf) && !strings.Contains(w, " ") {
			return true
		}
	}
	return false
}

var auxiliaries = map[string]bool{"is": true, "was": true, "were": true, "are": true, "has": true, "had": true, "have": true, "been": true, "be": true}

// verbPhrase accepts 1–5 lower-case words between a subject and an object and returns them without
// leading auxiliaries ("was released in" → "released in").
func verbPhrase(between string) (string, bool) {
	w := strings.Fields(strings.TrimSpace(between))
	if len(w) == 0 || len(w) > 5 {
		return "", false
	}
	for _, x := range w {
		r, _ := utf8.DecodeRuneInString(x)
		if !unicode.IsLower(r) || strings.ContainsAny(x, ",;:()\"") {
			return "", false
		}
	}
	for len(w) > 1 && auxiliaries[w[0]] {
		w = w[1:]
	}
	if w[0] == "and" || w[0] == "or" || w[0] == "of" {
		return "", false
	}
	return strings.Join(w, " "), true
}

// subject returns the entity opening s and where it ends: the first Name or Title span when it starts
// the sentence, else the words before " is "/" was " when they start with a capital letter (titles such
// as "El extraño viaje"), else nothing.
func subject(s string, found []spans.Span) (string, int) {
	prefix, prefixEnd := copulaPrefix(s)
	if len(found) > 0 && found[0].Start == 0 && (found[0].Kind == spans.Name || found[0].Kind == spans.Title) && prefixEnd <= found[0].End {
		end := found[0].End
		if found[0].Kind == spans.Title && end < len(s) && s[end] == '"' {
			end++
		}
		return s[found[0].Start:found[0].End], end
	}
	return prefix, prefixEnd
}

// copulaPrefix returns the words before " is "/" was " when they look like a title: at most six
// words, opening with a capital letter that is not a pronoun or "The <noun>", without punctuation.
func copulaPrefix(s string) (string, int) {
	r, _ := utf8.DecodeRuneInString(s)
	if !unicode.IsUpper(r) {
		return "", 0
	}
	best := -1
	for _, v := range []string{" is ", " was ", " were ", " are "} {
		if i := strings.Index(s, v); i > 0 && (best < 0 || i < best) {
			best = i
		}
	}
	if best < 0 {
		return "", 0
	}
	words := strings.Fields(s[:best])
	if len(words) > 6 || strings.ContainsAny(s[:best], ",;()") || strings.Contains(s[:best], "'s ") {
		return "", 0
	}
	first := strings.ToLower(words[0])
	if spans.NameStop(first) || first == "the" && len(words) == 2 {
		return "", 0 // "He was", "The film was"
	}
	return s[:best], best
}

func subjOr(subj, head string) string {
	if subj != "" {
		return subj
	}
	return head
}

func firstSpan(found []spans.Span) spans.Span {
	if len(found) == 0 {
		return spans.Span{}
	}
	return found[0]
}

// spanStarting returns the span starting at pos (after white space).
func spanStarting(s string, found []spans.Span, pos int) (spans.Span, bool) {
	for pos < len(s) && (s[pos] == ' ' || s[pos] == '"') {
		pos++
	}
	for _, sp := range found {
		if sp.Start == pos {
			return sp, true
		}
	}
	return spans.Span{}, false
}

// spanAfter returns the text of the span of one of the kinds starting at pos.
func spanAfter(s string, found []spans.Span, pos int, kinds ...spans.Kind) string {
	sp, ok := spanStarting(s, found, pos)
	if !ok {
		return ""
	}
	for _, k := range kinds {
		if sp.Kind == k {
			return s[sp.Start:sp.End]
		}
	}
	return ""
}

// skipWord returns the position after " word " following pos, or pos when the word is not there.
func skipWord(s string, pos int, word string) int {
	rest := s[pos:]
	t := strings.TrimLeft(rest, " ,")
	if strings.HasPrefix(t, word+" ") {
		return pos + (len(rest) - len(t)) + len(word) + 1
	}
	return pos
}

func firstSpanOf(s string, k spans.Kind) string {
	for _, sp := range spans.Find(s) {
		if sp.Kind == k {
			return s[sp.Start:sp.End]
		}
	}
	return ""
}

func lastSpanOf(s string, k spans.Kind) string {
	out := ""
	for _, sp := range spans.Find(s) {
		if sp.Kind == k {
			out = s[sp.Start:sp.End]
		}
	}
	return out
}

func dedupeTriplets(in []Triplet) []Triplet {
	seen := map[Triplet]bool{}
	var out []Triplet
	for _, t := range in {
		k := Triplet{strings.ToLower(t.Head), strings.ToLower(t.Relation), strings.ToLower(t.Tail)}
		if seen[k] {
			continue
		}
		seen[k] = true
		out = append(out, t)
	}
	return out
}
