package bm25

import (
	"strings"
	"testing"
)

// TestKernels checks that Kernels names the path this build and CPU take.
func TestKernels(t *testing.T) {
	k := Kernels()
	switch {
	case !simdBuild && !strings.HasPrefix(k, "scalar (built without"):
		t.Errorf("plain build: Kernels() = %q", k)
	case simdBuild && (simdDecodeOK || useSIMDPlanes) && !strings.HasPrefix(k, "AVX-512"):
		t.Errorf("SIMD build on an AVX-512 CPU: Kernels() = %q", k)
	case simdBuild && !simdDecodeOK && !useSIMDPlanes && !strings.Contains(k, "lacks"):
		t.Errorf("SIMD build without AVX-512: Kernels() = %q", k)
	}
	t.Log(k)
}
