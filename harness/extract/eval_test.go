package extract

import (
	"context"
	"encoding/json"
	"os"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/ragbench/ragbench/internal/testenv"
)

// The matching rules of the 2WikiMultihopQA evaluation (docs/extract.md):
//
//   - norm: lower case, a trailing parenthesised disambiguation removed ("Charles Saunders (director)"),
//     punctuation removed, the articles a/an/the removed, white space collapsed (SQuAD normalisation);
//   - strict: head, relation and tail equal after norm;
//   - head–tail: head and tail equal after norm, relation ignored;
//   - lenient: the head words of one contain the other's, and likewise the tail words; relation ignored.
//
// Each gold triple matches at most one predicted triple and vice versa (greedy in order).

var (
	parenRE = regexp.MustCompile(`\s*\([^()]*\)\s*$`)
	punctRE = regexp.MustCompile(`[^\p{L}\p{N}\s]`)
)

func norm(s string) string {
	s = strings.ToLower(parenRE.ReplaceAllString(s, ""))
	s = punctRE.ReplaceAllString(s, " ")
	var w []string
	for _, f := range strings.Fields(s) {
		if f != "a" && f != "an" && f != "the" {
			w = append(w, f)
		}
	}
	return strings.Join(w, " ")
}

func contains(a, b string) bool {
	wa, wb := strings.Fields(norm(a)), strings.Fields(norm(b))
	if len(wa) == 0 || len(wb) == 0 {
		return false
	}
	sub := func(x, y []string) bool { // every word of x is in y
		set := map[string]bool{}
		for _, w := range y {
			set[w] = true
		}
		for _, w := range x {
			if !set[w] {
				return false
			}
		}
		return true
	}
	return sub(wa, wb) || sub(wb, wa)
}

type matchRule func(pred, gold Triplet) bool

var matchRules = []struct {
	name string
	fn   matchRule
}{
	{"strict", func(p, g Triplet) bool {
		return norm(p.Head) == norm(g.Head) && norm(p.Relation) == norm(g.Relation) && norm(p.Tail) == norm(g.Tail)
	}},
	{"head-tail", func(p, g Triplet) bool { return norm(p.Head) == norm(g.Head) && norm(p.Tail) == norm(g.Tail) }},
	{"lenient", func(p, g Triplet) bool { return contains(p.Head, g.Head) && contains(p.Tail, g.Tail) }},
}

// countMatches pairs predicted and gold triples one to one, greedily.
func countMatches(pred, gold []Triplet, fn matchRule) int {
	used := make([]bool, len(gold))
	n := 0
	for _, p := range pred {
		for i, g := range gold {
			if !used[i] && fn(p, g) {
				used[i] = true
				n++
				break
			}
		}
	}
	return n
}

func TestMatchRules(t *testing.T) {
	g := Triplet{"Charles Saunders (director)", "date of birth", "8 April 1904"}
	cases := []struct {
		name string
		p    Triplet
		want []bool // strict, head-tail, lenient
	}{
		{"identical up to the disambiguation", Triplet{"Charles Saunders", "date of birth", "8 April 1904"}, []bool{true, true, true}},
		{"another relation is head-tail only", Triplet{"Charles Saunders", "born", "8 April 1904"}, []bool{false, true, true}},
		{"a longer head is lenient only", Triplet{"Charles Joel Saunders", "date of birth", "8 April 1904"}, []bool{false, false, true}},
		{"a contained tail is lenient only", Triplet{"Charles Saunders", "date of birth", "April 1904"}, []bool{false, false, true}},
		{"another tail never matches", Triplet{"Charles Saunders", "date of birth", "1905"}, []bool{false, false, false}},
	}
	for _, tc := range cases {
		for i, r := range matchRules {
			if got := r.fn(tc.p, g); got != tc.want[i] {
				t.Errorf("%s: rule %s = %v, want %v", tc.name, r.name, got, tc.want[i])
			}
		}
	}
}

// wikiRow is the part of an official 2WikiMultihopQA dev.json row the evaluation needs.
type wikiRow struct {
	ID              string              `json:"_id"`
	Context         [][]json.RawMessage `json:"context"`
	SupportingFacts [][]json.RawMessage `json:"supporting_facts"`
	Evidences       [][]string          `json:"evidences"`
}

// TestRules2Wiki measures the rule-based extractor against the 2WikiMultihopQA evidence triples over
// the supporting sentences, and fails if it falls below floors set a little under the measured figures.
// Run with -v to see the table reported in docs/extract.md.
func TestRules2Wiki(t *testing.T) {
	path := testenv.Data(t, "raw/2wikimultihopqa/2wiki_dev_sample.json")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var rows []wikiRow
	if err := json.Unmarshal(data, &rows); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	r := NewRules()
	ctx := context.Background()
	var nPred, nGold, tailCovered, bothCovered int
	var missingFacts int
	matched := make([]int, len(matchRules))
	relGold, relHit := map[string]int{}, map[string]int{}
	for _, row := range rows {
		ctxs := map[string][]string{}
		for _, c := range row.Context {
			var title string
			var sents []string
			if len(c) != 2 || json.Unmarshal(c[0], &title) != nil || json.Unmarshal(c[1], &sents) != nil {
				t.Fatalf("%s: row %s: malformed context", path, row.ID)
			}
			ctxs[title] = sents
		}
		var pred []Triplet
		var support strings.Builder
		for _, sf := range row.SupportingFacts {
			var title string
			var id int
			if len(sf) != 2 || json.Unmarshal(sf[0], &title) != nil || json.Unmarshal(sf[1], &id) != nil {
				t.Fatalf("%s: row %s: malformed supporting fact", path, row.ID)
			}
			sents := ctxs[title]
			if id < 0 || id >= len(sents) {
				missingFacts++
				continue
			}
			support.WriteString(sents[id] + " ")
			ts, err := r.Triplets(ctx, sents[id])
			if err != nil {
				t.Fatal(err)
			}
			pred = append(pred, ts...)
		}
		pred = dedupeTriplets(pred)
		var gold []Triplet
		for _, e := range row.Evidences {
			if len(e) != 3 {
				t.Fatalf("%s: row %s: evidence %q is not a triple", path, row.ID, e)
			}
			gold = append(gold, Triplet{e[0], e[1], e[2]})
			if contains(e[2], support.String()) {
				tailCovered++
				if contains(parenRE.ReplaceAllString(e[0], ""), support.String()) {
					bothCovered++
				}
			}
		}
		if os.Getenv("EXTRACT_DEBUG") != "" {
			for _, g := range gold {
				if countMatches(pred, []Triplet{g}, matchRules[2].fn) == 0 {
					t.Logf("MISS %v | %s | pred %v", g, support.String(), pred)
				}
			}
		}
		for _, g := range gold {
			relGold[g.Relation]++
			if countMatches(pred, []Triplet{g}, matchRules[2].fn) > 0 {
				relHit[g.Relation]++
			}
		}
		nPred += len(pred)
		nGold += len(gold)
		for i, m := range matchRules {
			matched[i] += countMatches(pred, gold, m.fn)
		}
	}
	t.Logf("2WikiMultihopQA dev sample: %d questions, %d gold triples, %d predicted triples, %d supporting facts out of range", len(rows), nGold, nPred, missingFacts)
	t.Logf("gold tails present in the supporting sentences: %d (%.1f%%); heads and tails both present: %d (%.1f%%)",
		tailCovered, 100*float64(tailCovered)/float64(nGold), bothCovered, 100*float64(bothCovered)/float64(nGold))
	t.Logf("| rule | precision | recall | F1 |")
	t.Logf("|---|---|---|---|")
	var rels []string
	for r := range relGold {
		rels = append(rels, r)
	}
	sort.Slice(rels, func(i, j int) bool {
		return relGold[rels[i]] > relGold[rels[j]] || relGold[rels[i]] == relGold[rels[j]] && rels[i] < rels[j]
	})
	for _, r := range rels[:min(len(rels), 12)] {
		t.Logf("lenient recall of %q: %d/%d", r, relHit[r], relGold[r])
	}
	floors := map[string]float64{"strict": 0.15, "head-tail": 0.15, "lenient": 0.25}
	for i, m := range matchRules {
		p := float64(matched[i]) / float64(max(nPred, 1))
		rc := float64(matched[i]) / float64(max(nGold, 1))
		f := 0.0
		if p+rc > 0 {
			f = 2 * p * rc / (p + rc)
		}
		t.Logf("| %s | %.3f | %.3f | %.3f |", m.name, p, rc, f)
		if rc < floors[m.name] || p < floors[m.name] {
			t.Errorf("%s precision %.3f / recall %.3f below the floor %.2f", m.name, p, rc, floors[m.name])
		}
	}
}
