//go:build goexperiment.simd && amd64

package bm25

import (
	"simd/archsimd"
	"unsafe"
)

// useSIMDPlanes lets gatherTAAT compute the presence planes of a whole window before its scan
// (presencePlanes.window), eight bitmap words a step (planesWindow). On when the CPU has AVX-512
// (F, CD, BW, DQ, VL); off (a CPU without it, or BM25_AB_OFF=simdplanes in a test binary), the scan
// calls at per nonzero union word, the code of the build without the experiment.
var useSIMDPlanes = archsimd.X86.AVX512()

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
