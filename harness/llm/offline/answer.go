package offline

import (
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/ragbench/ragbench/harness/spans"
	"github.com/ragbench/ragbench/harness/text"
)

// qtype is the expected answer type.
type qtype int

const (
	tName qtype = iota
	tDate
	tNumber
	tYesNo
	tChoice
)

// plan is the reader's answer: the evidence sentences to copy, the answer span and its confidence.
type plan struct {
	evidence []evidence
	answer   string
	conf     float64
	alts     []candidate
}

// evidence is a copied sentence and its match score.
type evidence struct {
	text string
	conf float64
}

// candidate is a possible answer with its confidence.
type candidate struct {
	text string
	conf float64
}

var auxiliaries = map[string]bool{
	"is": true, "are": true, "was": true, "were": true, "do": true, "does": true, "did": true, "can": true,
	"could": true, "has": true, "have": true, "had": true, "will": true, "would": true, "should": true,
	"may": true, "might": true, "must": true, "shall": true, "am": true,
}

// bridgeNouns are relations whose value is another entity with facts of its own.
var bridgeNouns = map[string]bool{
	"director": true, "father": true, "mother": true, "wife": true, "husband": true, "spouse": true,
	"son": true, "daughter": true, "child": true, "brother": true, "sister": true, "sibling": true,
	"composer": true, "performer": true, "author": true, "writer": true, "producer": true, "creator": true,
	"founder": true, "father-in-law": true, "mother-in-law": true, "grandfather": true, "grandmother": true,
	"grandchild": true, "uncle": true, "aunt": true, "stepmother": true, "stepfather": true, "screenwriter": true,
	"editor": true, "singer": true, "band": true, "company": true, "team": true, "man": true, "woman": true,
	"person": true, "actor": true, "actress": true, "player": true, "publisher": true, "owner": true,
}

var (
	theRelOfRE       = regexp.MustCompile(`(?i)\bthe\s+([a-z-]+)\s+of\b`)
	possRelRE        = regexp.MustCompile(`(?i)'s?\s+([a-z-]+)`)
	relClauseRE      = regexp.MustCompile(`(?i)\b(?:the|a|an)\s+([a-z-]+)\s+(?:who|which|that|whose)\b`)
	whoseRelRE       = regexp.MustCompile(`(?i)\bwhose\s+([a-z-]+)`)
	lifeSpanRE       = regexp.MustCompile(`\(([^()]*?)\s*[–—−-]+\s*([^()]*?)\)`)
	bornDiedRE       = regexp.MustCompile(`(?i)\b(born|died)\b`)
	bornRE           = regexp.MustCompile(`(?i)\bborn\b`)
	diedRE           = regexp.MustCompile(`(?i)\bdied\b`)
	negatedFindingRE = regexp.MustCompile(`(?i)\b(?:no|not|neither|nor|never|without|failed to|did not|does not|do not|was not|were not|is not|are not)\b[^.;]{0,40}\b(?:significant|significantly|differ|difference|differences|associated|association|effect|effects|improve|improved|reduce|reduced|increase|increased|change|changed|predict|predictive|correlat\w*|benefit|influence|affect|affected|relationship|impact)\b`)
)

// relations counts the relation nouns chained in a question ("the director of", "X's father",
// "the woman who").
func relations(q string) int {
	n := 0
	for _, re := range []*regexp.Regexp{theRelOfRE, possRelRE, relClauseRE, whoseRelRE} {
		for _, m := range re.FindAllStringSubmatch(q, -1) {
			if bridgeNouns[strings.ToLower(m[1])] {
				n++
			}
		}
	}
	return n
}

// classify returns the expected answer type, the compared options for a choice, and whether the
// question asks a property (a date, place, number, nationality) rather than an entity.
func classify(q string) (qtype, []string, bool) {
	low := strings.ToLower(strings.TrimSpace(q))
	words := text.Words(low)
	first := ""
	if len(words) > 0 {
		first = words[0]
	}
	if opts := choiceOptions(q); opts != nil {
		return tChoice, opts, false
	}
	switch {
	case auxiliaries[first] || polarClause(low):
		return tYesNo, nil, false
	case first == "when" || containsAny(low, "what year", "which year", "what date", "which date", "in what year", "what decade", "what century"):
		return tDate, nil, true
	case containsAny(low, "how many", "how much", "how old", "how long", "how far", "how tall", "how big",
		"how large", "how high", "what percentage", "what number", "what is the population", "how fast"):
		return tNumber, nil, true
	case first == "who" || first == "whom" || first == "whose":
		return tName, nil, false
	}
	return tName, nil, true
}

var whWords = map[string]bool{"who": true, "whom": true, "whose": true, "what": true, "which": true,
	"when": true, "where": true, "why": true, "how": true}

// polarClause reports whether a question is polar although it does not open with an auxiliary: its
// last clause (after ':', '--' or ',') does ("Amblyopia: is visual loss permanent?"), or it ends in
// '?' without any question word ("Syncope during bathing, a form of urticaria?").
func polarClause(low string) bool {
	if !strings.HasSuffix(low, "?") {
		return false
	}
	for _, w := range text.Words(low) {
		if whWords[w] {
			return false
		}
	}
	cut := max(strings.LastIndex(low, ":"), strings.LastIndex(low, "--"), strings.LastIndex(low, "—"), strings.LastIndex(low, ","))
	if cut >= 0 {
		if w := text.Words(low[cut:]); len(w) > 1 && auxiliaries[w[1]] {
			return true
		}
	}
	return true
}

func containsAny(s string, subs ...string) bool {
	for _, x := range subs {
		if strings.Contains(s, x) {
			return true
		}
	}
	return false
}

var betweenRE = regexp.MustCompile(`(?i)\b(?:between|out of)\s+(.+?)\s+and\s+(.+?)\s*\??$`)

// choiceOptions returns the two entities a comparison question chooses between ("…, X or Y?",
// "… between X and Y?"), or nil.
func choiceOptions(q string) []string {
	q = strings.TrimSpace(q)
	body := strings.TrimSpace(strings.TrimSuffix(q, "?"))
	if i := strings.LastIndex(body, " or "); i > 0 {
		left := body[:i]
		c := max(strings.LastIndex(left, ","), strings.LastIndex(left, ":"))
		if c >= 0 {
			a, b := strings.TrimSpace(left[c+1:]), strings.TrimSpace(body[i+4:])
			if a != "" && b != "" && len(strings.Fields(a)) <= 12 && len(strings.Fields(b)) <= 12 {
				return []string{a, b}
			}
		}
	}
	if m := betweenRE.FindStringSubmatch(q); m != nil {
		return []string{strings.TrimSpace(m[1]), strings.TrimSpace(m[2])}
	}
	return nil
}

// subtypeOf refines a name question: "place" (where, place of, which city), "nationality"
// (nationality, which country … from) or "".
func subtypeOf(q string) string {
	low := strings.ToLower(q)
	switch {
	case containsAny(low, "nationality", "which country", "what country") && !containsAny(low, "located", "born in", "die in"):
		return "nationality"
	case strings.HasPrefix(low, "where") || containsAny(low, "place of", "which city", "what city", "which country", "what country", "which state", "where"):
		return "place"
	}
	return ""
}

// cueOf returns which date a question asks about: "birth", "death", "life" (a life span) or "".
func cueOf(q string) string {
	low := strings.ToLower(q)
	switch {
	case containsAny(low, "lived longer", "live longer", "longer life", "lifespan", "life span", "lived the longest"):
		return "life"
	case containsAny(low, " die", "died", "death", "dead"):
		return "death"
	case containsAny(low, "born", "birth", "older", "younger", "oldest", "youngest"):
		return "birth"
	}
	return ""
}

// direction reports whether a comparison wants the smaller value (earlier, older, fewer): -1, the
// larger (later, younger, more): +1, or 0 when it cannot tell.
func direction(q string) int {
	low := " " + strings.ToLower(q) + " "
	for _, w := range []string{" first", " earlier", " earliest", " older", " oldest", " before", " sooner", " fewer", " less ", " smaller", " lower", " shorter"} {
		if strings.Contains(low, w) {
			return -1
		}
	}
	for _, w := range []string{" later", " latest", " last", " younger", " youngest", " recent", " newer", " after", " more ", " larger", " bigger", " higher", " taller", " longer", " most ", " greater"} {
		if strings.Contains(low, w) {
			return +1
		}
	}
	return 0
}

// reader state for one prompt.
type reading struct {
	ix      *index
	q       string
	qterms  []string
	maxHops int
	memo    map[string][]spans.Span
}

// spans memoises spans.Find per sentence.
func (r *reading) spans(s string) []spans.Span {
	if sp, ok := r.memo[s]; ok {
		return sp
	}
	sp := spans.Find(s)
	r.memo[s] = sp
	return sp
}

// read answers p.
func read(p Prompt, maxHops int) plan {
	r := &reading{ix: newIndex(p.Passages), q: p.Question, qterms: terms(p.Question), maxHops: maxHops, memo: map[string][]spans.Span{}}
	typ, opts, property := classify(p.Question)
	if len(r.ix.sents) == 0 {
		return guess(typ, opts)
	}
	switch typ {
	case tChoice:
		return r.choice(opts)
	case tYesNo:
		return r.yesNo()
	}
	return r.lookup(typ, property)
}

// guess answers without any passage.
func guess(typ qtype, opts []string) plan {
	switch {
	case typ == tChoice:
		return plan{answer: opts[0], conf: 0.01}
	case typ == tYesNo:
		return plan{answer: "yes", conf: 0.01}
	}
	return plan{answer: "unknown", conf: 0.01}
}

// lookup answers a factoid question from the best sentence, with a second hop for bridge questions.
func (r *reading) lookup(typ qtype, property bool) plan {
	ranked := r.ix.rank(func(s *sentence) float64 { return r.ix.coverage(r.qterms, s) })
	exclude := termSet(r.qterms)
	cue := cueOf(r.q)
	sub := ""
	if typ == tName {
		sub = subtypeOf(r.q)
	}
	rels := relations(r.q)
	wantHop := r.maxHops >= 2 && ((property && rels >= 1) || rels >= 2)
	for k := 0; k < len(ranked) && k < 5; k++ {
		s1 := ranked[k]
		if s1.score == 0 {
			break
		}
		if wantHop {
			if via, s2, bridge, ok := r.hopFrom(s1.s, exclude, typ, cue, sub); ok {
				ans, alts, f := r.pick(s2.s.text, typ, cue, sub, mergeSets(exclude, termSet(terms(bridge))), r.qterms)
				if ans != "" {
					conf := min(s1.score, s2.score) * f
					ev := []evidence{{s1.s.text, s1.score}}
					if via != s1.s {
						ev = append(ev, evidence{via.text, s1.score})
					}
					ev = append(ev, evidence{s2.s.text, s2.score})
					return plan{evidence: ev, answer: ans, conf: conf, alts: scaleAlts(alts, conf)}
				}
			}
		}
		ans, alts, f := r.pick(s1.s.text, typ, cue, sub, exclude, r.qterms)
		if ans != "" {
			conf := s1.score * f
			return plan{evidence: []evidence{{s1.s.text, s1.score}}, answer: ans, conf: conf, alts: scaleAlts(alts, conf)}
		}
	}
	// No span of any kind: the best sentence's longest run of new content words.
	best := ranked[0]
	ans := newWords(best.s.text, exclude)
	if ans == "" {
		ans = "unknown"
	}
	return plan{evidence: []evidence{{best.s.text, best.score}}, answer: ans, conf: best.score * 0.3}
}

func scaleAlts(alts []candidate, conf float64) []candidate {
	for i := range alts {
		alts[i].conf *= conf
	}
	return alts
}

func termSet(ts []string) map[string]bool {
	m := make(map[string]bool, len(ts))
	for _, t := range ts {
		m[t] = true
	}
	return m
}

// hop follows a bridge entity of s1 (a name not in the question) to the best other sentence that
// mentions it and holds an answer of the expected type. The score of the second sentence is the
// share of the bridge entity it contains times (0.5 + 0.5 × its coverage of the question terms s1
// did not match).
func (r *reading) hop(s1 *sentence, exclude map[string]bool, typ qtype, cue, sub string) (scored, string, bool) {
	var rest []string
	for _, t := range r.qterms {
		if !s1.terms[t] {
			rest = append(rest, t)
		}
	}
	var best scored
	bestBridge := ""
	for _, sp := range r.spans(s1.text) {
		if sp.Kind != spans.Name && sp.Kind != spans.Title {
			continue
		}
		b := s1.text[sp.Start:sp.End]
		bt := terms(b)
		if len(bt) == 0 || allIn(bt, exclude) {
			continue
		}
		// An agent ("directed by X", "the son of X") is the likelier bridge.
		prior := 0.7
		if w := strings.ToLower(lastWord(s1.text[:sp.Start])); w == "by" || w == "of" {
			prior = 1
		}
		for _, s2 := range r.ix.sents {
			if s2 == s1 {
				continue
			}
			cov := r.ix.coverage(bt, s2)
			if cov < 0.5 {
				continue
			}
			if typ == tDate && (cue == "birth" || cue == "death") && cueDate(s2.text, cue) == "" {
				continue
			}
			if ans, _, _ := r.pick(s2.text, typ, cue, sub, mergeSets(exclude, termSet(bt)), r.qterms); ans == "" {
				continue
			}
			score := cov * (0.5 + 0.5*r.ix.coverage(rest, s2))
			if len(rest) == 0 {
				score = cov
			}
			score *= prior
			if score > best.score {
				best, bestBridge = scored{s2, score}, b
			}
		}
	}
	return best, bestBridge, best.s != nil
}

// hopFrom tries hop from s1 and then from the other sentences of s1's passage, in order ("The film
// was directed by …" often comes second).
func (r *reading) hopFrom(s1 *sentence, exclude map[string]bool, typ qtype, cue, sub string) (*sentence, scored, string, bool) {
	if s2, b, ok := r.hop(s1, exclude, typ, cue, sub); ok {
		return s1, s2, b, true
	}
	for _, s := range r.ix.sents {
		if s.psg != s1.psg || s == s1 {
			continue
		}
		if s2, b, ok := r.hop(s, exclude, typ, cue, sub); ok && s2.s.psg != s1.psg {
			return s, s2, b, true
		}
	}
	return nil, scored{}, "", false
}

func allIn(ts []string, set map[string]bool) bool {
	for _, t := range ts {
		if !set[t] {
			return false
		}
	}
	return true
}

func mergeSets(a, b map[string]bool) map[string]bool {
	m := make(map[string]bool, len(a)+len(b))
	for k := range a {
		m[k] = true
	}
	for k := range b {
		m[k] = true
	}
	return m
}

// pick chooses the answer span of the expected type in a sentence. Spans whose words are all in
// exclude (the question's own entities) are skipped. Among the rest, the span nearest to a question
// word wins; ties go to the earlier span. The factor is 1 for a span of the expected type and 0.6
// for a fallback span of another kind.
func (r *reading) pick(s string, typ qtype, cue, sub string, exclude map[string]bool, qterms []string) (string, []candidate, float64) {
	found := r.spans(s)
	if typ == tDate && (cue == "birth" || cue == "death") {
		if d := cueDate(s, cue); d != "" {
			return d, nil, 1
		}
	}
	want := map[spans.Kind]bool{}
	switch typ {
	case tDate:
		want[spans.Date] = true
	case tNumber:
		want[spans.Number] = true
	default:
		want[spans.Name] = true
		want[spans.Title] = true
	}
	// Positions of question words in s.
	var qpos []int
	qset := termSet(qterms)
	text.EachSpan(s, func(a, b int) {
		if qset[stem(s[a:b])] {
			qpos = append(qpos, a)
		}
	})
	type cand struct {
		text string
		dist int
		pos  int
		pref int // preference rank for the subtype; lower is better
	}
	cueAt := -1
	if cue == "birth" || cue == "death" {
		re := bornRE
		if cue == "death" {
			re = diedRE
		}
		if m := re.FindStringIndex(s); m != nil {
			cueAt = m[1]
		}
	}
	prefOf := func(sp spans.Span) int {
		switch sub {
		case "place":
			prev := strings.ToLower(lastWord(s[:sp.Start]))
			in := prev == "in" || prev == "at" || prev == "from" || prev == "near"
			switch {
			case in && cueAt >= 0 && sp.Start >= cueAt:
				return 0
			case in:
				return 1
			case isDemonymWord(s[sp.Start:sp.End]):
				return 3
			}
			return 2
		case "nationality":
			if isDemonymWord(s[sp.Start:sp.End]) {
				return 0
			}
			return 1
		}
		return 0
	}
	collect := func(ok func(spans.Kind) bool) []cand {
		var out []cand
		for _, sp := range found {
			if !ok(sp.Kind) {
				continue
			}
			t := s[sp.Start:sp.End]
			if ts := terms(t); len(ts) == 0 || allIn(ts, exclude) {
				continue
			}
			if sub != "" && sp.Start == 0 {
				continue // the sentence's subject is not its property
			}
			d := len(s)
			for _, p := range qpos {
				d = min(d, abs(p-sp.Start), abs(p-sp.End))
			}
			out = append(out, cand{t, d, sp.Start, prefOf(sp)})
		}
		sort.SliceStable(out, func(i, j int) bool {
			if out[i].pref != out[j].pref {
				return out[i].pref < out[j].pref
			}
			return out[i].dist < out[j].dist
		})
		return out
	}
	factor := 1.0
	cs := collect(func(k spans.Kind) bool { return want[k] })
	if len(cs) == 0 && typ == tName {
		factor = 0.6
		cs = collect(func(k spans.Kind) bool { return true })
	}
	if len(cs) == 0 {
		return "", nil, 0
	}
	var alts []candidate
	for i, c := range cs[1:] {
		alts = append(alts, candidate{c.text, 0.5 / float64(i+2)})
	}
	return cs[0].text, alts, factor
}

// lastWord returns the last word of s.
func lastWord(s string) string {
	w := text.Words(s)
	if len(w) == 0 {
		return ""
	}
	return w[len(w)-1]
}

// isDemonymWord reports whether a span looks like a nationality adjective (American, Spanish,
// Danish, Japanese, Greek): one capitalised word with a demonym ending.
func isDemonymWord(w string) bool {
	if strings.ContainsAny(w, " -") {
		return false
	}
	for _, suf := range []string{"an", "ish", "ese", "ch", "ic", "i", "ek"} {
		if strings.HasSuffix(w, suf) {
			return true
		}
	}
	return false
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

// cueDate returns the birth or death date a sentence states: from a life span "(A – B)", or the date
// after "born"/"died".
func cueDate(s, cue string) string {
	if m := lifeSpanRE.FindStringSubmatch(s); m != nil {
		part := m[1]
		if cue == "death" {
			part = m[2]
		}
		if d := lastDate(part); d != "" {
			return d
		}
	}
	for _, m := range bornDiedRE.FindAllStringIndex(s, -1) {
		w := strings.ToLower(s[m[0]:m[1]])
		if (w == "born") != (cue == "birth") {
			continue
		}
		if d := firstDate(s[m[1]:min(len(s), m[1]+60)]); d != "" {
			return d
		}
	}
	return ""
}

func firstDate(s string) string {
	for _, sp := range spans.Find(s) {
		if sp.Kind == spans.Date {
			return s[sp.Start:sp.End]
		}
	}
	return ""
}

func lastDate(s string) string {
	out := ""
	for _, sp := range spans.Find(s) {
		if sp.Kind == spans.Date {
			out = s[sp.Start:sp.End]
		}
	}
	return out
}

// newWords returns the longest run (at most four words) of content words of s not in exclude.
func newWords(s string, exclude map[string]bool) string {
	bestA, bestB, bestN := 0, 0, 0
	runA, n := -1, 0
	lastB := 0
	text.EachSpan(s, func(a, b int) {
		tok := s[a:b]
		if isContent(tok) && !exclude[stem(tok)] && n < 4 {
			if runA < 0 {
				runA = a
			}
			n++
			lastB = b
			if n > bestN {
				bestA, bestB, bestN = runA, lastB, n
			}
			return
		}
		runA, n = -1, 0
	})
	return s[bestA:bestB]
}

// optionResult is the evidence about one compared option and the value to compare.
type optionResult struct {
	evidence []evidence
	date     spans.DateValue
	hasDate  bool
	life     int
	hasLife  bool
	number   float64
	hasNum   bool
	score    float64
	final    *sentence
}

// about finds the best sentence about an entity: 0.8 × the share of the entity's words it contains
// (at least half) + 0.2 × its coverage of the other question words.
func (r *reading) about(entity string) (scored, bool) {
	et := terms(entity)
	if len(et) == 0 {
		return scored{}, false
	}
	var rest []string
	es := termSet(et)
	for _, t := range r.qterms {
		if !es[t] {
			rest = append(rest, t)
		}
	}
	ranked := r.ix.rank(func(s *sentence) float64 {
		c := r.ix.coverage(et, s)
		if c < 0.5 {
			return 0
		}
		return 0.8*c + 0.2*r.ix.coverage(rest, s)
	})
	if len(ranked) == 0 || ranked[0].score == 0 {
		return scored{}, false
	}
	return ranked[0], true
}

// option resolves one compared entity to evidence and a comparable value.
func (r *reading) option(entity, cue string, chain bool, wantNum bool) optionResult {
	s1, ok := r.about(entity)
	if !ok {
		return optionResult{}
	}
	res := optionResult{evidence: []evidence{{s1.s.text, s1.score}}, score: s1.score, final: s1.s}
	final := s1
	if chain && r.maxHops >= 2 {
		exclude := mergeSets(termSet(terms(entity)), termSet(r.qterms))
		via, s2, _, ok := r.hopFrom(s1.s, exclude, tDate, cue, "")
		if !ok {
			return res // the value is the bridge entity's, which was not found: do not compare the film's
		}
		if via != s1.s {
			res.evidence = append(res.evidence, evidence{via.text, s1.score})
		}
		res.evidence = append(res.evidence, evidence{s2.s.text, s2.score})
		res.score = min(res.score, s2.score)
		final = s2
		res.final = s2.s
	}
	s := final.s.text
	switch {
	case wantNum:
		for _, sp := range spans.Find(s) {
			if sp.Kind == spans.Number {
				if v, ok := parseNumber(s[sp.Start:sp.End]); ok {
					res.number, res.hasNum = v, true
					break
				}
			}
		}
	case cue == "life":
		if m := lifeSpanRE.FindStringSubmatch(s); m != nil {
			a, ok1 := spans.ParseDate(lastDate(m[1]))
			b, ok2 := spans.ParseDate(lastDate(m[2]))
			if ok1 && ok2 {
				res.life, res.hasLife = b.Days()-a.Days(), true
			}
		}
	default:
		d := ""
		if cue != "" {
			d = cueDate(s, cue)
		}
		if d == "" {
			d = firstDate(s)
		}
		if v, ok := spans.ParseDate(d); ok {
			res.date, res.hasDate = v, true
		}
	}
	return res
}

func parseNumber(s string) (float64, bool) {
	f := strings.Fields(strings.ReplaceAll(s, ",", ""))
	if len(f) == 0 {
		return 0, false
	}
	var v float64
	var frac, scale float64 = 0, 1
	seenDot := false
	for _, c := range f[0] {
		switch {
		case c >= '0' && c <= '9':
			if seenDot {
				scale /= 10
				frac += float64(c-'0') * scale
			} else {
				v = v*10 + float64(c-'0')
			}
		case c == '.':
			seenDot = true
		default:
			return 0, false
		}
	}
	v += frac
	if len(f) > 1 {
		switch strings.ToLower(f[1]) {
		case "thousand":
			v *= 1e3
		case "million":
			v *= 1e6
		case "billion":
			v *= 1e9
		case "trillion":
			v *= 1e12
		}
	}
	return v, true
}

// choice answers "…, X or Y?" by comparing the options' dates, life spans or numbers.
func (r *reading) choice(opts []string) plan {
	cue := cueOf(r.q)
	low := strings.ToLower(r.q)
	chain := relations(r.q) >= 1 || containsAny(low, "director", "father", "mother", "composer", "performer", "author", "spouse", "husband", "wife")
	wantNum := !containsAny(low, "first", "earlier", "later", "older", "younger", "born", "died", "came out", "released", "founded", "established", "formed", "published", "longer") &&
		containsAny(low, "more", "larger", "bigger", "higher", "taller", "most", "fewer", "less", "smaller", "lower")
	a := r.option(opts[0], cue, chain && cue != "", wantNum)
	b := r.option(opts[1], cue, chain && cue != "", wantNum)
	dir := direction(r.q)
	ev := append(append([]evidence(nil), a.evidence...), b.evidence...)
	pickA := -1 // -1 undecided, 1 A, 0 B
	switch {
	case a.hasLife && b.hasLife && a.life != b.life:
		pickA = boolInt(a.life > b.life)
		if dir < 0 && !strings.Contains(low, "longer") {
			pickA = 1 - pickA
		}
	case a.hasNum && b.hasNum && a.number != b.number && dir != 0:
		pickA = boolInt((a.number > b.number) == (dir > 0))
	case a.hasDate && b.hasDate && a.date != b.date && dir != 0:
		pickA = boolInt(a.date.Less(b.date) == (dir < 0))
	}
	conf := 0.3 * max(a.score, b.score)
	if pickA >= 0 {
		conf = 0.9 * min(a.score, b.score)
	} else {
		pickA = boolInt(a.score >= b.score)
	}
	ans, other := opts[0], opts[1]
	if pickA == 0 {
		ans, other = opts[1], opts[0]
	}
	return plan{evidence: ev, answer: ans, conf: conf, alts: []candidate{{other, 1 - conf}}}
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

var bothAndRE = regexp.MustCompile(`(?i)^(?:are|is|were|was|do|does|did|have|has|had)\s+(?:both\s+)?(?:the\s+)?(.+?)\s+and\s+(.+)$`)

var pairEnd = []string{" have ", " has ", " had ", " both ", " located", " from ", " of the same", " the same", " in the same",
	" share", " born ", " die", " were ", " are ", " was ", " is ", " also ", " together", " considered"}

// yesNo answers a polar question. Questions about two entities ("Are X and Y both …", "Do X and Y
// have the same nationality?") compare the two entities' sentences; others look for negation in the
// best sentence.
func (r *reading) yesNo() plan {
	body := strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(r.q), "?"))
	if m := bothAndRE.FindStringSubmatch(body); m != nil {
		x, rest := m[1], m[2]
		y := rest
		cut := len(rest)
		for _, e := range pairEnd {
			if i := strings.Index(rest+" ", e); i > 0 && i < cut {
				cut = i
			}
		}
		y = strings.TrimSpace(rest[:cut])
		if x != "" && y != "" && len(strings.Fields(x)) <= 10 && len(strings.Fields(y)) <= 10 {
			if p, ok := r.pair(x, y, strings.TrimSpace(rest[cut:])); ok {
				return p
			}
		}
	}
	ranked := r.ix.rank(func(s *sentence) float64 { return r.ix.coverage(r.qterms, s) })
	// A negated finding ("no significant difference", "was not associated") among the three best
	// sentences answers no.
	best := ranked[0]
	ans := "yes"
	for _, sc := range ranked[:min(3, len(ranked))] {
		if negatedFindingRE.MatchString(sc.s.text) {
			ans = "no"
			break
		}
	}
	conf := 0.5 + 0.4*best.score
	return plan{evidence: []evidence{{best.s.text, best.score}}, answer: ans, conf: conf, alts: []candidate{{flip(ans), 1 - conf}}}
}

func flip(a string) string {
	if a == "yes" {
		return "no"
	}
	return "yes"
}

// pair compares two entities for a polar question: for "same" questions, the values of the two
// final sentences (demonyms and names, or years) must share one; otherwise each sentence must cover
// at least half of the property's words.
func (r *reading) pair(x, y, property string) (plan, bool) {
	chain := relations(r.q) >= 1 || containsAny(strings.ToLower(x), "director of", "father of", "mother of")
	a := r.option(x, "", false, false)
	b := r.option(y, "", false, false)
	if chain && r.maxHops >= 2 {
		a = r.chainOption(x)
		b = r.chainOption(y)
	}
	if a.final == nil || b.final == nil {
		return plan{}, false
	}
	ev := append(append([]evidence(nil), a.evidence...), b.evidence...)
	low := strings.ToLower(r.q)
	var yes bool
	if strings.Contains(low, "same") {
		va := values(a.final.text, x)
		vb := values(b.final.text, y)
		if len(va) == 0 || len(vb) == 0 {
			return plan{}, false
		}
		yes = intersects(va, vb)
	} else {
		pt := terms(property)
		if len(pt) == 0 {
			return plan{}, false
		}
		yes = r.ix.coverage(pt, a.final) >= 0.5 && r.ix.coverage(pt, b.final) >= 0.5
	}
	ans := "no"
	if yes {
		ans = "yes"
	}
	conf := 0.9 * min(a.score, b.score)
	return plan{evidence: ev, answer: ans, conf: conf, alts: []candidate{{flip(ans), 1 - conf}}}, true
}

// chainOption resolves "director of film X" to the director's sentence.
func (r *reading) chainOption(entity string) optionResult {
	s1, ok := r.about(entity)
	if !ok {
		return optionResult{}
	}
	res := optionResult{evidence: []evidence{{s1.s.text, s1.score}}, score: s1.score, final: s1.s}
	exclude := mergeSets(termSet(terms(entity)), termSet(r.qterms))
	if s2, _, ok := r.hop(s1.s, exclude, tName, "", ""); ok {
		res.evidence = append(res.evidence, evidence{s2.s.text, s2.score})
		res.score = min(res.score, s2.score)
		res.final = s2.s
	}
	return res
}

// values returns the normalised names (demonyms, places) and years of a sentence, without the
// entity's own words.
func values(s, entity string) map[string]bool {
	own := termSet(terms(entity))
	out := map[string]bool{}
	for _, sp := range spans.Find(s) {
		t := s[sp.Start:sp.End]
		ts := terms(t)
		if len(ts) == 0 || allIn(ts, own) {
			continue
		}
		switch sp.Kind {
		case spans.Name:
			out[demonymStem(strings.ToLower(t))] = true
		case spans.Date:
			if d, ok := spans.ParseDate(t); ok {
				out["year:"+strconv.Itoa(d.Year)] = true
			}
		}
	}
	return out
}

// demonymStem maps "American"/"America", "Italian"/"Italy" and the like to a common stem.
func demonymStem(w string) string {
	for _, suf := range []string{"ian", "ean", "an", "ese", "ish", "i", "y", "a"} {
		if strings.HasSuffix(w, suf) && len(w)-len(suf) >= 4 {
			return w[:len(w)-len(suf)]
		}
	}
	return w
}

func intersects(a, b map[string]bool) bool {
	for k := range a {
		if b[k] {
			return true
		}
	}
	return false
}
