//go:build !amd64

package i8dot

// Kernel names the kernel TileScored runs on this CPU.
func Kernel() string { return "pure Go (no int8 kernel for this architecture)" }

func tileScored(rows []byte, qg []int8, steps int, scales *[Rows]float32, corr *[Queries]int32, thresh *[Queries]float32, out *[Queries * Rows]float32, mask *[2 * Queries]uint16) {
	TileScoredGo(rows, qg, steps, scales, corr, thresh, out, mask)
}
