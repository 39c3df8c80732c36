package ngram

import (
	"math/rand"
	"slices"
	"testing"
)

// bruteSA sorts the suffixes of s (with its sentinel) directly.
func bruteSA(s []int32) []int32 {
	sa := make([]int32, len(s))
	for i := range sa {
		sa[i] = int32(i)
	}
	slices.SortFunc(sa, func(a, b int32) int { return slices.Compare(s[a:], s[b:]) })
	return sa
}

func TestSAISMatchesBruteForce(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	for trial := 0; trial < 2000; trial++ {
		n := rng.Intn(60)
		k := 1 + rng.Intn(4)
		if trial%7 == 0 {
			k = 1 + rng.Intn(200)
		}
		s := make([]int32, n+1)
		for i := 0; i < n; i++ {
			s[i] = 1 + int32(rng.Intn(k))
		}
		s[n] = 0
		sa := make([]int32, n+1)
		saisText(s, sa, k+1)
		want := bruteSA(s)
		if !slices.Equal(sa, want) {
			t.Fatalf("trial %d: text %v\n got %v\nwant %v", trial, s, sa, want)
		}
	}
}

func TestSAISRepetitive(t *testing.T) {
	// Long runs force deep recursion: all-equal, period 2 and period 3 texts.
	for _, period := range []int{1, 2, 3, 5} {
		n := 1000
		s := make([]int32, n+1)
		for i := 0; i < n; i++ {
			s[i] = 1 + int32(i%period)
		}
		sa := make([]int32, n+1)
		saisText(s, sa, period+1)
		if want := bruteSA(s); !slices.Equal(sa, want) {
			t.Fatalf("period %d: suffix array differs from brute force", period)
		}
	}
}

func TestMT19937KnownValue(t *testing.T) {
	// The C++ standard requires the 10000th output of a default-seeded std::mt19937 to be 4123659995.
	g := newMT19937(5489)
	var v uint32
	for i := 0; i < 10000; i++ {
		v = g.next()
	}
	if v != 4123659995 {
		t.Fatalf("10000th value %d, want 4123659995", v)
	}
}

// TestSAISMatchesReference compares saisText with the plain reference SA-IS on texts of up to a
// million symbols, far beyond brute force: small alphabets and long runs of one symbol (long L and S
// runs, whose types come from the signs of the entries), deep recursion, and a Zipfian text with a
// large alphabet like the bench corpus.
func TestSAISMatchesReference(t *testing.T) {
	n := 1_000_000
	if testing.Short() {
		n = 200_000
	}
	rng := rand.New(rand.NewSource(7))
	random := func(n, k int) ([]int32, int) {
		s := make([]int32, n+1)
		for i := 0; i < n; i++ {
			s[i] = 1 + int32(rng.Intn(k))
		}
		return s, k + 1
	}
	runs := func(n int) ([]int32, int) { // long runs of a few symbols
		s := make([]int32, 0, n+1)
		for len(s) < n {
			c, r := 1+int32(rng.Intn(3)), 1+rng.Intn(2000)
			for i := 0; i < r && len(s) < n; i++ {
				s = append(s, c)
			}
		}
		return append(s, 0), 4
	}
	periodic := func(n, p int) ([]int32, int) {
		s := make([]int32, n+1)
		for i := 0; i < n; i++ {
			s[i] = 1 + int32(i%p)
		}
		return s, p + 1
	}
	cases := []struct {
		name string
		gen  func() ([]int32, int)
	}{
		{"binary alphabet: many equal LMS substrings, deep recursion", func() ([]int32, int) { return random(n, 2) }},
		{"alphabet 4 (DNA-like)", func() ([]int32, int) { return random(n, 4) }},
		{"alphabet 1000", func() ([]int32, int) { return random(n, 1000) }},
		{"long runs of one symbol", func() ([]int32, int) { return runs(n) }},
		{"period 7: names repeat at every level", func() ([]int32, int) { return periodic(n, 7) }},
		{"Zipfian tokens, 1M-word vocabulary, byte-order ranks", func() ([]int32, int) { return zipfRankText(n, 1_000_000, 3) }},
	}
	for _, tc := range cases {
		s, k := tc.gen()
		want := make([]int32, len(s))
		saisRef(slices.Clone(s), want, k)
		got := make([]int32, len(s))
		orig := slices.Clone(s)
		saisText(s, got, k)
		if !slices.Equal(s, orig) {
			t.Errorf("%s: saisText modified its text", tc.name)
		}
		if i := firstDiff(got, want); i >= 0 {
			t.Errorf("%s (n=%d): suffix arrays differ first at rank %d: got %d, want %d", tc.name, len(s), i, got[i], want[i])
		}
	}
}

func firstDiff(a, b []int32) int {
	for i := range a {
		if i >= len(b) || a[i] != b[i] {
			return i
		}
	}
	if len(b) > len(a) {
		return len(a)
	}
	return -1
}
