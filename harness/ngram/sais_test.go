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
