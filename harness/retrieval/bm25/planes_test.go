package bm25

import (
	"encoding/binary"
	"math/rand"
	"testing"
)

// TestPresencePlanes checks the planes of random bitmaps against counting each document's bits one by
// one, at aligned and unaligned starts (the last words included), and the bound table they index.
func TestPresencePlanes(t *testing.T) {
	r := rand.New(rand.NewSource(7))
	for trial := 0; trial < 200; trial++ {
		words := 1 + r.Intn(6)
		nbm := r.Intn(5)
		var ne []*queryTerm
		var bms [][]byte
		blocks := 0.0
		for i := 0; i < nbm+r.Intn(3); i++ {
			q := &queryTerm{ub: 0.5 + r.Float64()*3}
			if i < nbm {
				bm := make([]byte, 8*words)
				density := r.Float64()
				for d := 0; d < 64*words; d++ {
					if r.Float64() < density {
						bm[d/8] |= 1 << (d % 8)
					}
				}
				q.cur.dense, q.cur.bits, q.cur.words = true, bm, words
				bms = append(bms, bm)
			} else {
				blocks += q.ub
			}
			ne = append(ne, q)
		}
		top := 0.0
		for _, q := range ne[:nbm] {
			top = max(top, q.ub)
		}
		bound := 0.0
		for _, q := range ne {
			bound += q.ub
		}
		bound *= 0.9 // the prefix bound can be below the sum (a term's lists share one bound)
		var pp presencePlanes
		pp.set(ne, bound, 1)
		for d := uint32(0); d < uint32(64*words); d += uint32(1 + r.Intn(70)) {
			ones, twos := pp.at(d)
			for b := uint32(0); b < 64; b++ {
				doc := d + b
				n := 0
				for _, bm := range bms {
					if doc < uint32(64*words) && binary.LittleEndian.Uint64(bm[8*(doc/64):])>>(doc%64)&1 != 0 {
						n++
					}
				}
				if got := int(ones>>b&1) + int(twos>>b&1); got != min(n, 2) {
					t.Fatalf("trial %d, doc %d (from %d): planes say %d bitmaps, there are %d", trial, doc, d, got, n)
				}
				want := bound
				switch n {
				case 0:
					want = min(bound, blocks)
				case 1:
					want = min(bound, blocks+top)
				}
				if got := pp.bound(ones, twos, b); got != want {
					t.Fatalf("trial %d, doc %d: bound %v, want %v (%d bitmaps)", trial, doc, got, want, n)
				}
			}
		}
	}
}
