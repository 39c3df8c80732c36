package i8dot

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestTileGoDefinition spot-checks the portable sums against their definition, including the largest
// sums (255 × ±127 over 1024 dimensions).
func TestTileGoDefinition(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, extreme := range []bool{false, true} {
		const steps = 256
		rows := make([]byte, 128*max(steps, 1))
		qg := make([]int8, 32*max(steps, 1))
		for i := range rows {
			rows[i] = byte(rng.IntN(256))
			if extreme {
				rows[i] = 255
			}
		}
		for i := range qg {
			qg[i] = int8(rng.IntN(255) - 127)
			if extreme {
				qg[i] = 127
			}
		}
		var out [Queries * Rows]int32
		TileGo(rows, qg, steps, &out)
		for q := 0; q < Queries; q++ {
			for r := 0; r < Rows; r++ {
				var s int32
				for j := 0; j < steps; j++ {
					for b := 0; b < 4; b++ {
						s += int32(rows[j*128+(r/16)*64+(r%16)*4+b]) * int32(qg[j*32+q*4+b])
					}
				}
				if out[q*Rows+r] != s {
					t.Fatalf("extreme=%v: query %d row %d: %d, definition %d", extreme, q, r, out[q*Rows+r], s)
				}
			}
		}
	}
}

func TestTileScoredMatchesGo(t *testing.T) {
	t.Logf("kernel: %s", Kernel())
	rng := rand.New(rand.NewPCG(5, 6))
	for trial := 0; trial < 60; trial++ {
		steps := 1 + rng.IntN(200)
		if trial < 2 {
			steps = trial // no steps: all sums zero
		}
		rows := make([]byte, 128*steps)
		qg := make([]int8, 32*steps)
		for i := range rows {
			rows[i] = byte(rng.IntN(256))
			if trial%10 == 9 {
				rows[i] = 255 // the largest sums
			}
		}
		for i := range qg {
			qg[i] = int8(rng.IntN(255) - 127)
			if trial%10 == 9 {
				qg[i] = -127
			}
		}
		var scales [Rows]float32
		var corr [Queries]int32
		var thresh [Queries]float32
		for i := range scales {
			scales[i] = float32(rng.Float64()) / 127
		}
		scales[3] = 0 // a zero vector
		for i := range corr {
			corr[i] = int32(rng.IntN(100000) - 50000)
			thresh[i] = float32(rng.NormFloat64()) * 1000
		}
		thresh[0] = float32(math.Inf(-1))
		var got, want [Queries * Rows]float32
		var gm, wm [2 * Queries]uint16
		TileScored(rows, qg, steps, &scales, &corr, &thresh, &got, &gm)
		TileScoredGo(rows, qg, steps, &scales, &corr, &thresh, &want, &wm)
		if got != want || gm != wm {
			t.Fatalf("trial %d (%d steps): kernel %s differs:\n got %v %v\nwant %v %v", trial, steps, Kernel(), got[:4], gm, want[:4], wm)
		}
		if wm[0] != 0xffff || wm[1] != 0xffff {
			t.Fatalf("threshold -Inf must pass every row: %v", wm[:2])
		}
	}
}
