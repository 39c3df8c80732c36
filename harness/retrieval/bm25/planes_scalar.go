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
