package metrics

import (
	"math"
	"testing"
)

func near(a, b float64) bool { return math.Abs(a-b) < 1e-12 }

func TestAnswerScores(t *testing.T) {
	cases := []struct {
		pred  string
		golds []string
		want  AnswerScores
		why   string
	}{
		{"Paris", []string{"Paris"}, AnswerScores{1, 1, 1, 1, 1}, "identical answer scores 1 everywhere"},
		{"paris.", []string{"Paris"}, AnswerScores{1, 1, 1, 1, 1}, "case and punctuation are normalised away"},
		{"The Paris", []string{"Paris"}, AnswerScores{1, 1, 1, 1, 1}, "a leading article is normalised away"},
		{"the city of Paris", []string{"Paris"}, AnswerScores{0, 0.5, 1.0 / 3, 1, 1},
			"extra words: 'city of paris' vs 'paris', 1 common, P=1/3 R=1 F1=2*(1/3)/(4/3)=0.5; gold is a substring so acc=1"},
		{"yes", []string{"no"}, AnswerScores{}, "yes/no mismatch scores 0"},
		{"Yes.", []string{"yes"}, AnswerScores{1, 1, 1, 1, 1}, "yes matches yes"},
		{"yes it is", []string{"yes"}, AnswerScores{0, 0, 0, 0, 1},
			"gold 'yes' is special and the prediction differs, so F1 is 0 (HotpotQA rule) though acc is 1"},
		{"no", []string{"no way"}, AnswerScores{0, 0, 0, 0, 0},
			"prediction 'no' is special and differs from the gold, so F1 is 0 though 'no' overlaps"},
		{"noanswer", []string{"no answer"}, AnswerScores{}, "noanswer is special too"},
		{"Barack Obama", []string{"Obama", "Barack Hussein Obama"}, AnswerScores{0, 0.8, 1, 1, 1},
			"max over golds: vs 'obama' P=1/2 R=1 F1=2/3; vs 'barack hussein obama' P=1 R=2/3 F1=0.8; DRAGIN maxes P, R and F1 separately"},
		{"the the paris paris", []string{"Paris"}, AnswerScores{0, 2.0 / 3, 0.5, 1, 1},
			"repeated tokens count once per match (multiset intersection): 'paris paris' vs 'paris' P=1/2 R=1"},
		{"", []string{"Paris"}, AnswerScores{}, "empty prediction scores 0"},
		{"anything", []string{"The"}, AnswerScores{0, 0, 0, 0, 1},
			"a gold that normalises to nothing is a substring of everything (FlashRAG acc) but has no tokens"},
		{"", []string{"the"}, AnswerScores{1, 0, 0, 0, 1}, "empty vs empty-normalised gold: EM 1, F1 0 (no common token), acc 1"},
		{"Parisian", []string{"Paris"}, AnswerScores{0, 0, 0, 0, 1}, "acc is a character substring test, so Parisian contains paris"},
		{"New York City", []string{"new york", "NYC"}, AnswerScores{0, 0.8, 2.0 / 3, 1, 1},
			"'new york city' vs 'new york': 2 common, P=2/3 R=1 F1=0.8"},
		{"Paris", nil, AnswerScores{}, "no gold answers score 0"},
	}
	for _, tc := range cases {
		t.Run(tc.why, func(t *testing.T) {
			got := NewGold(tc.golds).Score(tc.pred)
			var sc scratch
			if fast := sc.score(tc.pred, tc.golds); fast != got {
				t.Fatalf("allocation-free scorer %+v differs from Gold.Score %+v", fast, got)
			}
			if !near(got.EM, tc.want.EM) || !near(got.F1, tc.want.F1) || !near(got.Precision, tc.want.Precision) ||
				!near(got.Recall, tc.want.Recall) || !near(got.Acc, tc.want.Acc) {
				t.Fatalf("Score(%q, %q) = %+v, want %+v", tc.pred, tc.golds, got, tc.want)
			}
		})
	}
}

func TestHelpers(t *testing.T) {
	if ExactMatch("The Eiffel Tower!", []string{"eiffel tower"}) != 1 {
		t.Error("ExactMatch should normalise both sides")
	}
	f, p, r := F1("city of Paris", []string{"Paris"})
	if !near(f, 0.5) || !near(p, 1.0/3) || !near(r, 1) {
		t.Errorf("F1 = %v %v %v", f, p, r)
	}
	if SubEM("It is Paris, France", []string{"paris"}) != 1 {
		t.Error("SubEM")
	}
}

func TestCommonCountMatchesMap(t *testing.T) {
	// The quadratic path and the map path must agree (brute force against the Counter semantics).
	a := []string{"a", "b", "b", "c", "d", "b"}
	b := []string{"b", "b", "e", "a", "a"}
	if got := commonCount(a, b); got != 3 {
		t.Fatalf("commonCount = %d, want 3 (a once, b twice)", got)
	}
	long := make([]string, 0, 200)
	for i := 0; i < 200; i++ {
		long = append(long, a[i%len(a)])
	}
	long2 := make([]string, 0, 100)
	for i := 0; i < 100; i++ {
		long2 = append(long2, b[i%len(b)])
	}
	// counts: long has a≈34,b≈100,c≈33,d≈33; long2 has b=40,e=20,a=40.
	want := min(count(long, "a"), count(long2, "a")) + min(count(long, "b"), count(long2, "b"))
	if got := commonCount(long, long2); got != want {
		t.Fatalf("commonCount(long) = %d, want %d", got, want)
	}
}

func count(xs []string, x string) int {
	n := 0
	for _, y := range xs {
		if y == x {
			n++
		}
	}
	return n
}

func TestAnswerRecall(t *testing.T) {
	cases := []struct {
		mode     MatchMode
		answers  []string
		passages []string
		k        int
		want     float64
		why      string
	}{
		{MatchSubstring, []string{"Paris"}, []string{"The capital of France is Paris."}, 1, 1, "substring after normalisation"},
		{MatchTokens, []string{"Paris"}, []string{"The capital of France is Paris."}, 1, 1, "token run"},
		{MatchSubstring, []string{"Paris"}, []string{"Parisian cafes"}, 1, 1, "substring matches inside a word"},
		{MatchTokens, []string{"Paris"}, []string{"Parisian cafes"}, 1, 0, "tokens need whole tokens"},
		{MatchTokens, []string{"New York"}, []string{"new york city"}, 1, 1, "uncased token sequence"},
		{MatchTokens, []string{"New York"}, []string{"New-York"}, 1, 0, "a hyphen is a token, so the run breaks"},
		{MatchSubstring, []string{"New York"}, []string{"New-York"}, 1, 0, "normalised 'newyork' does not contain 'new york'"},
		{MatchTokens, []string{"café"}, []string{"cafe\u0301 au lait"}, 1, 1, "DPR NFD-normalises both sides"},
		{MatchSubstring, []string{"café"}, []string{"cafe\u0301 au lait"}, 1, 0, "FlashRAG does not NFD-normalise"},
		{MatchSubstring, []string{"Paris"}, []string{"no", "no", "Paris"}, 2, 0, "only the first k passages count"},
		{MatchSubstring, []string{"Paris"}, []string{"no", "no", "Paris"}, 3, 1, "k=3 reaches it"},
		{MatchSubstring, []string{"Paris"}, []string{"no", "no", "Paris"}, 0, 1, "k<=0 means all"},
		{MatchTokens, []string{"Rome", "Paris"}, []string{"in paris"}, 5, 1, "any gold answer counts"},
		{MatchTokens, []string{"x"}, nil, 5, 0, "no passages recall nothing"},
	}
	for _, tc := range cases {
		t.Run(tc.why, func(t *testing.T) {
			m := NewAnswerMatcher(tc.mode, tc.answers)
			if got := AnswerRecall(m, tc.passages, tc.k); got != tc.want {
				t.Fatalf("AR@%d(%s) = %v, want %v", tc.k, tc.mode, got, tc.want)
			}
		})
	}
}

func FuzzScoreAgreement(f *testing.F) {
	f.Add("the city of Paris", "Paris", "paris france")
	f.Add("yes", "no", "yes it is")
	f.Fuzz(func(t *testing.T, pred, g1, g2 string) {
		golds := []string{g1, g2, g1}
		var sc scratch
		a, b := NewGold(golds).Score(pred), sc.score(pred, golds)
		if a != b {
			t.Fatalf("Gold.Score %+v != scratch.score %+v for %q vs %q", a, b, pred, golds)
		}
		for _, v := range []float64{a.EM, a.F1, a.Precision, a.Recall, a.Acc} {
			if v < 0 || v > 1 || v != v {
				t.Fatalf("score %v out of [0,1]", v)
			}
		}
		if a.EM == 1 && a.Acc != 1 {
			t.Fatalf("EM without acc: %+v", a)
		}
	})
}
