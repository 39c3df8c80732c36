//go:build goexperiment.simd && amd64

package bm25

import (
	"math/bits"
	"simd/archsimd"
	"unsafe"
)

// useSIMDPlanes lets gatherTAAT compute the presence planes of a whole window before its scan
// (presencePlanes.window), eight bitmap words a step (planesWindow). On when the CPU has AVX-512
// (F, CD, BW, DQ, VL); off (a CPU without it, or BM25_AB_OFF=simdplanes in a test binary), the scan
// calls at per nonzero union word, the code of the build without the experiment.
var useSIMDPlanes = planesKernelRuns

// planesKernelRuns and flatKernelRuns say whether planesWindow and unionOffsets can run on this CPU
// (tests force the switches on only where they can).
var (
	planesKernelRuns = archsimd.X86.AVX512()
	flatKernelRuns   = planesKernelRuns && archsimd.X86.AVX512VBMI2()
)

// planesWindow computes the planes of the len(ones) bitmap words from byte off of the bitmaps at ptrs
// (each has them all): eight words (512 bits) a load and carry-save step, the rest a word at a time.
// Call it only when the CPU has AVX-512 (useSIMDPlanes checks).
func planesWindow(ones, twos []uint64, ptrs []unsafe.Pointer, off uintptr) {
	n := len(ones)
	twos = twos[:n]
	if len(ptrs) == 0 {
		clear(ones)
		clear(twos)
		return
	}
	p0, rest := ptrs[0], ptrs[1:]
	i := 0
	for ; i+8 <= n; i += 8 {
		o := archsimd.LoadUint64x8((*[8]uint64)(unsafe.Add(p0, off+uintptr(i)*8)))
		t := o.Xor(o)
		for _, p := range rest {
			x := archsimd.LoadUint64x8((*[8]uint64)(unsafe.Add(p, off+uintptr(i)*8)))
			t = t.Or(o.And(x))
			o = o.Or(x)
		}
		o.Store((*[8]uint64)(ones[i : i+8]))
		t.Store((*[8]uint64)(twos[i : i+8]))
	}
	if i < n {
		planesWindowScalar(ones[i:], twos[i:], ptrs, off+uintptr(i)*8)
	}
}

// useFlatScan lets the scan go over the offsets of the window's union documents (unionOffsets, scanFlat)
// instead of over its words. On when the CPU has AVX-512 VBMI2 (VPCOMPRESSW); off
// (BM25_AB_OFF=flatscan), the scan goes word by word (scanWordsRegs).
var useFlatScan = flatKernelRuns

// unionOffsets writes the offsets of the documents of the union words u, in order, into offs (which
// has room for 64*len(u)+32) and returns their number: per nonzero word, two steps of 32 bits, the
// offsets of a step's 32 documents compressed by its bits (VPCOMPRESSW) and stored whole (the slack),
// without a branch on the bits. Call it only when the CPU has AVX-512 VBMI2 (useFlatScan checks).
// Skipping the zero words (a quarter on NQ-open) and offsetting each word's vector from a broadcast of
// its first document (not from the previous word's vector) made it 1.6x as fast (BenchmarkUnionOffsets,
// 391 → 245 ns a window of 128 words).
func unionOffsets(offs []uint16, u []uint64) int {
	offs = offs[:64*len(u)+32]
	iota := archsimd.LoadUint16x32(&[32]uint16{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31})
	n := 0
	for wi, x := range u {
		if x == 0 {
			continue
		}
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
