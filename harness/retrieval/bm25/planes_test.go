package bm25

import (
	"encoding/binary"
	"math/rand"
	"testing"
)

// TestPresencePlanes checks the planes of random bitmaps against counting each document's bits one by
// one, at aligned and unaligned starts (the last words included), with the words read through the base
// pointers (usePlanesDirect) and bounds-checked, and the bound table they index.
func TestPresencePlanes(t *testing.T) {
	for _, direct := range []bool{true, false} {
		testPresencePlanes(t, direct)
	}
}

func testPresencePlanes(t *testing.T, direct bool) {
	defer func(v bool) { usePlanesDirect = v }(usePlanesDirect)
	usePlanesDirect = direct
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
		if want := words * int(b2u(direct && nbm > 0)); pp.nwords != want || len(pp.ptrs) != nbm*int(b2u(direct)) {
			t.Fatalf("trial %d (direct %v): %d words through %d pointers, want %d through %d", trial, direct, pp.nwords, len(pp.ptrs), want, nbm)
		}
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
					t.Fatalf("trial %d (direct %v), doc %d (from %d): planes say %d bitmaps, there are %d", trial, direct, doc, d, got, n)
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

// TestPresencePlanesUnevenBitmaps checks that bitmaps of different lengths (which a sound index does not
// have) are read through the pointers only as far as the shortest goes, and bounds-checked past it: a
// word past a bitmap's end is an index error (Search reports a corrupt index), never a read past it.
func TestPresencePlanesUnevenBitmaps(t *testing.T) {
	short, long := make([]byte, 16), make([]byte, 32)
	for i := range long {
		long[i] = 0xff
	}
	short[8] = 1
	ne := []*queryTerm{{ub: 1}, {ub: 2}}
	ne[0].cur.dense, ne[0].cur.bits = true, short
	ne[1].cur.dense, ne[1].cur.bits = true, long
	var pp presencePlanes
	pp.set(ne, 3, 1)
	if pp.nwords != 2 {
		t.Fatalf("nwords %d, want 2 (the shorter bitmap's words)", pp.nwords)
	}
	if ones, twos := pp.word(1); ones != ^uint64(0) || twos != 1 {
		t.Fatalf("word 1: ones %x twos %x, want all ones and 1", ones, twos)
	}
	defer func() {
		if recover() == nil {
			t.Fatal("word 2, past the shorter bitmap's end, did not fail")
		}
	}()
	pp.word(2)
}
