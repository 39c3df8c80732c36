package i8dot

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestTileMatchesGo checks the CPU's kernel against the portable loop on random and extreme bytes.
func TestTileMatchesGo(t *testing.T) {
	t.Logf("kernel: %s", Kernel())
	rng := rand.New(rand.NewPCG(1, 2))
	for _, tc := range []struct {
		name  string
		steps int
		fill  func(rows []byte, qg []int8)
	}{
		{"random, 768 dimensions", 192, func(rows []byte, qg []int8) {
			for i := range rows {
				rows[i] = byte(rng.IntN(256))
			}
			for i := range qg {
				qg[i] = int8(rng.IntN(255) - 127)
			}
		}},
		{"extremes: 255 × ±127 over 1024 dimensions (largest sums)", 256, func(rows []byte, qg []int8) {
			for i := range rows {
				rows[i] = 255
			}
			for i := range qg {
				qg[i] = 127
				if (i/4)%8 == 3 {
					qg[i] = -127
				}
			}
		}},
		{"one step", 1, func(rows []byte, qg []int8) {
			for i := range rows {
				rows[i] = byte(i)
			}
			for i := range qg {
				qg[i] = int8(i - 16)
			}
		}},
		{"no steps: all zero", 0, func([]byte, []int8) {}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rows := make([]byte, 128*max(tc.steps, 1))
			qg := make([]int8, 32*max(tc.steps, 1))
			tc.fill(rows, qg)
			var got, want [Queries * Rows]int32
			for i := range got {
				got[i] = 12345 // must be overwritten
			}
			Tile(rows, qg, tc.steps, &got)
			TileGo(rows, qg, tc.steps, &want)
			if got != want {
				t.Fatalf("kernel %s differs from the Go loop:\n got %v\nwant %v", Kernel(), got[:8], want[:8])
			}
			// Spot-check the definition for one (query, row).
			q, r := 5, 21
			var s int32
			for j := 0; j < tc.steps; j++ {
				for b := 0; b < 4; b++ {
					s += int32(rows[j*128+(r/16)*64+(r%16)*4+b]) * int32(qg[j*32+q*4+b])
				}
			}
			if want[q*Rows+r] != s {
				t.Fatalf("Go loop %d, definition %d", want[q*Rows+r], s)
			}
		})
	}
}

func TestTileScoredMatchesGo(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for trial := 0; trial < 50; trial++ {
		steps := 1 + rng.IntN(200)
		rows := make([]byte, 128*steps)
		qg := make([]int8, 32*steps)
		for i := range rows {
			rows[i] = byte(rng.IntN(256))
		}
		for i := range qg {
			qg[i] = int8(rng.IntN(255) - 127)
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
