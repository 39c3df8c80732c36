package metrics

import (
	"math"
	"reflect"
	"testing"
)

func TestClassify(t *testing.T) {
	cases := []struct {
		gold, pred []string
		acc, macro float64
		labels     []string
		why        string
	}{
		{[]string{"yes", "yes", "no", "maybe"}, []string{"yes", "no", "no", ""}, 0.5, 1.0 / 3, []string{"", "maybe", "no", "yes"},
			"invalid '' is its own class (sklearn union of labels): F1 ''=0, maybe=0, no=2/3, yes=2/3, mean 1/3"},
		{[]string{"yes", "no", "maybe"}, []string{"yes", "no", "maybe"}, 1, 1, []string{"maybe", "no", "yes"}, "all correct"},
		{[]string{"yes", "yes"}, []string{"no", "no"}, 0, 0, []string{"no", "yes"}, "all wrong: both classes F1 0"},
		{[]string{"yes", "yes", "yes", "no"}, []string{"yes", "yes", "yes", "yes"}, 0.75, (6.0/7 + 0) / 2, []string{"no", "yes"},
			"yes: P=3/4 R=1 F1=6/7; no: never predicted, F1 0"},
	}
	for _, tc := range cases {
		t.Run(tc.why, func(t *testing.T) {
			s, err := Classify(tc.gold, tc.pred)
			if err != nil {
				t.Fatal(err)
			}
			if !near(s.Accuracy, tc.acc) || !near(s.MacroF1, tc.macro) || !reflect.DeepEqual(s.Labels, tc.labels) {
				t.Fatalf("Classify = %+v, want acc %v macro %v labels %q", s, tc.acc, tc.macro, tc.labels)
			}
		})
	}
}

func TestPubMedQALabel(t *testing.T) {
	cases := []struct{ in, want, why string }{
		{"yes", "yes", "plain label"},
		{"Maybe.", "maybe", "normalised"},
		{"No, it does not.", "no", "first label word"},
		{"The answer: yes", "yes", "label word later in the answer"},
		{"unclear", "", "no label word is invalid"},
		{"", "", "empty is invalid"},
		{"nobody knows", "", "label words must be whole words"},
	}
	for _, tc := range cases {
		if got := PubMedQALabel(tc.in); got != tc.want {
			t.Errorf("%s: PubMedQALabel(%q) = %q, want %q", tc.why, tc.in, got, tc.want)
		}
	}
}

func TestBootstrap(t *testing.T) {
	// A constant column has a degenerate interval.
	iv := Bootstrap([][]float64{{1, 1, 1, 1}}, 200, 0.95, 1)[0]
	if iv.Mean != 1 || iv.Lo != 1 || iv.Hi != 1 {
		t.Fatalf("constant column: %+v", iv)
	}
	// Same seed, same answer; different seed, (almost surely) a different one.
	xs := make([]float64, 1000)
	for i := range xs {
		xs[i] = float64(i % 2)
	}
	a := Bootstrap([][]float64{xs}, 1000, 0.95, 7)[0]
	b := Bootstrap([][]float64{xs}, 1000, 0.95, 7)[0]
	c := Bootstrap([][]float64{xs}, 1000, 0.95, 8)[0]
	if a != b {
		t.Fatalf("not deterministic: %+v vs %+v", a, b)
	}
	if a == c {
		t.Errorf("seed has no effect: %+v", a)
	}
	// Against the normal approximation: p=0.5, n=1000, se=sqrt(.25/1000)=0.0158, half-width ≈ 0.031.
	half := 1.96 * math.Sqrt(0.25/1000)
	if math.Abs((a.Hi-a.Lo)/2-half) > 0.006 || a.Lo > 0.5 || a.Hi < 0.5 {
		t.Fatalf("interval %+v, want about 0.5 ± %.3f", a, half)
	}
	// Few items: no interval.
	if iv := Bootstrap([][]float64{{0.3}}, 100, 0.95, 1)[0]; iv.Lo != 0.3 || iv.Hi != 0.3 {
		t.Fatalf("single item: %+v", iv)
	}
}

func TestBootstrapStatMatchesBootstrap(t *testing.T) {
	xs := []float64{0, 1, 1, 0, 1, 0.5, 0.25, 1, 0, 1}
	mean := func(s []int) float64 {
		if s == nil {
			return Mean(xs)
		}
		t := 0.0
		for _, i := range s {
			t += xs[i]
		}
		return t / float64(len(s))
	}
	// The grouped (multinomial) resampling of Bootstrap and the index resampling of BootstrapStat
	// draw from the same distribution: with many resamples their intervals agree closely.
	a := Bootstrap([][]float64{xs}, 20000, 0.9, 3)[0]
	b := BootstrapStat(len(xs), 20000, 0.9, 3, mean)
	if !near(a.Mean, b.Mean) || math.Abs(a.Lo-b.Lo) > 0.026 || math.Abs(a.Hi-b.Hi) > 0.026 {
		t.Fatalf("Bootstrap %+v vs BootstrapStat %+v", a, b)
	}
}

// exactPermutationP enumerates all 2^n sign flips: the brute-force version of PairedTest's p-value.
func exactPermutationP(a, b []float64) float64 {
	n := len(a)
	obs := 0.0
	for i := range a {
		obs += a[i] - b[i]
	}
	obs = math.Abs(obs)
	c := 0
	for mask := 0; mask < 1<<n; mask++ {
		s := 0.0
		for i := 0; i < n; i++ {
			d := a[i] - b[i]
			if mask>>i&1 == 1 {
				d = -d
			}
			s += d
		}
		if math.Abs(s) >= obs-1e-12 {
			c++
		}
	}
	return float64(c) / float64(int(1)<<n)
}

func TestPairedTest(t *testing.T) {
	a := []float64{1, 1, 0, 1, 1, 0, 1, 1, 1, 0, 1, 1}
	b := []float64{0, 1, 0, 0, 1, 0, 0, 1, 0, 0, 1, 1}
	exact := exactPermutationP(a, b)
	got, err := PairedTest(a, b, 20000, 1000, 0.95, 5)
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(got.P-exact) > 0.01 {
		t.Fatalf("approximate randomization p %.4f, exact %.4f", got.P, exact)
	}
	if !near(got.Delta.Mean, 4.0/12) {
		t.Fatalf("delta %v, want 1/3", got.Delta.Mean)
	}
	if same, _ := PairedTest(a, a, 1000, 100, 0.95, 5); same.P != 1 || same.Delta.Mean != 0 {
		t.Fatalf("identical systems: %+v", same)
	}
	ones := make([]float64, 100)
	zeros := make([]float64, 100)
	for i := range ones {
		ones[i] = 1
	}
	if far, _ := PairedTest(ones, zeros, 999, 100, 0.95, 5); far.P != 1.0/1000 {
		t.Fatalf("always-better system: p %v, want 1/1000", far.P)
	}
}

func TestMismatchedLengthsAreErrors(t *testing.T) {
	if _, err := Classify([]string{"yes"}, nil); err == nil {
		t.Fatal("Classify with 1 gold and 0 predicted labels: want an error, not a panic or a score")
	}
	if _, err := PairedTest([]float64{1, 0}, []float64{1}, 10, 10, 0.95, 1); err == nil {
		t.Fatal("PairedTest over 2 and 1 scores: want an error")
	}
}
