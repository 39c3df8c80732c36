package bm25

import "testing"

func TestNorms(t *testing.T) {
	cases := []struct {
		n    uint32
		norm uint8
		dec  uint32
		why  string
	}{
		{0, 0, 0, "zero is exact"},
		{23, 23, 23, "below 24 exact"},
		{24, 24, 24, "first encoded value"},
		{31, 31, 31, "subnormal range of int4 still exact"},
		{100, 57, 96, "a 100-token passage is scored as 96 tokens"},
		{1<<31 - 1, 255, 24 + int4ToLongU(231), "largest length maps to 255"},
	}
	for _, tc := range cases {
		if got := lengthToNorm(tc.n); got != tc.norm {
			t.Errorf("lengthToNorm(%d) = %d, want %d (%s)", tc.n, got, tc.norm, tc.why)
		}
		if got := normToLength(tc.norm); got != tc.dec {
			t.Errorf("normToLength(%d) = %d, want %d (%s)", tc.norm, got, tc.dec, tc.why)
		}
	}
	// Monotone, and decoding rounds down.
	prev := uint8(0)
	for n := uint32(0); n < 1<<20; n++ {
		b := lengthToNorm(n)
		if b < prev {
			t.Fatalf("norm(%d)=%d < norm(%d)=%d", n, b, n-1, prev)
		}
		if d := normToLength(b); d > n {
			t.Fatalf("decode(norm(%d)) = %d > %d", n, d, n)
		}
		prev = b
	}
	for b := 0; b < 256; b++ {
		if lengthToNorm(normToLength(uint8(b))) != uint8(b) {
			t.Fatalf("norm %d does not round-trip", b)
		}
	}
}

func int4ToLongU(i uint32) uint32 { return uint32(int4ToLong(i)) }
