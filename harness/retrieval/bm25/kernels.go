package bm25

import "strings"

// Kernels says which search kernels this binary runs, for reports and benchmark output: the AVX-512
// ones (simd/archsimd, in a binary built with GOEXPERIMENT=simd on amd64, on a CPU that has the
// instructions they need) or the scalar ones. Both give the same results.
func Kernels() string {
	if !simdBuild {
		return "scalar (built without GOEXPERIMENT=simd)"
	}
	var on []string
	if simdDecodeOK && useSIMDDecode {
		on = append(on, "block unpacking")
	}
	if useSIMDPlanes {
		on = append(on, "window planes")
	}
	if useFlatScan {
		on = append(on, "union offsets")
	}
	if len(on) == 0 {
		return "scalar (built with GOEXPERIMENT=simd, but this CPU lacks AVX-512 F/VBMI/VBMI2)"
	}
	return "AVX-512 (GOEXPERIMENT=simd): " + strings.Join(on, ", ")
}
