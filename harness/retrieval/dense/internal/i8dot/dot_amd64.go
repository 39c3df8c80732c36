package i8dot

import "golang.org/x/sys/cpu"

//go:noescape
func tileScoredVNNI(rows *byte, qg *int8, steps int, out *float32, scales *float32, corr *int32, thresh *float32, mask *uint16)

func tileScored(rows []byte, qg []int8, steps int, scales *[Rows]float32, corr *[Queries]int32, thresh *[Queries]float32, out *[Queries * Rows]float32, mask *[2 * Queries]uint16) {
	if hasVNNI {
		tileScoredVNNI(&rows[0], &qg[0], steps, &out[0], &scales[0], &corr[0], &thresh[0], &mask[0])
		return
	}
	TileScoredGo(rows, qg, steps, scales, corr, thresh, out, mask)
}

// hasVNNI: AVX-512 with VNNI (Intel Cascade Lake / Ice Lake and later, AMD Zen 4 and later).
var hasVNNI = cpu.X86.HasAVX512F && cpu.X86.HasAVX512VNNI

// Kernel names the kernel TileScored runs on this CPU.
func Kernel() string {
	if hasVNNI {
		return "AVX-512 VNNI (VPDPBUSD)"
	}
	return "pure Go (this CPU has no AVX-512 VNNI)"
}
