package metrics

import (
	"errors"
	"slices"
	"strings"

	"github.com/ragbench/ragbench/datasets"
)

// Retrieved is what retrieval evaluation needs of one retrieved passage, best first.
type Retrieved struct{ Title, Text string }

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

// GoldDocs is an example's gold documents and how a retrieved passage is matched against them.
type GoldDocs struct {
	want    map[string]bool
	byTitle bool
}

// GoldDocsOf returns the example's gold documents, or nil when they are unknown: the titles of its
// supporting facts (HotpotQA, 2WikiMultihopQA), matched against a passage's title; else the oracle
// passages of its question (for NQ-open, from datasets.ReadGoldOracle), matched by text with white
// space runs collapsed.
func GoldDocsOf(ex datasets.Example, oracle map[string][]datasets.Passage) *GoldDocs {
	if len(ex.SupportingFacts) > 0 {
		g := &GoldDocs{want: map[string]bool{}, byTitle: true}
		for _, sf := range ex.SupportingFacts {
			g.want[sf.Title] = true
		}
		return g
	}
	if ps, ok := oracle[ex.Question]; ok && len(ps) > 0 {
		g := &GoldDocs{want: map[string]bool{}}
		for _, p := range ps {
			g.want[normSpace(p.Text)] = true
		}
		return g
	}
	return nil
}

func (g *GoldDocs) key(r Retrieved) string {
	if g.byTitle {
		return r.Title
	}
	return normSpace(r.Text)
}

func normSpace(s string) string { return strings.Join(strings.Fields(s), " ") }

// RetrievalEval accumulates AR@k and gold-document recall@k over examples at a set of cut-offs. Feed
// each example to Add, then read Rows.
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

// Add scores one example: its gold answers, its gold documents (nil when unknown, see GoldDocsOf) and the
// passages retrieved for it, best first.
func (e *RetrievalEval) Add(answers []string, gold *GoldDocs, hits []Retrieved) {
	passages := make([]string, len(hits))
	for i, h := range hits {
		passages[i] = h.Text
	}
	sub := NewAnswerMatcher(MatchSubstring, answers)
	tok := NewAnswerMatcher(MatchTokens, answers)
	for i := range e.rows {
		r := &e.rows[i]
		r.ARSubstring += AnswerRecall(sub, passages, r.K)
		r.ARTokens += AnswerRecall(tok, passages, r.K)
		if gold == nil {
			continue
		}
		found := map[string]bool{}
		for _, h := range hits[:min(r.K, len(hits))] {
			if key := gold.key(h); gold.want[key] {
				found[key] = true
			}
		}
		r.GoldRecall += float64(len(found)) / float64(len(gold.want))
		if len(found) == len(gold.want) {
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
