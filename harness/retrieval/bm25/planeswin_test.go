package bm25

import (
	"fmt"
	"math/rand"
	"strings"
	"testing"
	"unsafe"
)

func init() {
	if useSIMDPlanes { // only where it is on by default: TestPlanesAB turns every switch on but those named
		planesABFlags["simdplanes"] = &useSIMDPlanes
	}
	if useFlatScan {
		planesABFlags["flatscan"] = &useFlatScan
	}
}

// randomBitmaps returns nbm bitmaps of words words each, every one starting at a random byte offset
// inside a larger buffer (so that the kernel's loads are at every alignment), of random densities that
// include empty and full bitmaps, and the bitmaps' pointers.
func randomBitmaps(r *rand.Rand, nbm, words int) ([][]byte, []unsafe.Pointer) {
	var bms [][]byte
	var ptrs []unsafe.Pointer
	for range nbm {
		skew := r.Intn(64)
		buf := make([]byte, skew+8*words)
		bm := buf[skew:]
		density := []float64{0, 1, 0.01, 0.5, r.Float64()}[r.Intn(5)]
		for d := 0; d < 64*words; d++ {
			if r.Float64() < density {
				bm[d/8] |= 1 << (d % 8)
			}
		}
		bms = append(bms, bm)
		ptrs = append(ptrs, unsafe.Pointer(unsafe.SliceData(bm)))
	}
	return bms, ptrs
}

// TestPlanesWindowMatchesScalar is the property test of planesWindow (eight words a step in the SIMD
// build) against planesWindowScalar and against counting each document's bitmaps one by one: 0 to 9
// bitmaps, windows of 0 to 140 words (the 8-word steps and every length of the tail after them) from
// every word of the bitmaps (the last ones included), the bitmaps at every byte alignment, empty, full
// and random. Output slices longer than the window (whose extra words must stay as they were) catch a
// write past the window.
func TestPlanesWindowMatchesScalar(t *testing.T) {
	if !planesKernelRuns {
		t.Skip("this CPU lacks AVX-512")
	}
	r := rand.New(rand.NewSource(27))
	for trial := 0; trial < 3000; trial++ {
		nbm := r.Intn(10)
		words := 1 + r.Intn(150)
		n := r.Intn(min(words, 141) + 1)
		if trial%10 == 0 {
			n = min(words, 8*r.Intn(18)) // whole steps, no tail
		}
		g := r.Intn(words - n + 1)
		bms, ptrs := randomBitmaps(r, nbm, words)
		const guard = 0xdead_beef_f00d_cafe
		mk := func() ([]uint64, []uint64) {
			o, tw := make([]uint64, n+3), make([]uint64, n+3)
			for i := range o {
				o[i], tw[i] = guard, guard
			}
			return o, tw
		}
		o1, t1 := mk()
		o2, t2 := mk()
		planesWindow(o1[:n], t1[:n], ptrs, uintptr(g)*8)
		planesWindowScalar(o2[:n], t2[:n], ptrs, uintptr(g)*8)
		for i := range o1 {
			if o1[i] != o2[i] || t1[i] != t2[i] {
				t.Fatalf("trial %d (%d bitmaps, %d words from word %d of %d): word %d: planesWindow ones %x twos %x, planesWindowScalar %x %x", trial, nbm, n, g, words, i, o1[i], t1[i], o2[i], t2[i])
			}
			if i >= n {
				if o1[i] != guard || t1[i] != guard {
					t.Fatalf("trial %d: word %d past the window's %d written", trial, i, n)
				}
				continue
			}
			for b := 0; b < 64; b++ {
				d := 64*(g+i) + b
				c := 0
				for _, bm := range bms {
					c += int(bm[d/8] >> (d % 8) & 1)
				}
				if got := int(o1[i]>>b&1) + int(t1[i]>>b&1); got != min(c, 2) {
					t.Fatalf("trial %d (%d bitmaps, %d words from word %d): document %d is in %d bitmaps, the planes say %d", trial, nbm, n, g, d, c, got)
				}
			}
		}
	}
}

// TestUnionOffsets is the property test of unionOffsets (VPCOMPRESSW in the SIMD build) against
// unionOffsetsScalar: unions of 0 to 140 words, empty, full, sparse and random words, the slack past the
// offsets left as it was but for at most 32 entries.
func TestUnionOffsets(t *testing.T) {
	if !flatKernelRuns {
		t.Skip("this CPU lacks AVX-512 VBMI2")
	}
	r := rand.New(rand.NewSource(31))
	for trial := 0; trial < 2000; trial++ {
		u := make([]uint64, r.Intn(141))
		for i := range u {
			switch r.Intn(5) {
			case 0:
			case 1:
				u[i] = ^uint64(0)
			case 2:
				u[i] = 1 << r.Intn(64)
			case 3:
				u[i] = r.Uint64() & r.Uint64() & r.Uint64()
			default:
				u[i] = r.Uint64()
			}
		}
		got, want := make([]uint16, 64*len(u)+40), make([]uint16, 64*len(u)+40)
		for i := range got {
			got[i], want[i] = 0xbeef, 0xbeef
		}
		n, m := unionOffsets(got[:64*len(u)+32], u), unionOffsetsScalar(want, u)
		if n != m || fmt.Sprint(got[:n]) != fmt.Sprint(want[:m]) {
			t.Fatalf("trial %d (%d words): %d offsets %v, want %d %v", trial, len(u), n, got[:n], m, want[:m])
		}
		for i := 64*len(u) + 32; i < len(got); i++ {
			if got[i] != 0xbeef {
				t.Fatalf("trial %d: offset slot %d past the slack written", trial, i)
			}
		}
	}
}

// TestPresencePlanesWindow checks presencePlanes.window against at per union word: bitmaps that end
// inside the window (words past them computed by at, and 0 where the union has no document), windows
// at every word and of every width up to 200 words, the words read through the pointers and
// bounds-checked (usePlanesDirect off), no bitmaps at all, and a window that does not start at a word
// (the scan then calls at, wok false). A union document past a bitmap's end is an index error, as at's.
func TestPresencePlanesWindow(t *testing.T) {
	defer func(s, d, f bool) { useSIMDPlanes, usePlanesDirect, useFlatScan = s, d, f }(useSIMDPlanes, usePlanesDirect, useFlatScan)
	useSIMDPlanes, useFlatScan = planesKernelRuns, flatKernelRuns
	r := rand.New(rand.NewSource(28))
	for trial := 0; trial < 600; trial++ {
		usePlanesDirect = trial%5 != 0
		words := 1 + r.Intn(200)
		nbm := r.Intn(7)
		_, ptrs := randomBitmaps(r, nbm, words)
		var ne []*queryTerm
		for i := range nbm {
			q := &queryTerm{ub: 0.5 + r.Float64()}
			q.cur.dense, q.cur.bits, q.cur.words = true, unsafe.Slice((*byte)(ptrs[i]), 8*words), words
			ne = append(ne, q)
		}
		ne = append(ne, &queryTerm{ub: 0.3}) // a block list
		var pp presencePlanes
		pp.set(ne, 2, 1)
		g := r.Intn(words)
		nw := 1 + r.Intn(200)
		u := make([]uint64, nw)
		for i := range u {
			if 64*(g+i) < 64*words && r.Intn(4) != 0 { // no document past the bitmaps' end
				u[i] = r.Uint64() & r.Uint64()
			}
		}
		lo := uint32(64 * g)
		if trial%7 == 0 {
			lo += uint32(1 + r.Intn(63))
		}
		pp.window(lo, u)
		if pp.wok != (lo%64 == 0) {
			t.Fatalf("trial %d: window from document %d: wok %v", trial, lo, pp.wok)
		}
		if !pp.wok {
			continue
		}
		want := make([]uint16, 64*nw)
		want = want[:unionOffsetsScalar(want, u)]
		if !pp.flat || pp.fi != 0 || fmt.Sprint(pp.foffs[:pp.fn]) != fmt.Sprint(want) {
			t.Fatalf("trial %d: union offsets (flat %v, from %d) %v, want %v", trial, pp.flat, pp.fi, pp.foffs[:pp.fn], want)
		}
		for i, x := range u {
			if x == 0 {
				continue
			}
			ones, twos := pp.at(lo + uint32(64*i))
			if pp.wones[i] != ones || pp.wtwos[i] != twos {
				t.Fatalf("trial %d (%d bitmaps of %d words, direct %v, window of %d words from word %d): word %d: window %x %x, at %x %x", trial, nbm, words, usePlanesDirect, nw, g, i, pp.wones[i], pp.wtwos[i], ones, twos)
			}
		}
		pp.set(ne, 2, 1)
		if pp.wok {
			t.Fatalf("trial %d: set left the window's planes valid", trial)
		}
	}
	// A union document past a bitmap's end: an index error (Search reports a corrupt index).
	short := make([]byte, 16)
	q := &queryTerm{ub: 1}
	q.cur.dense, q.cur.bits, q.cur.words = true, short, 2
	var pp presencePlanes
	pp.set([]*queryTerm{q}, 1, 1)
	defer func() {
		if recover() == nil {
			t.Fatal("a union document past the bitmap's end did not fail")
		}
	}()
	pp.window(0, []uint64{1, 0, 1 << 5})
}

// TestSIMDPlanesMatchBruteForce runs the batch scorer against the exhaustive one with the window's
// planes (useSIMDPlanes; in the build without the experiment, planesWindow a word at a time), scanned
// over the union's offsets (useFlatScan) or word by word, and without them: random queries of dense and block lists on a corpus whose size is not a multiple of 64, windows
// of 1, 7, 64, 100, 512 and 8,192 documents (narrower than a word: the scan calls at; not a multiple of
// 8 words: planesWindow's tail; past the bitmaps' end), k from 1 to above the matches.
func TestSIMDPlanesMatchBruteForce(t *testing.T) {
	defer func(s, f bool, w int) { useSIMDPlanes, useFlatScan, windowDocs = s, f, w }(useSIMDPlanes, useFlatScan, windowDocs)
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
		for _, c := range [][2]bool{{true, true}, {true, false}, {false, false}} {
			useSIMDPlanes, useFlatScan, windowDocs = c[0] && planesKernelRuns, c[1] && flatKernelRuns, []int{1, 7, 64, 100, 512, 8192}[r.Intn(6)]
			checkSearch(t, ix, p, query, k)
		}
	}
}
