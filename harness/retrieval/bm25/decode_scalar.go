//go:build !(goexperiment.simd && amd64)

package bm25

// simdDecodeOK is false without the simd experiment on amd64: decode and addBlocks keep their scalar
// loops (the branches on it fold away).
const simdDecodeOK = false

// simdBuild says whether this binary was built with the simd experiment on amd64 (Kernels).
const simdBuild = false

// decodeKernelsRun says whether the unpacking kernels can run here: the scalar versions run anywhere.
const decodeKernelsRun = true

// unpackGaps decodes n (> 0) document gaps of width b (at most 32 bits) bit-packed from bit bit of src
// into dst (at least n long) as documents, base plus the running sum, and returns the last. The scalar
// version of the AVX-512 kernel (decode_simd.go), for its tests: it never fails (ok is true).
func unpackGaps(src []byte, bit int, b uint, n int, base uint32, dst []uint32) (last uint32, ok bool) {
	k, ok := unpackGapsUntil(src, bit, b, n, base, noDoc, dst)
	return dst[k-1], ok
}

// unpackGapsUntil is unpackGaps that stops at the first document at or after target: it returns how
// many documents it decoded, up to and including that one (n when none is). The scalar version of the
// AVX-512 kernel, for its tests: it never fails.
func unpackGapsUntil(src []byte, bit int, b uint, n int, base, target uint32, dst []uint32) (k int, ok bool) {
	mask := uint64(1)<<b - 1
	d := base
	for j := range dst[:n] {
		d += uint32(load64(src, bit>>3) >> (bit & 7) & mask)
		dst[j] = d
		bit += int(b)
		if target != noDoc && d >= target { // noDoc: decode all n, as the AVX-512 kernel
			return j + 1, true
		}
	}
	return n, true
}

// unpackTfs decodes n (> 0) tf-1 values of width b (at most 32 bits; 0: every tf is 1) bit-packed from
// bit bit of src into dst (at least n long) as tfs. The scalar version of the AVX-512 kernel, for its
// tests: it never fails.
func unpackTfs(src []byte, bit int, b uint, n int, dst []uint32) bool {
	mask := uint64(1)<<b - 1
	for j := range dst[:n] {
		dst[j] = uint32(load64(src, bit>>3)>>(bit&7)&mask) + 1
		bit += int(b)
	}
	return true
}
