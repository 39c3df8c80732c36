package bm25

import (
	"slices"
	"testing"
)

// TestFillSlack checks fillSlack's moves on hand-made lists: which move, where to, and that prefix and
// others follow the new order.
func TestFillSlack(t *testing.T) {
	type l struct {
		name  string
		pos   int
		ub    float64
		dense bool
	}
	cases := []struct {
		why   string
		lists []l // in sorted order
		ess   int // after the prefix rule
		theta float64
		want  []string // the order after fillSlack
		ess2  int
	}{
		{"a later bitmap list fits under theta beside the non-essential ones: it moves to ess",
			[]l{{"a", 0, 1, true}, {"b", 1, 2, true}, {"c", 2, 0.5, true}}, 1, 2.8,
			[]string{"a", "c", "b"}, 2},
		{"a block list that would fit stays essential",
			[]l{{"a", 0, 1, true}, {"b", 1, 2, true}, {"c", 2, 0.5, false}}, 1, 2.8,
			[]string{"a", "b", "c"}, 1},
		{"nothing fits",
			[]l{{"a", 0, 1, true}, {"b", 1, 2, true}, {"c", 2, 1.9, true}}, 1, 2.8,
			[]string{"a", "b", "c"}, 1},
		{"a sibling of a non-essential list adds only the excess of its bound",
			[]l{{"a1", 0, 2, true}, {"b", 1, 1, true}, {"a2", 0, 2.5, true}}, 1, 2.6,
			[]string{"a1", "a2", "b"}, 2},
		{"a moved list's sibling adds only the excess over it",
			[]l{{"x", 0, 1, true}, {"y", 1, 5, true}, {"s1", 2, 1.0, true}, {"s2", 2, 1.2, true}}, 1, 2.3,
			[]string{"x", "s1", "s2", "y"}, 3},
		{"everything fits",
			[]l{{"a", 0, 1, true}, {"b", 1, 1, true}}, 1, 5,
			[]string{"a", "b"}, 2},
	}
	for _, tc := range cases {
		var qts []*queryTerm
		npos := 0
		for _, x := range tc.lists {
			q := &queryTerm{term: x.name, pos: x.pos, ub: x.ub}
			q.cur.dense = x.dense
			qts = append(qts, q)
			npos = max(npos, x.pos+1)
		}
		prefix := make([]float64, len(qts)+1)
		setPrefix(qts, prefix, npos)
		others := make([]float64, len(qts))
		for i := range others {
			others[i] = float64(100 + i) // tags that must travel with their lists
		}
		tag := map[string]float64{}
		for i, q := range qts {
			tag[q.term] = others[i]
		}
		ess := fillSlack(qts, prefix, others, npos, tc.ess, tc.theta)
		var got []string
		for i, q := range qts {
			got = append(got, q.term)
			if others[i] != tag[q.term] {
				t.Errorf("%s: others of %s is %v, want %v", tc.why, q.term, others[i], tag[q.term])
			}
		}
		if !slices.Equal(got, tc.want) || ess != tc.ess2 {
			t.Errorf("%s: order %v ess %d, want %v ess %d", tc.why, got, ess, tc.want, tc.ess2)
		}
		want := make([]float64, len(qts)+1)
		setPrefix(qts, want, npos)
		if !slices.Equal(prefix, want) {
			t.Errorf("%s: prefix %v, want %v for the new order", tc.why, prefix, want)
		}
		if prefix[ess] >= tc.theta {
			t.Errorf("%s: the non-essential lists' bound %v reaches theta %v", tc.why, prefix[ess], tc.theta)
		}
	}
}
