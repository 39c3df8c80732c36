package metrics

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/ragbench/ragbench/datasets"
)

func TestNewRetrievalEvalCutoffs(t *testing.T) {
	for _, c := range []struct {
		ks  []int
		ok  bool
		why string
	}{
		{nil, false, "no cut-off"},
		{[]int{5, 0}, false, "zero is not a cut-off"},
		{[]int{-1}, false, "negative cut-off"},
		{[]int{10, 1, 5}, true, "any order; rows come out sorted"},
	} {
		e, err := NewRetrievalEval(c.ks)
		if (err == nil) != c.ok {
			t.Errorf("%v: err %v (%s)", c.ks, err, c.why)
			continue
		}
		if e != nil && (e.MaxK() != 10 || e.Rows()[0].K != 1 || e.Rows()[2].K != 10) {
			t.Errorf("%v: rows %+v, MaxK %d, want sorted 1,5,10", c.ks, e.Rows(), e.MaxK())
		}
	}
}

// TestRetrievalEvalWorked scores three examples by hand.
func TestRetrievalEvalWorked(t *testing.T) {
	e, err := NewRetrievalEval([]int{1, 2})
	if err != nil {
		t.Fatal(err)
	}
	// 1: supporting-fact titles A and B; A at rank 2, B missing; the answer is at rank 2.
	hp := datasets.Example{Question: "q1", SupportingFacts: []datasets.SupportingFact{{Title: "A"}, {Title: "B", SentID: 1}, {Title: "A", SentID: 2}}}
	e.Add(e.Score([]string{"Paris"}, GoldDocsOf(hp, nil), []Retrieved{{Title: "C", Text: "nothing"}, {Title: "A", Text: "in Paris."}}))
	// 2: an NQ oracle passage, matched by text with white space collapsed, at rank 1 with the answer.
	nq := datasets.Example{Question: "q2"}
	oracle := map[string][]datasets.Passage{"q2": {{Text: "gold  passage\ntext"}}}
	e.Add(e.Score([]string{"gold"}, GoldDocsOf(nq, oracle), []Retrieved{{Title: "x", Text: "gold passage text"}}))
	// 3: no gold documents known, no answer retrieved.
	e.Add(e.Score([]string{"zzz"}, GoldDocsOf(datasets.Example{Question: "q3"}, oracle), []Retrieved{{Text: "a"}, {Text: "b"}}))
	rows := e.Rows()
	if e.Examples() != 3 {
		t.Fatalf("examples %d, want 3", e.Examples())
	}
	want := []RetrievalRow{
		// k=1: AR: only example 2 (1/3). Gold: ex1 0/2, ex2 1/1 -> recall 0.5, all 0.5 over 2 examples.
		{K: 1, ARSubstring: 1.0 / 3, ARTokens: 1.0 / 3, GoldRecall: 0.5, GoldAll: 0.5, GoldExamples: 2},
		// k=2: AR: examples 1 and 2. Gold: ex1 1/2, ex2 1 -> recall 0.75, all 0.5.
		{K: 2, ARSubstring: 2.0 / 3, ARTokens: 2.0 / 3, GoldRecall: 0.75, GoldAll: 0.5, GoldExamples: 2},
	}
	for i := range want {
		g, w := rows[i], want[i]
		if g.K != w.K || !near(g.ARSubstring, w.ARSubstring) || !near(g.ARTokens, w.ARTokens) || !near(g.GoldRecall, w.GoldRecall) || !near(g.GoldAll, w.GoldAll) || g.GoldExamples != w.GoldExamples {
			t.Errorf("row %d: got %+v, want %+v", i, g, w)
		}
	}
}

func TestGoldDocsOf(t *testing.T) {
	oracle := map[string][]datasets.Passage{"q": {{Text: "t"}}, "empty": nil}
	if GoldDocsOf(datasets.Example{Question: "other"}, oracle) != nil {
		t.Error("a question outside the oracle without supporting facts has no gold documents")
	}
	if GoldDocsOf(datasets.Example{Question: "empty"}, oracle) != nil {
		t.Error("an oracle key without passages gives no gold documents (no division by zero)")
	}
	g := GoldDocsOf(datasets.Example{Question: "q", SupportingFacts: []datasets.SupportingFact{{Title: "T"}}}, oracle)
	if g == nil || g.rule != GoldByDocument || !g.want["T"] || len(g.want) != 1 {
		t.Errorf("supporting facts take precedence over the oracle: %+v", g)
	}
}

// TestRetrievalEvalBruteForce checks the accumulated means against a direct computation over random
// examples: AR@k by AnswerRecall on each prefix, gold recall by counting distinct gold titles.
func TestRetrievalEvalBruteForce(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	words := []string{"alpha", "beta", "gamma", "delta"}
	titles := []string{"T1", "T2", "T3", "T4", "T5"}
	ks := []int{1, 3, 5}
	e, _ := NewRetrievalEval(ks)
	type ex struct {
		ans  []string
		gold []string
		hits []Retrieved
	}
	var exs []ex
	for range 200 {
		x := ex{ans: []string{words[r.IntN(len(words))]}}
		for range r.IntN(3) {
			x.gold = append(x.gold, titles[r.IntN(len(titles))])
		}
		for range r.IntN(7) {
			x.hits = append(x.hits, Retrieved{Title: titles[r.IntN(len(titles))], Text: words[r.IntN(len(words))] + " " + words[r.IntN(len(words))]})
		}
		var sf []datasets.SupportingFact
		for _, g := range x.gold {
			sf = append(sf, datasets.SupportingFact{Title: g})
		}
		e.Add(e.Score(x.ans, GoldDocsOf(datasets.Example{SupportingFacts: sf}, nil), x.hits))
		exs = append(exs, x)
	}
	for i, k := range ks {
		var ar, rec, all float64
		ng := 0
		for _, x := range exs {
			for j := 0; j < min(k, len(x.hits)); j++ {
				if strings.Contains(x.hits[j].Text, x.ans[0]) {
					ar++
					break
				}
			}
			if len(x.gold) == 0 {
				continue
			}
			want := map[string]bool{}
			for _, g := range x.gold {
				want[g] = true
			}
			found := map[string]bool{}
			for j := 0; j < min(k, len(x.hits)); j++ {
				if want[x.hits[j].Title] {
					found[x.hits[j].Title] = true
				}
			}
			rec += float64(len(found)) / float64(len(want))
			if len(found) == len(want) {
				all++
			}
			ng++
		}
		got := e.Rows()[i]
		if !near(got.ARSubstring, ar/float64(len(exs))) || !near(got.ARTokens, ar/float64(len(exs))) || got.GoldExamples != ng ||
			!near(got.GoldRecall, rec/float64(ng)) || !near(got.GoldAll, all/float64(ng)) {
			t.Errorf("k=%d: got %+v; brute force AR %v recall %v all %v over %d", k, got, ar/float64(len(exs)), rec/float64(ng), all/float64(ng), ng)
		}
	}
}

func TestRetrievalEvalEmpty(t *testing.T) {
	e, _ := NewRetrievalEval([]int{3})
	if r := e.Rows()[0]; r.ARSubstring != 0 || r.GoldExamples != 0 || e.Examples() != 0 {
		t.Fatalf("no examples: %+v", r)
	}
}

// TestRetrievalGoldRules shows the three gold rules on the same items, and what tells them apart.
func TestRetrievalGoldRules(t *testing.T) {
	items := []Retrieved{
		{DocID: "d1", Title: "Other", Text: "Paris is  big."},
		{Title: "T2", Text: "Lyon."},
	}
	for _, c := range []struct {
		gold      *RetrievalGold
		found, of int
		why       string
	}{
		{GoldDocuments(map[string]bool{"d1": true, "T2": true}), 2, 2, "by document: the first by its document id, the second (no id) by title"},
		{GoldDocuments(map[string]bool{"Other": true, "T9": true}), 1, 2, "by document: a title matches when the id is not gold"},
		{GoldPassages(GoldByPassage, []string{"Paris is big.", "Paris  is big.", "Intro. Lyon. More."}), 1, 2,
			"by passage: equal text with white space collapsed; equal passages count once; a passage merely containing an item is not it"},
		{GoldPassages(GoldByCoverage, []string{"Paris is big.", "Paris  is big.", "Intro. Lyon. More."}), 3, 3,
			"by coverage: every listed passage counts, and one containing an item's text is found"},
		{GoldPassages(GoldByCoverage, []string{"Nice."}), 0, 1, "by coverage: no item inside"},
	} {
		if f, of := c.gold.found(items); f != c.found || of != c.of {
			t.Errorf("%s: found %d of %d, want %d of %d", c.why, f, of, c.found, c.of)
		}
	}
	if GoldDocuments(nil) != nil || GoldPassages(GoldByCoverage, nil) != nil {
		t.Error("no gold is unknown gold (nil), not a zero denominator")
	}
	if f, _ := GoldPassages(GoldByCoverage, []string{"x"}).found([]Retrieved{{Text: "  "}}); f != 0 {
		t.Error("an empty unit text covers nothing")
	}
}
