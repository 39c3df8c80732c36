package bm25

import (
	"math/rand"
	"slices"
	"testing"
)

// refBits reads the width-b value at bit bit of src one bit at a time: the brute force the unpacking
// kernels are checked against.
func refBits(src []byte, bit int, b uint) uint32 {
	var v uint32
	for k := uint(0); k < b; k++ {
		p := bit + int(k)
		v |= uint32(src[p>>3]>>(p&7)&1) << k
	}
	return v
}

// TestUnpackKernels compares unpackGaps and unpackTfs (the AVX-512 kernels in the simd build, the scalar
// loops otherwise) with a bit-at-a-time reference on random data of every width 0 to 32, every bit
// alignment 0 to 7 and a byte offset, every run length 1 to 128 (partial last steps of 16), values at the
// width's edges (all ones, zero), and a buffer that ends just where the kernel may still read (an ok
// kernel must not fail there; one that says no must write nothing). Mutants of the AVX-512 kernels it
// catches (tried by hand): the prefix sum's 1-lane or 8-lane shift off by one lane, the bit offset masked
// with 3 for 7, each lane's bytes gathered one byte late, the target's hit one posting early, a full store
// on the partial last step, narrow cutting up to 26 bits, a wrong fill shift on the wide path.
func TestUnpackKernels(t *testing.T) {
	if !decodeKernelsRun {
		t.Skip("this CPU lacks AVX-512 VBMI/VBMI2")
	}
	rng := rand.New(rand.NewSource(28))
	for b := uint(0); b <= 32; b++ {
		for _, fill := range []string{"random", "ones", "zeros"} {
			buf := make([]byte, 4096)
			for i := range buf {
				switch fill {
				case "random":
					buf[i] = byte(rng.Intn(256))
				case "ones":
					buf[i] = 0xff
				}
			}
			for n := 1; n <= blockSize; n++ {
				for s := 0; s < 8; s++ {
					bit := 8*rng.Intn(40) + s
					base := uint32(rng.Uint64())
					if fill != "random" {
						base = 0
					}
					// The source ends right after the values, or with room to spare: the kernel either
					// reads inside it or says no.
					end := (bit+n*int(b)+7)/8 + rng.Intn(3)*64
					src := buf[:min(end, len(buf))]
					docs := make([]uint32, n+20)
					tfs := make([]uint32, n+20)
					for i := range docs {
						docs[i], tfs[i] = 0xdeadbeef, 0xdeadbeef
					}
					last, ok := unpackGaps(src, bit, b, n, base, docs)
					d := base
					for j := 0; j < n && ok; j++ {
						d += refBits(buf, bit+j*int(b), b)
						if docs[j] != d {
							t.Fatalf("unpackGaps b=%d n=%d bit=%d %s: doc %d = %d, want %d", b, n, bit, fill, j, docs[j], d)
						}
					}
					if ok && last != d {
						t.Fatalf("unpackGaps b=%d n=%d bit=%d %s: last %d, want %d", b, n, bit, fill, last, d)
					}
					// With a target: the count up to the first document at or after it.
					if ok && n > 0 {
						want := n // (noDoc as target means none: the kernels' contract)
						target := docs[rng.Intn(n)]
						if rng.Intn(4) == 0 {
							target = docs[n-1] + 1 // past the run (unless it wrapped): none reaches it
						}
						target = min(target, noDoc-1)
						for j := 0; j < n; j++ {
							if docs[j] >= target {
								want = j + 1
								break
							}
						}
						got := make([]uint32, n)
						k, okU := unpackGapsUntil(src, bit, b, n, base, target, got)
						if !okU || k != want || !slices.Equal(got[:k], docs[:k]) {
							t.Fatalf("unpackGapsUntil b=%d n=%d bit=%d %s target %d: %d (ok %v), want %d", b, n, bit, fill, target, k, okU, want)
						}
					}
					tb := bit + 8*((n*int(b)+7)/8)
					okT := unpackTfs(buf[:min(len(buf), (tb+n*int(b)+7)/8+rng.Intn(3)*64)], tb, b, n, tfs)
					for j := 0; j < n && okT; j++ {
						if want := refBits(buf, tb+j*int(b), b) + 1; tfs[j] != want {
							t.Fatalf("unpackTfs b=%d n=%d bit=%d %s: tf %d = %d, want %d", b, n, tb, fill, j, tfs[j], want)
						}
					}
					for j := n; j < len(docs); j++ {
						if (ok && docs[j] != 0xdeadbeef) || (okT && tfs[j] != 0xdeadbeef) {
							t.Fatalf("b=%d n=%d bit=%d %s: wrote past n at %d", b, n, bit, fill, j)
						}
					}
					if !ok {
						for j := range docs {
							if docs[j] != 0xdeadbeef {
								t.Fatalf("unpackGaps b=%d n=%d bit=%d: said no but wrote %d", b, n, bit, j)
							}
						}
					}
				}
			}
		}
	}
}

// TestUnpackKernelsRoomy checks that with room after the values (as inside postings.bin, where the caller
// passes data up to its capacity) the kernels do not refuse: otherwise the simd build would silently run
// the scalar loops and its figures would measure nothing.
func TestUnpackKernelsRoomy(t *testing.T) {
	if !decodeKernelsRun {
		t.Skip("this CPU lacks AVX-512 VBMI/VBMI2")
	}
	buf := make([]byte, 1024)
	docs := make([]uint32, blockSize)
	for b := uint(1); b <= 32; b++ {
		if _, ok := unpackGaps(buf, 7, b, blockSize, 0, docs); !ok {
			t.Errorf("unpackGaps refused width %d with %d bytes", b, len(buf))
		}
		if !unpackTfs(buf, 7, b, blockSize, docs) {
			t.Errorf("unpackTfs refused width %d with %d bytes", b, len(buf))
		}
	}
}
