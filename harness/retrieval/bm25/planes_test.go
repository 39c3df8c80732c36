package bm25

import (
	"encoding/binary"
	"fmt"
	"math/rand"
	"strings"
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
		if want := words * int(b2u(nbm > 0)); pp.nwords != want || len(pp.ptrs) != nbm {
			t.Fatalf("trial %d: %d words through %d pointers, want %d through %d", trial, pp.nwords, len(pp.ptrs), want, nbm)
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

// TestPlanesMatchBruteForce runs the batch scorer, whose candidates the presence planes bound, against
// the exhaustive one: random queries of dense and block lists on a corpus whose size is not a multiple
// of 64, windows of 1, 7, 64, 100, 512 and 8,192 documents (narrower than a word: planes from an
// unaligned start; past the bitmaps' end), k from 1 to above the matches.
func TestPlanesMatchBruteForce(t *testing.T) {
	defer func(w int) { windowDocs = w }(windowDocs)
	r := rand.New(rand.NewSource(29))
	const n = 9001
	docs := randomCorpus(r, n, 300)
	for i := range docs {
		if i%11 == 0 {
			docs[i].Text += " often"
		}
		if i >= n-40 {
			docs[i].Text += " tail"
		}
	}
	ix, _ := build(t, docs, Options{Analyzer: AnalyzerStandard})
	z := rand.NewZipf(r, 1.05, 1, 400)
	p := Params{K1: 0.9, B: 0.4}
	for q := 0; q < 80; q++ {
		var terms []string
		for j := 0; j < 2+r.Intn(8); j++ {
			terms = append(terms, fmt.Sprintf("w%d", z.Uint64()))
		}
		terms = append(terms, []string{"often", "tail", "w1", "w2"}[r.Intn(4)])
		query := strings.Join(terms, " ")
		k := []int{1, 10, 100, 2 * n}[r.Intn(4)]
		for range 3 {
			windowDocs = []int{1, 7, 64, 100, 512, 8192}[r.Intn(6)]
			checkSearch(t, ix, p, query, k)
		}
	}
}
