package metrics

import (
	"errors"
	"slices"
	"strings"

	"github.com/ragbench/ragbench/datasets"
)

// Retrieved is what retrieval evaluation needs of one ranked passage or context unit, best first.
// DocID is the document it comes from when known (a unit index's unit), else empty.
type Retrieved struct{ DocID, Title, Text string }

// RetrievalRow is one cut-off k of a retrieval evaluation, averaged over the examples.
type RetrievalRow struct {
	K int `json:"k"`
	// ARSubstring and ARTokens are AR@k (AnswerRecall) with MatchSubstring and MatchTokens, over all
	// examples.
	ARSubstring float64 `json:"ar_substring"`
	ARTokens    float64 `json:"ar_tokens"`
	// GoldRecall is the mean share of an example's gold documents found in the top k, and GoldAll the
	// share of examples with all of them found, both over the GoldExamples examples whose gold
	// documents are known.
	GoldRecall   float64 `json:"gold_recall"`
	GoldAll      float64 `json:"gold_all"`
	GoldExamples int     `json:"gold_examples"`
}

// GoldRule is how a retrieved item is matched against an example's gold, a named choice because
// passages and sentence units need different rules.
type GoldRule int

const (
	// GoldByDocument: the gold is a set of document ids or titles (supporting-fact titles, an
	// nq_longdoc page). An item is gold when its DocID is in the set, else when its Title is; each
	// gold document counts once.
	GoldByDocument GoldRule = iota
	// GoldByPassage: the gold is a set of passages (NQ-open's oracle passages, which are corpus
	// passages). An item is gold when its text, white space runs collapsed, equals one's; equal
	// passages count once.
	GoldByPassage
	// GoldByCoverage: the gold is a list of passages and the items are sentence units cut from
	// passages. A passage is found when some item's text, white space collapsed and not empty, lies
	// inside it; each listed passage counts.
	GoldByCoverage
)

// RetrievalGold is an example's gold for retrieval evaluation and the rule it is matched by. A nil *RetrievalGold is
// unknown gold: the example is left out of the gold columns.
type RetrievalGold struct {
	rule     GoldRule
	want     map[string]bool // GoldByDocument, GoldByPassage
	passages []string        // GoldByCoverage, white space collapsed
}

// GoldDocuments returns gold by document (GoldByDocument) over ids or titles; nil when there are none.
func GoldDocuments(docs map[string]bool) *RetrievalGold {
	if len(docs) == 0 {
		return nil
	}
	return &RetrievalGold{rule: GoldByDocument, want: docs}
}

// GoldPassages returns gold passages, given by their texts, matched by rule GoldByPassage or
// GoldByCoverage; nil when there are none.
func GoldPassages(rule GoldRule, texts []string) *RetrievalGold {
	if len(texts) == 0 {
		return nil
	}
	g := &RetrievalGold{rule: rule}
	if rule == GoldByCoverage {
		for _, t := range texts {
			g.passages = append(g.passages, normSpace(t))
		}
		return g
	}
	g.want = map[string]bool{}
	for _, t := range texts {
		g.want[normSpace(t)] = true
	}
	return g
}

// GoldDocsOf returns retrieval-eval's gold of an example, or nil when it is unknown: the titles of
// its supporting facts (HotpotQA, 2WikiMultihopQA), GoldByDocument; else the oracle passages of its
// question (for NQ-open, from datasets.ReadGoldOracle), GoldByPassage.
func GoldDocsOf(ex datasets.Example, oracle map[string][]datasets.Passage) *RetrievalGold {
	if len(ex.SupportingFacts) > 0 {
		want := map[string]bool{}
		for _, sf := range ex.SupportingFacts {
			want[sf.Title] = true
		}
		return GoldDocuments(want)
	}
	var texts []string
	for _, p := range oracle[ex.Question] {
		texts = append(texts, p.Text)
	}
	return GoldPassages(GoldByPassage, texts)
}

// found returns how many of the gold are among items, and how many there are.
func (g *RetrievalGold) found(items []Retrieved) (found, of int) {
	if g.rule == GoldByCoverage {
		for _, p := range g.passages {
			for _, it := range items {
				if t := normSpace(it.Text); t != "" && strings.Contains(p, t) {
					found++
					break
				}
			}
		}
		return found, len(g.passages)
	}
	seen := map[string]bool{}
	for _, it := range items {
		key := normSpace(it.Text)
		if g.rule == GoldByDocument {
			key = it.Title
			if it.DocID != "" && g.want[it.DocID] {
				key = it.DocID
			}
		}
		if g.want[key] {
			seen[key] = true
		}
	}
	return len(seen), len(g.want)
}

func normSpace(s string) string { return strings.Join(strings.Fields(s), " ") }

// RetrievalScore is one example's retrieval evaluation at each cut-off of its RetrievalEval: AR@k by
// both rules and, when its gold is known, gold recall and whether all of it was found.
type RetrievalScore struct {
	ARSubstring, ARTokens, GoldRecall []float64
	GoldAll                           []bool
	GoldKnown                         bool
}

// RetrievalEval scores examples' ranked items by AR@k and gold recall@k at a set of cut-offs and
// averages them. Score each example (safe from several goroutines), Add the scores in order, then
// read Rows.
type RetrievalEval struct {
	rows []RetrievalRow
	n    int
}

// NewRetrievalEval returns an evaluation at the cut-offs ks (positive; sorted ascending in the rows).
func NewRetrievalEval(ks []int) (*RetrievalEval, error) {
	if len(ks) == 0 {
		return nil, errors.New("retrieval eval: no cut-offs")
	}
	ks = slices.Clone(ks)
	slices.Sort(ks)
	if ks[0] <= 0 {
		return nil, errors.New("retrieval eval: cut-offs must be positive")
	}
	e := &RetrievalEval{rows: make([]RetrievalRow, len(ks))}
	for i, k := range ks {
		e.rows[i].K = k
	}
	return e, nil
}

// MaxK is the largest cut-off: how many passages to retrieve per example.
func (e *RetrievalEval) MaxK() int { return e.rows[len(e.rows)-1].K }

// Score scores one example: its gold answers, its gold (nil when unknown) and its ranked items, best
// first. A cut-off above len(items) sees them all.
func (e *RetrievalEval) Score(answers []string, gold *RetrievalGold, items []Retrieved) RetrievalScore {
	n := len(e.rows)
	s := RetrievalScore{ARSubstring: make([]float64, n), ARTokens: make([]float64, n),
		GoldRecall: make([]float64, n), GoldAll: make([]bool, n), GoldKnown: gold != nil}
	passages := make([]string, len(items))
	for i, it := range items {
		passages[i] = it.Text
	}
	sub := NewAnswerMatcher(MatchSubstring, answers)
	tok := NewAnswerMatcher(MatchTokens, answers)
	for i, r := range e.rows {
		s.ARSubstring[i] = AnswerRecall(sub, passages, r.K)
		s.ARTokens[i] = AnswerRecall(tok, passages, r.K)
		if gold == nil {
			continue
		}
		found, of := gold.found(items[:min(r.K, len(items))])
		s.GoldRecall[i] = float64(found) / float64(of)
		s.GoldAll[i] = found == of
	}
	return s
}

// Add adds one example's score (from Score of this evaluation) to the averages.
func (e *RetrievalEval) Add(s RetrievalScore) {
	for i := range e.rows {
		r := &e.rows[i]
		r.ARSubstring += s.ARSubstring[i]
		r.ARTokens += s.ARTokens[i]
		if !s.GoldKnown {
			continue
		}
		r.GoldRecall += s.GoldRecall[i]
		if s.GoldAll[i] {
			r.GoldAll++
		}
		r.GoldExamples++
	}
	e.n++
}

// Examples is the number of examples added.
func (e *RetrievalEval) Examples() int { return e.n }

// Rows returns the averages, one row per cut-off in ascending order. With no example added every mean
// is 0; a row with GoldExamples 0 has gold means 0 (unknown, not measured).
func (e *RetrievalEval) Rows() []RetrievalRow {
	out := slices.Clone(e.rows)
	for i := range out {
		out[i].ARSubstring /= float64(max(e.n, 1))
		out[i].ARTokens /= float64(max(e.n, 1))
		if g := out[i].GoldExamples; g > 0 {
			out[i].GoldRecall /= float64(g)
			out[i].GoldAll /= float64(g)
		}
	}
	return out
}
