// Package i8dot is the int8 kernel of dense search: inner products of 8 quantised queries with a block
// of 32 quantised rows, through AVX-512 VNNI where the CPU has it and a portable Go loop otherwise. Both
// compute the same integers. It is its own package because Go assembly and cgo (dense's OpenBLAS build)
// cannot share one.
package i8dot

// Rows and Queries are the tile's size: one call scores Queries queries against Rows rows.
const (
	Rows    = 32
	Queries = 8
)

// TileGo sets out[q*Rows+r] to Σ_j Σ_b rows[j*128 + (r/16)*64 + (r%16)*4 + b] × qg[j*32 + q*4 + b]
// over steps groups j of 4 dimensions: rows holds unsigned bytes (the block layout of vectors.u8), qg
// signed bytes (each step: the 4 bytes of query 0, then of query 1, ...). It is the definition that the
// kernel of TileScored is tested against.
func TileGo(rows []byte, qg []int8, steps int, out *[Queries * Rows]int32) {
	*out = [Queries * Rows]int32{}
	for j := 0; j < steps; j++ {
		blk := rows[j*128 : j*128+128]
		qs := qg[j*32 : j*32+32]
		for r := 0; r < Rows; r++ {
			b := blk[(r/16)*64+(r%16)*4:]
			u0, u1, u2, u3 := int32(b[0]), int32(b[1]), int32(b[2]), int32(b[3])
			for q := 0; q < Queries; q++ {
				x := qs[q*4:]
				out[q*Rows+r] += u0*int32(x[0]) + u1*int32(x[1]) + u2*int32(x[2]) + u3*int32(x[3])
			}
		}
	}
}

// TileScored computes TileGo's sums (through AVX-512 VNNI where the CPU has it), then the scoring of
// dense search: out[q*Rows+r] = scales[r] ×
// float32(sum − corr[q]), and bit r%16 of mask[2q + r/16] set when that score exceeds thresh[q], so that
// the caller looks only at rows that can enter a query's top list.
func TileScored(rows []byte, qg []int8, steps int, scales *[Rows]float32, corr *[Queries]int32, thresh *[Queries]float32, out *[Queries * Rows]float32, mask *[2 * Queries]uint16) {
	if steps <= 0 {
		TileScoredGo(rows, qg, 0, scales, corr, thresh, out, mask)
		return
	}
	_, _ = rows[128*steps-1], qg[32*steps-1] // the kernel reads this far
	tileScored(rows, qg, steps, scales, corr, thresh, out, mask)
}

// TileScoredGo is the portable form of TileScored (the same float32 operations, so the same results).
func TileScoredGo(rows []byte, qg []int8, steps int, scales *[Rows]float32, corr *[Queries]int32, thresh *[Queries]float32, out *[Queries * Rows]float32, mask *[2 * Queries]uint16) {
	var sums [Queries * Rows]int32
	if steps > 0 {
		TileGo(rows, qg, steps, &sums)
	}
	*mask = [2 * Queries]uint16{}
	for q := 0; q < Queries; q++ {
		for r := 0; r < Rows; r++ {
			v := scales[r] * float32(sums[q*Rows+r]-corr[q])
			out[q*Rows+r] = v
			if v > thresh[q] {
				mask[2*q+r/16] |= 1 << (r % 16)
			}
		}
	}
}
