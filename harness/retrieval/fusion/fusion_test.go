package fusion

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"testing"

	"github.com/ragbench/ragbench/harness/retrieval"
)

const eps = 1e-12

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-9 }

func nearAll(a, b []float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !near(a[i], b[i]) {
			return false
		}
	}
	return true
}

func list(expert string, g int, ids ...string) List {
	l := List{Key: Key{expert, g}}
	for i, id := range ids {
		l.Candidates = append(l.Candidates, Candidate{id, float64(len(ids) - i)})
	}
	return l
}

func TestRRF(t *testing.T) {
	cases := []struct {
		name  string
		lists []List
		k     float64
		want  []Candidate
	}{
		{"no lists", nil, 60, []Candidate{}},
		{"one list keeps its order", []List{list("bm25", 0, "a", "b")}, 60, []Candidate{{"a", 1.0 / 61}, {"b", 1.0 / 62}}},
		{"agreement adds up", []List{list("bm25", 0, "a", "b"), list("dense", 0, "b", "a")}, 1,
			[]Candidate{{"a", 1.0/2 + 1.0/3}, {"b", 1.0/2 + 1.0/3}}},
		{"an item in two lists beats the top of one", []List{list("x", 0, "a", "c"), list("y", 0, "b", "c")}, 60,
			[]Candidate{{"c", 2.0 / 62}, {"a", 1.0 / 61}, {"b", 1.0 / 61}}},
		{"a repeated id counts its best rank once", []List{list("x", 0, "a", "a", "b")}, 10, []Candidate{{"a", 1.0 / 11}, {"b", 1.0 / 13}}},
		{"k ≤ 0 means 60", []List{list("x", 0, "a")}, 0, []Candidate{{"a", 1.0 / 61}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := rrf(tc.lists, tc.k)
			if len(got) != len(tc.want) {
				t.Fatalf("got %v want %v", got, tc.want)
			}
			for i := range got {
				if got[i].ID != tc.want[i].ID || !near(got[i].Score, tc.want[i].Score) {
					t.Fatalf("got %v want %v", got, tc.want)
				}
			}
		})
	}
}

func TestNormalisations(t *testing.T) {
	inf := math.Inf(1)
	cases := []struct {
		name    string
		f       func([]float64) ([]float64, error)
		in      []float64
		want    []float64
		wantErr bool
	}{
		{"min-max spreads onto [0,1]", MinMax, []float64{2, 4, 3}, []float64{0, 1, 0.5}, false},
		{"min-max of equal scores is all 1", MinMax, []float64{7, 7}, []float64{1, 1}, false},
		{"min-max of one score is 1", MinMax, []float64{-3}, []float64{1}, false},
		{"min-max of nothing is nothing", MinMax, []float64{}, []float64{}, false},
		{"min-max rejects NaN", MinMax, []float64{1, math.NaN()}, nil, true},
		{"softmax T=1", func(s []float64) ([]float64, error) { return Softmax(s, 1) }, []float64{0, math.Log(3)}, []float64{0.25, 0.75}, false},
		{"softmax T=2 flattens", func(s []float64) ([]float64, error) { return Softmax(s, 2) }, []float64{0, 2 * math.Log(3)}, []float64{0.25, 0.75}, false},
		{"softmax is stable for huge scores", func(s []float64) ([]float64, error) { return Softmax(s, 1) }, []float64{1000, 1000}, []float64{0.5, 0.5}, false},
		{"softmax rejects T=0", func(s []float64) ([]float64, error) { return Softmax(s, 0) }, []float64{1}, nil, true},
		{"softmax rejects T<0", func(s []float64) ([]float64, error) { return Softmax(s, -1) }, []float64{1}, nil, true},
		{"softmax rejects Inf", func(s []float64) ([]float64, error) { return Softmax(s, 1) }, []float64{inf}, nil, true},
		{"sum divides by the total", Sum, []float64{1, 3}, []float64{0.25, 0.75}, false},
		{"sum of zeros is uniform", Sum, []float64{0, 0, 0, 0}, []float64{0.25, 0.25, 0.25, 0.25}, false},
		{"sum rejects negative scores", Sum, []float64{1, -1}, nil, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			in := slices.Clone(tc.in)
			got, err := tc.f(in)
			if tc.wantErr {
				if err == nil {
					t.Fatalf("got %v, want an error", got)
				}
				return
			}
			if err != nil || !nearAll(got, tc.want) {
				t.Fatalf("got %v %v, want %v", got, err, tc.want)
			}
			if !slices.Equal(in, tc.in) && !slices.ContainsFunc(tc.in, math.IsNaN) {
				t.Fatal("input modified")
			}
		})
	}
}

func TestNormalizedEntropy(t *testing.T) {
	cases := []struct {
		name    string
		in      []float64
		want    float64
		wantErr bool
	}{
		{"no candidates: 0", nil, 0, false},
		{"one candidate: 0, whatever its score", []float64{5}, 0, false},
		{"one candidate with score 0: 0", []float64{0}, 0, false},
		{"all mass on one of many: 0", []float64{0, 1, 0, 0}, 0, false},
		{"uniform: 1", []float64{2, 2, 2}, 1, false},
		{"all-zero scores count as uniform: 1", []float64{0, 0, 0}, 1, false},
		{"two-point 1/4, 3/4", []float64{1, 3}, -(0.25*math.Log(0.25) + 0.75*math.Log(0.75)) / math.Log(2), false},
		{"zero entries count as 0 ln 0 = 0", []float64{1, 1, 0}, math.Log(2) / math.Log(3), false},
		{"negative weights are an error", []float64{1, -1}, 0, true},
		{"NaN is an error", []float64{math.NaN(), 1}, 0, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := normalizedEntropy(tc.in)
			if tc.wantErr != (err != nil) {
				t.Fatalf("err %v, wantErr %v", err, tc.wantErr)
			}
			if err == nil && !near(got, tc.want) {
				t.Fatalf("got %v want %v", got, tc.want)
			}
		})
	}
	if _, err := normalizedEntropy([]float64{-1, 2}); !errors.Is(err, ErrBadScore) {
		t.Fatalf("want ErrBadScore, got %v", err)
	}
}

func randomScores(rng *rand.Rand, n int) []float64 {
	s := make([]float64, n)
	for i := range s {
		s[i] = rng.NormFloat64() * 10
	}
	return s
}

// TestProperties checks invariants on random inputs.
func TestProperties(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for iter := 0; iter < 500; iter++ {
		n := 1 + rng.IntN(30)
		s := randomScores(rng, n)
		mm, _ := MinMax(s)
		T := 0.05 + rng.Float64()*5
		sm, _ := Softmax(s, T)
		shift := rng.NormFloat64() * 100
		shifted := make([]float64, n)
		for i := range s {
			shifted[i] = s[i] + shift
		}
		sm2, _ := Softmax(shifted, T)
		var total float64
		for i := range s {
			if mm[i] < -eps || mm[i] > 1+eps {
				t.Fatalf("min-max out of [0,1]: %v", mm)
			}
			total += sm[i]
			if !near(sm[i], sm2[i]) {
				t.Fatalf("softmax not shift-invariant: %v vs %v", sm, sm2)
			}
			for j := range s {
				if s[i] < s[j] && (mm[i] > mm[j] || sm[i] > sm[j]) {
					t.Fatalf("normalisation does not preserve order")
				}
			}
		}
		if !near(total, 1) {
			t.Fatalf("softmax sums to %v", total)
		}
		// Entropy: in [0,1], permutation invariant, and softmax entropy grows with the temperature.
		h1, _ := normalizedEntropy(sm)
		perm := slices.Clone(sm)
		rng.Shuffle(len(perm), func(i, j int) { perm[i], perm[j] = perm[j], perm[i] })
		h2, _ := normalizedEntropy(perm)
		if h1 < -eps || h1 > 1+eps || !near(h1, h2) {
			t.Fatalf("entropy %v / permuted %v", h1, h2)
		}
		hot, _ := Softmax(s, T*2)
		h3, _ := normalizedEntropy(hot)
		if n > 1 && h3 < h1-1e-9 {
			t.Fatalf("entropy fell from %v to %v when the temperature doubled", h1, h3)
		}
		// RRF: list order does not matter, and scores are bounded by lists/(k+1).
		var lists []List
		for l := 0; l < 1+rng.IntN(4); l++ {
			ids := rng.Perm(n)
			var names []string
			for _, id := range ids[:1+rng.IntN(n)] {
				names = append(names, "d"+strconv.Itoa(id))
			}
			lists = append(lists, list("e"+strconv.Itoa(l), l, names...))
		}
		a := rrf(lists, 60)
		rev := slices.Clone(lists)
		slices.Reverse(rev)
		b := rrf(rev, 60)
		if len(a) != len(b) {
			t.Fatal("RRF depends on list order")
		}
		for i := range a {
			if a[i].ID != b[i].ID || !near(a[i].Score, b[i].Score) {
				t.Fatalf("RRF depends on list order: %v vs %v", a, b)
			}
			if a[i].Score > float64(len(lists))/61+eps {
				t.Fatalf("RRF score %v above the bound", a[i].Score)
			}
		}
		// An item first in every list is first after fusion.
		top := "d-top"
		for i := range lists {
			lists[i].Candidates = append([]Candidate{{top, 1e9}}, lists[i].Candidates...)
		}
		if got := rrf(lists, 60); got[0].ID != top {
			t.Fatalf("unanimous top is not first: %v", got[:2])
		}
	}
}

type fixed []retrieval.Hit

func (f fixed) Retrieve(ctx context.Context, q string, k int) ([]retrieval.Hit, error) {
	if len(f) > k {
		return f[:k], nil
	}
	return f, nil
}

type failing struct{}

func (failing) Retrieve(context.Context, string, int) ([]retrieval.Hit, error) {
	return nil, errors.New("boom")
}

func TestCollectAndCombSum(t *testing.T) {
	experts := map[Key]retrieval.Retriever{
		{"dense", 4}: fixed{{ID: "u1", Score: 0.9}, {ID: "u2", Score: 0.5}},
		{"bm25", 8}:  fixed{{ID: "u2", Score: 12}, {ID: "u3", Score: 4}, {ID: "u1", Score: 4}},
		{"bm25", 2}:  fixed{},
	}
	lists, err := collect(context.Background(), "q", experts, 2)
	if err != nil {
		t.Fatal(err)
	}
	if len(lists) != 3 || lists[0].Key != (Key{"bm25", 2}) || lists[1].Key != (Key{"bm25", 8}) || lists[2].Key != (Key{"dense", 4}) {
		t.Fatalf("lists not sorted by key: %+v", lists)
	}
	if len(lists[1].Candidates) != 2 || lists[1].Candidates[1].ID != "u3" {
		t.Fatalf("depth or tie order wrong: %+v", lists[1])
	}
	fused, err := combSum(lists, MinMax, map[Key]float64{{"dense", 4}: 2})
	if err != nil {
		t.Fatal(err)
	}
	// dense@4 min-max: u1 1, u2 0 (weight 2); bm25@8: u2 1, u3 0.
	want := []Candidate{{"u1", 2}, {"u2", 1}, {"u3", 0}}
	for i := range want {
		if fused[i].ID != want[i].ID || !near(fused[i].Score, want[i].Score) {
			t.Fatalf("got %v want %v", fused, want)
		}
	}
	experts[Key{"broken", 0}] = failing{}
	if _, err := collect(context.Background(), "q", experts, 2); err == nil {
		t.Fatal("a failing expert must fail collect")
	}
	if got := FromHits(Key{}, []retrieval.Hit{{ID: "b", Score: 1}, {ID: "a", Score: 1}, {ID: "c", Score: 2}}, 0); got.Candidates[0].ID != "c" || got.Candidates[1].ID != "a" {
		t.Fatalf("FromHits order: %v", got.Candidates)
	}
}
