//go:build !(goexperiment.simd && amd64)

package bm25

import "unsafe"

// useSIMDPlanes lets gatherTAAT compute the presence planes of a whole window before its scan
// (presencePlanes.window). Without the SIMD build (GOEXPERIMENT=simd on amd64) it is off: computed
// a word at a time, the window's planes did not pay (query rounds 21 and 27), and the scan calls at
// per nonzero union word. A variable so that tests can run the window's path in this build too.
var useSIMDPlanes = false

// planesWindow computes the planes of the len(ones) bitmap words from byte off of the bitmaps at ptrs
// (each has them all): here a word at a time (planesWindowScalar).
func planesWindow(ones, twos []uint64, ptrs []unsafe.Pointer, off uintptr) {
	planesWindowScalar(ones, twos, ptrs, off)
}

// useFlatScan lets the scan go over the offsets of the window's union documents (unionOffsets, scanFlat)
// instead of over its words; off without the SIMD build.
var useFlatScan = false

// planesKernelRuns and flatKernelRuns say whether planesWindow and unionOffsets can run here: the
// scalar versions run anywhere.
const planesKernelRuns, flatKernelRuns = true, true

// unionOffsets writes the offsets of the documents of the union words u, in order, into offs (which
// has room for 64*len(u)+32) and returns their number: here a bit at a time (unionOffsetsScalar).
func unionOffsets(offs []uint16, u []uint64) int {
	return unionOffsetsScalar(offs, u)
}
