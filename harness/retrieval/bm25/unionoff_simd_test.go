//go:build goexperiment.simd && amd64

package bm25

import (
	"math/bits"
	"math/rand"
	"simd/archsimd"
	"testing"
)

// unionOffsetsChain is unionOffsets without the branch over zero words and with each step's vector
// from the previous one's (+32), as first written: 1.6x as slow (a variant for BenchmarkUnionOffsets).
func unionOffsetsChain(offs []uint16, u []uint64) int {
	offs = offs[:64*len(u)+32]
	v := archsimd.LoadUint16x32(&[32]uint16{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31})
	step := archsimd.BroadcastUint16x32(32)
	n := 0
	for _, x := range u {
		lo, hi := uint32(x), uint32(x>>32)
		v.Compress(archsimd.Mask16x32FromBits(lo)).Store((*[32]uint16)(offs[n : n+32]))
		n += bits.OnesCount32(lo)
		v = v.Add(step)
		v.Compress(archsimd.Mask16x32FromBits(hi)).Store((*[32]uint16)(offs[n : n+32]))
		n += bits.OnesCount32(hi)
		v = v.Add(step)
	}
	return n
}

// unionOffsetsB is unionOffsets without the branch over zero words (a variant for BenchmarkUnionOffsets).
func unionOffsetsB(offs []uint16, u []uint64) int {
	offs = offs[:64*len(u)+32]
	iota := archsimd.LoadUint16x32(&[32]uint16{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31})
	n := 0
	for wi, x := range u {
		v := iota.Add(archsimd.BroadcastUint16x32(uint16(wi * 64)))
		lo, hi := uint32(x), uint32(x>>32)
		v.Compress(archsimd.Mask16x32FromBits(lo)).Store((*[32]uint16)(offs[n : n+32]))
		n += bits.OnesCount32(lo)
		v = v.Add(archsimd.BroadcastUint16x32(32))
		v.Compress(archsimd.Mask16x32FromBits(hi)).Store((*[32]uint16)(offs[n : n+32]))
		n += bits.OnesCount32(hi)
	}
	return n
}

// unionOffsetsH is unionOffsets with a branch over zero halves of words (a variant for
// BenchmarkUnionOffsets).
func unionOffsetsH(offs []uint16, u []uint64) int {
	offs = offs[:64*len(u)+32]
	iota := archsimd.LoadUint16x32(&[32]uint16{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31})
	n := 0
	for wi, x := range u {
		for h := 0; h < 2; h++ {
			m := uint32(x >> (32 * h))
			if m == 0 {
				continue
			}
			v := iota.Add(archsimd.BroadcastUint16x32(uint16(wi*64 + 32*h)))
			v.Compress(archsimd.Mask16x32FromBits(m)).Store((*[32]uint16)(offs[n : n+32]))
			n += bits.OnesCount32(m)
		}
	}
	return n
}

// unionOffsetsD is unionOffsets with 32-bit lanes (VPCOMPRESSD, AVX-512F), 16 bits of a word a step,
// narrowed to 16 bits by the store (a variant for BenchmarkUnionOffsets).
func unionOffsetsD(offs []uint16, u []uint64) int {
	offs = offs[:64*len(u)+32]
	iota := archsimd.LoadUint32x16(&[16]uint32{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15})
	step := archsimd.BroadcastUint32x16(16)
	v := iota
	n := 0
	for _, x := range u {
		for k := 0; k < 4; k++ {
			m := uint16(x >> (16 * k))
			v.Compress(archsimd.Mask32x16FromBits(m)).TruncateToUint16().Store((*[16]uint16)(offs[n : n+16]))
			n += bits.OnesCount16(m)
			v = v.Add(step)
		}
	}
	return n
}

// unionOffsetsFlatten is the scalar "flatten bits" decoding: eight offsets written per word whatever its
// bits, the rest in a loop (a variant for BenchmarkUnionOffsets).
func unionOffsetsFlatten(offs []uint16, u []uint64) int {
	offs = offs[:64*len(u)+32]
	n := 0
	for wi, x := range u {
		base := uint16(wi * 64)
		c := bits.OnesCount64(x)
		o := (*[8]uint16)(offs[n : n+8])
		for k := range 8 {
			o[k] = base + uint16(bits.TrailingZeros64(x))
			x &= x - 1
		}
		if c > 8 {
			for k := n + 8; x != 0; k++ {
				offs[k] = base + uint16(bits.TrailingZeros64(x))
				x &= x - 1
			}
		}
		n += c
	}
	return n
}

// TestUnionOffsetsVariants checks BenchmarkUnionOffsets's variants against unionOffsetsScalar.
func TestUnionOffsetsVariants(t *testing.T) {
	if !flatKernelRuns {
		t.Skip("this CPU lacks AVX-512 VBMI2")
	}
	r := rand.New(rand.NewSource(3))
	for trial := 0; trial < 500; trial++ {
		u := make([]uint64, 1+r.Intn(140))
		for i := range u {
			u[i] = []uint64{0, ^uint64(0), r.Uint64(), r.Uint64() & r.Uint64() & r.Uint64()}[r.Intn(4)]
		}
		want := make([]uint16, 64*len(u)+32)
		n := unionOffsetsScalar(want, u)
		for name, f := range map[string]func([]uint16, []uint64) int{"b": unionOffsetsB, "h": unionOffsetsH, "chain": unionOffsetsChain, "d": unionOffsetsD, "flatten": unionOffsetsFlatten, "w": unionOffsets} {
			got := make([]uint16, 64*len(u)+32)
			if m := f(got, u); m != n || fmtU16(got[:m]) != fmtU16(want[:n]) {
				t.Fatalf("%s trial %d: %d offsets, want %d", name, trial, m, n)
			}
		}
	}
}

// fmtU16 is s as a string, two bytes an offset, for comparisons.
func fmtU16(s []uint16) string {
	b := make([]byte, 0, 2*len(s))
	for _, x := range s {
		b = append(b, byte(x), byte(x>>8))
	}
	return string(b)
}

// BenchmarkUnionOffsets times unionOffsets (w16) and variants on windows of 128 words like NQ-open's
// (about 350 documents, a quarter of the words empty): chain (no branch, vectors chained by adds), b (no
// branch), h (a branch per half word), d32 (VPCOMPRESSD, 16 bits a step), flatten (scalar, eight offsets
// per word unconditionally). Per window.
func BenchmarkUnionOffsets(b *testing.B) {
	r := rand.New(rand.NewSource(5))
	const nw, nwin = 128, 256
	var us [][]uint64
	for range nwin { // NQ-open's windows: ~280 documents in 128 words, a quarter of the words empty, clustered
		u := make([]uint64, nw)
		for i := range u {
			if r.Intn(4) != 0 {
				for range 1 + r.Intn(4) + r.Intn(2)*r.Intn(6) {
					u[i] |= 1 << r.Intn(64)
				}
			}
		}
		us = append(us, u)
	}
	offs := make([]uint16, 64*nw+32)
	for name, f := range map[string]func([]uint16, []uint64) int{"w16": unionOffsets, "b": unionOffsetsB, "h": unionOffsetsH, "chain": unionOffsetsChain, "d32": unionOffsetsD, "flatten": unionOffsetsFlatten} {
		b.Run(name, func(b *testing.B) {
			n := 0
			for i := 0; i < b.N; i++ {
				n += f(offs, us[i%nwin])
			}
			b.ReportMetric(float64(n)/float64(b.N), "docs/window")
		})
	}
}
