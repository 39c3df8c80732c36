package fusion

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// handCase is testdata/umg_hand.json, computed independently by testdata/umg_hand.py from the
// method's description: two experts, three units per granularity (2, 4, 8), every normalisation and
// weighting.
type handCase struct {
	Tokens map[string]int    `json:"tokens"`
	Parent map[string]string `json:"parent"`
	Lists  []struct {
		Key        string      `json:"key"`
		Candidates []Candidate `json:"candidates"`
	} `json:"lists"`
	Cases []struct {
		Normalization Normalization `json:"normalization"`
		Weights       Weighting     `json:"weights"`
		Pairs         []struct {
			Key        string  `json:"key"`
			N          int     `json:"n"`
			Entropy    float64 `json:"entropy"`
			Confidence float64 `json:"confidence"`
			Weight     float64 `json:"weight"`
		} `json:"pairs"`
		Fused     []Candidate `json:"fused"`
		UMGRanked []struct {
			ID   string
			P, R float64
		} `json:"umg_ranked"`
		UMGSel     []string    `json:"umg_selected"`
		Promotions []Promotion `json:"promotions"`
		UMGPRanked []struct {
			ID   string
			P, R float64
		} `json:"umgp_ranked"`
		UMGPSel   []string   `json:"umgp_selected"`
		UMGPDec   []Decision `json:"umgp_decisions"`
		Budget100 []Decision `json:"umgp_budget100_decisions"`
	} `json:"cases"`
}

func parseKey(t *testing.T, s string) Key {
	t.Helper()
	e, g, ok := strings.Cut(s, "@")
	n, err := strconv.Atoi(g)
	if !ok || err != nil {
		t.Fatalf("bad key %q", s)
	}
	return Key{e, n}
}

// handSpan parses the hand case's unit ids "d#gG:S-E".
func handLookup(hc handCase) Lookup {
	return func(id string) (Span, bool) {
		tok, ok := hc.Tokens[id]
		if !ok {
			return Span{}, false
		}
		doc, rest, _ := strings.Cut(id, "#g")
		g, se, _ := strings.Cut(rest, ":")
		s, e, _ := strings.Cut(se, "-")
		gi, _ := strconv.Atoi(g)
		si, _ := strconv.Atoi(s)
		ei, _ := strconv.Atoi(e)
		return Span{ID: id, Doc: doc, Start: si, End: ei, Size: gi, Tokens: tok, Parent: hc.Parent[id]}, true
	}
}

func TestUMGHandCase(t *testing.T) {
	data, err := os.ReadFile("testdata/umg_hand.json")
	if err != nil {
		t.Fatal(err)
	}
	var hc handCase
	if err := json.Unmarshal(data, &hc); err != nil {
		t.Fatal(err)
	}
	var lists []List
	for _, l := range hc.Lists {
		lists = append(lists, List{Key: parseKey(t, l.Key), Candidates: l.Candidates})
	}
	look := handLookup(hc)
	if len(hc.Cases) != 6 {
		t.Fatalf("%d cases, want 3 normalisations × 2 weightings", len(hc.Cases))
	}
	for _, c := range hc.Cases {
		t.Run(string(c.Normalization)+"/"+string(c.Weights), func(t *testing.T) {
			f, err := Fuse(lists, UMGOptions{Normalization: c.Normalization, Weights: c.Weights})
			if err != nil {
				t.Fatal(err)
			}
			// Entropy confidences and weights per pair.
			for i, p := range c.Pairs {
				got := f.Pairs[i]
				if got.Key.String() != p.Key || got.N != p.N || !near(got.Entropy, p.Entropy) || !near(got.Confidence, p.Confidence) || !near(got.Weight, p.Weight) {
					t.Errorf("pair %d: got %+v, want %+v", i, got, p)
				}
			}
			// The fusion.
			if len(f.Scores) != len(c.Fused) {
				t.Fatalf("fused %v, want %v", f.Scores, c.Fused)
			}
			for i := range c.Fused {
				if f.Scores[i].ID != c.Fused[i].ID || !near(f.Scores[i].Score, c.Fused[i].Score) {
					t.Errorf("fused[%d] = %v, want %v", i, f.Scores[i], c.Fused[i])
				}
			}
			// The length penalty.
			r, err := LengthRank(f.Scores, look)
			if err != nil {
				t.Fatal(err)
			}
			for i, w := range c.UMGRanked {
				if r[i].ID != w.ID || !near(r[i].P, w.P) || !near(r[i].R, w.R) {
					t.Errorf("umg rank %d = %s P %v R %v, want %+v", i, r[i].ID, r[i].P, r[i].R, w)
				}
			}
			sel, _, err := Select(r, SelectOptions{K: 5})
			if err != nil {
				t.Fatal(err)
			}
			if got := ids(sel); !slices.Equal(got, c.UMGSel) {
				t.Errorf("umg top 5 %v, want %v", got, c.UMGSel)
			}
			// The promotion and the cap.
			pr, proms, err := Promote(f.Scores, look, PromoteOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if len(proms) != len(c.Promotions) {
				t.Fatalf("promotions %+v, want %+v", proms, c.Promotions)
			}
			for i, w := range c.Promotions {
				g := proms[i]
				if g.Parent != w.Parent || !slices.Equal(g.Members, w.Members) || !near(g.Sum, w.Sum) || !near(g.Score, w.Score) || g.Capped != w.Capped {
					t.Errorf("promotion %d: got %+v, want %+v", i, g, w)
				}
			}
			for i, w := range c.UMGPRanked {
				if pr[i].ID != w.ID || !near(pr[i].P, w.P) || !near(pr[i].R, w.R) {
					t.Errorf("umgp rank %d = %s P %v R %v, want %+v", i, pr[i].ID, pr[i].P, pr[i].R, w)
				}
			}
			// The overlap skip, then the budget.
			sel, dec, err := Select(pr, SelectOptions{K: 5, MaxOverlap: 0.75})
			if err != nil {
				t.Fatal(err)
			}
			if got := ids(sel); !slices.Equal(got, c.UMGPSel) {
				t.Errorf("umgp top 5 %v, want %v", got, c.UMGPSel)
			}
			checkDecisions(t, dec, c.UMGPDec)
			_, dec, _ = Select(pr, SelectOptions{K: 5, MaxOverlap: 0.75, Budget: 100})
			checkDecisions(t, dec, c.Budget100)
		})
	}
}

func checkDecisions(t *testing.T, got, want []Decision) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("decisions %v, want %v", got, want)
	}
	for i := range want {
		if got[i].ID != want[i].ID || got[i].Verdict != want[i].Verdict || got[i].With != want[i].With || !near(got[i].Overlap, want[i].Overlap) {
			t.Errorf("decision %d: %v, want %v", i, got[i], want[i])
		}
	}
}

func ids(r []Ranked) []string {
	out := make([]string, len(r))
	for i, x := range r {
		out[i] = x.ID
	}
	return out
}

func TestEntropyConfidenceEdges(t *testing.T) {
	cases := []struct {
		name  string
		p     []float64
		wantC float64
	}{
		{"no candidate: nothing to doubt", nil, 1},
		{"one candidate is certain", []float64{1}, 1},
		{"uniform over two is uncertain", []float64{.5, .5}, 0},
		{"uniform over 100 is uncertain", slices.Repeat([]float64{.01}, 100), 0},
		{"all mass on one of three is certain", []float64{1, 0, 0}, 1},
		{"2/3, 1/3 over 2", []float64{2.0 / 3, 1.0 / 3}, 1 - (-(2.0/3*math.Log(2.0/3) + 1.0/3*math.Log(1.0/3)) / math.Log(2))},
	}
	for _, tc := range cases {
		for _, base := range []float64{2, math.E, 10} {
			_, c := EntropyConfidence(tc.p, base)
			if !near(c, tc.wantC) {
				t.Errorf("%s (base %v): c = %v, want %v", tc.name, base, c, tc.wantC)
			}
		}
	}
}

func TestUMGOptionsBad(t *testing.T) {
	for _, o := range []UMGOptions{
		{Normalization: "zscore"}, {Weights: "rank"}, {Temperature: -1}, {LogBase: 1}, {LogBase: 0.5},
	} {
		if _, err := Fuse(nil, o); err == nil {
			t.Errorf("%+v: no error", o)
		}
	}
	// Sum needs non-negative scores: the error names the list.
	_, err := Fuse([]List{{Key: Key{"dense", 4}, Candidates: []Candidate{{"a", 0.5}, {"b", -0.1}}}}, UMGOptions{Normalization: NormSum})
	if err == nil || !strings.Contains(err.Error(), "dense@4") {
		t.Errorf("negative score under sum: %v", err)
	}
	_, err = LengthRank([]Candidate{{"nowhere", 1}}, func(string) (Span, bool) { return Span{}, false })
	if err == nil || !strings.Contains(err.Error(), "nowhere") {
		t.Errorf("unknown unit: %v", err)
	}
}

// randomLists draws m lists of up to 12 candidates from a pool of 30 units of sizes 2..32 over
// three documents; scores positive so that every normalisation applies.
func randomLists(r *rand.Rand, m int) ([]List, map[string]Span) {
	spans := map[string]Span{}
	var pool []string
	sizes := []int{2, 4, 8, 16, 32}
	for d := 0; d < 3; d++ {
		doc := "doc" + strconv.Itoa(d)
		for _, g := range sizes {
			for st := 0; st+g <= 40; st += max(1, g/2) {
				id := doc + "#g" + strconv.Itoa(g) + ":" + strconv.Itoa(st) + "-" + strconv.Itoa(st+g)
				parent := ""
				if g < 8 {
					p := st / 4 * 4
					if p+8 > 40 {
						p = 32
					}
					parent = doc + "#g8:" + strconv.Itoa(p) + "-" + strconv.Itoa(p+8)
				}
				spans[id] = Span{ID: id, Doc: doc, Start: st, End: st + g, Size: g, Tokens: 5*g + r.IntN(10), Parent: parent}
				pool = append(pool, id)
			}
		}
	}
	var lists []List
	for i := 0; i < m; i++ {
		n := 1 + r.IntN(12)
		perm := r.Perm(len(pool))[:n]
		l := List{Key: Key{[]string{"bm25", "dense"}[i%2], sizes[(i/2)%5]}}
		for _, j := range perm {
			l.Candidates = append(l.Candidates, Candidate{pool[j], float64(r.IntN(20)) + r.Float64()})
		}
		sortCandidates(l.Candidates)
		lists = append(lists, l)
	}
	return lists, spans
}

func TestUMGProperties(t *testing.T) {
	r := rand.New(rand.NewPCG(16, 5))
	norms := []Normalization{NormMinMax, NormSoftmax, NormSum}
	for trial := 0; trial < 300; trial++ {
		lists, spans := randomLists(r, 2+r.IntN(9))
		look := func(id string) (Span, bool) { s, ok := spans[id]; return s, ok }
		o := UMGOptions{Normalization: norms[trial%3], Weights: []Weighting{WeightNormalized, WeightConfidence}[trial/3%2]}
		f, err := Fuse(lists, o)
		if err != nil {
			t.Fatal(err)
		}
		// Fused scores are a distribution (normalized weights) or Σc times one (confidence weights).
		var sum, csum float64
		for _, c := range f.Scores {
			if c.Score <= 0 {
				t.Fatalf("trial %d: non-positive fused score %v", trial, c)
			}
			sum += c.Score
		}
		for _, p := range f.Pairs {
			csum += p.Confidence
		}
		want := 1.0
		if o.Weights == WeightConfidence && !f.Fallback {
			want = csum
		}
		if math.Abs(sum-want) > 1e-9 {
			t.Fatalf("trial %d (%+v): fused mass %v, want %v", trial, o, sum, want)
		}
		// A flat list gets confidence 0 and changes nothing (given a confident list to anchor).
		if !f.Fallback {
			flat := List{Key: Key{"flat", 99}}
			for _, id := range []string{"doc0#g2:0-2", "doc1#g32:0-32", "doc2#g8:4-12"} {
				flat.Candidates = append(flat.Candidates, Candidate{id, 7})
			}
			f2, err := Fuse(append(slices.Clone(lists), flat), o)
			if err != nil {
				t.Fatal(err)
			}
			if st := f2.Pairs[len(lists)]; st.Confidence != 0 || st.Weight != 0 {
				t.Fatalf("flat list: %+v", st)
			}
			if len(f2.Scores) != len(f.Scores) {
				t.Fatalf("trial %d: flat list changed the fused set", trial)
			}
			for i := range f.Scores {
				if f.Scores[i].ID != f2.Scores[i].ID || !near(f.Scores[i].Score, f2.Scores[i].Score) {
					t.Fatalf("trial %d: flat list changed %v to %v", trial, f.Scores[i], f2.Scores[i])
				}
			}
		}
		// A one-candidate list gets confidence 1.
		one := List{Key: Key{"one", 1}, Candidates: []Candidate{{"doc0#g4:0-4", 3}}}
		f3, err := Fuse(append(slices.Clone(lists), one), o)
		if err != nil {
			t.Fatal(err)
		}
		if c := f3.Pairs[len(lists)].Confidence; c != 1 {
			t.Fatalf("one-candidate list: confidence %v", c)
		}
		// Promotion never returns two units overlapping by more than 75%, and the top 5 never
		// exceed the budget.
		pr, _, err := Promote(f.Scores, look, PromoteOptions{})
		if err != nil {
			t.Fatal(err)
		}
		budget := 50 + r.IntN(400)
		for _, so := range []SelectOptions{{K: 5, MaxOverlap: 0.75}, {K: 5, MaxOverlap: 0.75, Budget: budget}} {
			sel, _, err := Select(pr, so)
			if err != nil {
				t.Fatal(err)
			}
			used := 0
			for i, a := range sel {
				used += a.Tokens
				for _, b := range sel[:i] {
					if ov := Overlap(a.Span, b.Span); ov > 0.75 {
						t.Fatalf("trial %d: %s and %s overlap %v", trial, a.ID, b.ID, ov)
					}
				}
				if a.Size == 2 || a.Size == 4 {
					t.Fatalf("trial %d: unpromoted %s selected", trial, a.ID)
				}
			}
			if len(sel) > 5 || (so.Budget > 0 && used > so.Budget) {
				t.Fatalf("trial %d: %d units, %d tokens over budget %d", trial, len(sel), used, so.Budget)
			}
			// Brute force: every skipped unit had a reason.
			if so.Budget == 0 && len(sel) < 5 {
				for _, u := range pr {
					if !slices.ContainsFunc(sel, func(x Ranked) bool { return x.ID == u.ID }) &&
						!slices.ContainsFunc(sel, func(x Ranked) bool { return Overlap(x.Span, u.Span) > 0.75 }) {
						t.Fatalf("trial %d: %s left out without overlap", trial, u.ID)
					}
				}
			}
		}
		// The log base changes nothing.
		for _, base := range []float64{2, 10} {
			o2 := o
			o2.LogBase = base
			f4, _ := Fuse(lists, o2)
			for i := range f.Pairs {
				if !near(f.Pairs[i].Confidence, f4.Pairs[i].Confidence) {
					t.Fatalf("log base %v changed confidence %v to %v", base, f.Pairs[i].Confidence, f4.Pairs[i].Confidence)
				}
			}
		}
	}
}

func TestFuseAllFlatFallsBack(t *testing.T) {
	lists := []List{
		{Key: Key{"bm25", 2}, Candidates: []Candidate{{"a", 1}, {"b", 1}}},
		{Key: Key{"dense", 2}, Candidates: []Candidate{{"b", 3}, {"c", 3}}},
		{Key: Key{"dense", 4}},
	}
	f, err := Fuse(lists, UMGOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !f.Fallback || f.Pairs[0].Weight != 0.5 || f.Pairs[2].Weight != 0 {
		t.Fatalf("%+v", f)
	}
	want := []Candidate{{"b", 0.5}, {"a", 0.25}, {"c", 0.25}}
	for i := range want {
		if f.Scores[i].ID != want[i].ID || !near(f.Scores[i].Score, want[i].Score) {
			t.Fatalf("%v, want %v", f.Scores, want)
		}
	}
}

func TestWeightedRRF(t *testing.T) {
	a := List{Key: Key{"bm25", 8}, Candidates: []Candidate{{"x", 9}, {"y", 8}}}
	b := List{Key: Key{"dense", 8}, Candidates: []Candidate{{"y", .9}, {"z", .8}}}
	// Equal weights: RRF.
	got, want := WeightedRRF([]List{a, b}, 60, nil), rrf([]List{a, b}, 60)
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("%v, want %v", got, want)
		}
	}
	// dense weighted 3: y = 1/62 + 3/61, z = 3/62, x = 1/61.
	got = WeightedRRF([]List{a, b}, 60, map[Key]float64{{"dense", 8}: 3})
	exp := []Candidate{{"y", 1.0/62 + 3.0/61}, {"z", 3.0 / 62}, {"x", 1.0 / 61}}
	for i := range exp {
		if got[i].ID != exp[i].ID || !near(got[i].Score, exp[i].Score) {
			t.Fatalf("%v, want %v", got, exp)
		}
	}
}

// BenchmarkUMGFusion times UMG's fusion and UMGP's promotion and selection alone, without retrieval:
// ten pairs (two experts × five granularities) of 100 candidates each over one long document, the
// shape of one question.
//
//	go test ./harness/retrieval/fusion -run '^$' -bench UMGFusion -benchmem
func BenchmarkUMGFusion(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 2))
	spans := map[string]Span{}
	var lists []List
	for e, expert := range []string{"bm25", "dense"} {
		for _, g := range []int{2, 4, 8, 16, 32} {
			l := List{Key: Key{expert, g}}
			for i := 0; i < 100; i++ {
				st := r.IntN(2000)
				id := "Some Wikipedia Page Title#g" + strconv.Itoa(g) + ":" + strconv.Itoa(st) + "-" + strconv.Itoa(st+g)
				p := st / 4 * 4
				parent := ""
				if g < 8 {
					parent = "Some Wikipedia Page Title#g8:" + strconv.Itoa(p) + "-" + strconv.Itoa(p+8)
					spans[parent] = Span{ID: parent, Doc: "Some Wikipedia Page Title", Start: p, End: p + 8, Size: 8, Tokens: 200}
				}
				spans[id] = Span{ID: id, Doc: "Some Wikipedia Page Title", Start: st, End: st + g, Size: g, Tokens: 25 * g, Parent: parent}
				l.Candidates = append(l.Candidates, Candidate{id, float64(e+1) * (30 - float64(i)/5)})
			}
			sortCandidates(l.Candidates)
			lists = append(lists, l)
		}
	}
	look := func(id string) (Span, bool) { s, ok := spans[id]; return s, ok }
	b.Run("umg", func(b *testing.B) {
		for b.Loop() {
			f, _ := Fuse(lists, UMGOptions{})
			rk, _ := LengthRank(f.Scores, look)
			Select(rk, SelectOptions{K: 5})
		}
	})
	b.Run("umgp", func(b *testing.B) {
		for b.Loop() {
			f, _ := Fuse(lists, UMGOptions{})
			rk, _, _ := Promote(f.Scores, look, PromoteOptions{})
			Select(rk, SelectOptions{K: 5, MaxOverlap: 0.75})
		}
	})
}
