package bm25

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"math/rand"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/ragbench/ragbench/harness/corpus"
)

// formCounts counts the terms of an index by posting form.
type formCounts struct{ blocks, denseHiBits, denseHiBlocks, denseOnesOnly, escapes int }

func countForms(t *testing.T, ix *Index) formCounts {
	t.Helper()
	var f formCounts
	for i := 0; i < ix.nTerms; i++ {
		inf := ix.info(i)
		ls, nl, err := ix.lists(inf)
		if err != nil {
			t.Fatalf("term %q: %v", ix.term(i), err)
		}
		switch {
		case ix.postings[inf.off] == kindBlocks:
			f.blocks++
		case nl == 1 && ls[0].kind == listOnes:
			f.denseOnesOnly++
		case ls[0].kind == listDense:
			f.denseHiBits++
			f.escapes += len(ls[0].esc) / escEntrySize
		default:
			f.denseHiBlocks++
		}
	}
	return f
}

// TestPostingForms checks that the corpus of the property tests exercises every posting form: block
// lists, dense terms whose tf >= 2 postings are a bitmap (with tfs over 15 escaped) or block lists, and
// dense terms with only tf = 1. Without this the property tests could pass without reaching a path.
func TestPostingForms(t *testing.T) {
	docs := randomCorpus(rand.New(rand.NewSource(1)), 3000, 2000)
	docs = append(docs, corpus.Document{ID: "ones", Text: strings.Repeat("onlyonce ", 1)})
	for i := 0; i < 200; i++ {
		docs = append(docs, corpus.Document{ID: fmt.Sprintf("o%d", i), Text: "onlyonce"})
	}
	ix, _ := build(t, docs, Options{Analyzer: AnalyzerStandard, MemoryBudget: 40000})
	f := countForms(t, ix)
	t.Logf("%+v", f)
	if f.blocks == 0 || f.denseHiBits == 0 || f.denseHiBlocks == 0 || f.denseOnesOnly == 0 || f.escapes == 0 {
		t.Fatalf("forms %+v: want every form present", f)
	}
}

// TestDenseMatchesBruteForce is the property test for queries made mostly of dense terms, where MaxScore
// probes bitmaps, treats a term as two lists and bounds windows by the directory: top k equals exhaustive
// scoring, for k below and above the number of matches, default and other parameters.
func TestDenseMatchesBruteForce(t *testing.T) {
	r := rand.New(rand.NewSource(7))
	docs := randomCorpus(r, 3000, 300) // a small vocabulary: most query terms are dense
	ix, _ := build(t, docs, Options{Analyzer: AnalyzerStandard})
	z := rand.NewZipf(r, 1.05, 1, 400)
	for _, p := range []Params{{K1: 0.9, B: 0.4}, {K1: 0.9, B: 0.4, ExactLength: true}, {K1: 1.2, B: 0.75}} {
		if err := ix.SetParams(p); err != nil {
			t.Fatal(err)
		}
		for q := 0; q < 150; q++ {
			var terms []string
			for j := 0; j < 1+r.Intn(10); j++ {
				terms = append(terms, fmt.Sprintf("w%d", z.Uint64()))
			}
			query := strings.Join(terms, " ")
			k := []int{1, 3, 10, 100, 5000}[r.Intn(5)]
			checkSearch(t, ix, p, query, k)
		}
	}
}

// TestTies: many documents with exactly equal scores, in dense and block lists; the top k are the
// lowest ordinals among the tied, and k above the number of matches returns every match.
func TestTies(t *testing.T) {
	var docs []corpus.Document
	for i := 0; i < 3000; i++ {
		text := "alpha beta"
		switch {
		case i%3 == 0:
			text = "alpha alpha beta" // tf 2 of a dense term
		case i%50 == 7:
			text = "gamma beta" // a rarer term
		}
		docs = append(docs, corpus.Document{ID: fmt.Sprint(i), Text: text})
	}
	ix, _ := build(t, docs, Options{Analyzer: AnalyzerStandard})
	cases := []struct {
		query string
		k     int
		why   string
	}{
		{"alpha", 10, "ties among tf 2 documents: the first ten multiples of 3"},
		{"alpha beta", 25, "two dense terms, tied sums"},
		{"gamma", 100, "k above the 60 matches"},
		{"gamma alpha", 4000, "k above all matches"},
		{"beta", 1, "every document ties"},
	}
	for _, tc := range cases {
		got, err := ix.Search(context.Background(), tc.query, tc.k)
		if err != nil {
			t.Fatal(err)
		}
		want, _ := ix.BruteForce(tc.query, tc.k)
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("%q k=%d (%s):\n got %v\nwant %v", tc.query, tc.k, tc.why, got, want)
		}
	}
	top, _ := ix.Search(context.Background(), "alpha", 10)
	for i, s := range top {
		if s.Doc != uint32(3*i) {
			t.Fatalf("alpha: rank %d is doc %d, want %d (ties go to the lower ordinal)", i, s.Doc, 3*i)
		}
	}
}

// TestOldFormatRefused: an index of another layout version is refused with a message saying to rebuild.
func TestOldFormatRefused(t *testing.T) {
	docs := randomCorpus(rand.New(rand.NewSource(5)), 100, 50)
	_, dir := build(t, docs, Options{})
	p := filepath.Join(dir, fileMeta)
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	m["version"] = 2 // older layouts (v3 had varint blocks) are refused alike
	b, _ = json.Marshal(m)
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = Open(dir)
	if err == nil || !strings.Contains(err.Error(), "format version 2, this program reads 4; rebuild the index") {
		t.Fatalf("err = %v, want a refusal of version 2", err)
	}
}

// TestCorruptDense: a flipped bit in a dense term's bitmap or rank directory, opened without checksums, is caught by Verify,
// and searches return (an error or results) rather than crash.
func TestCorruptDense(t *testing.T) {
	docs := randomCorpus(rand.New(rand.NewSource(6)), 2000, 100)
	ix, dir := build(t, docs, Options{Analyzer: AnalyzerStandard})
	var at []int64 // file offsets of bitmap and directory bytes of dense lists
	for i := 0; i < ix.nTerms; i++ {
		ls, nl, _ := ix.lists(ix.info(i))
		for _, l := range ls[:nl] {
			if l.kind != listBlocks {
				at = append(at, int64(cap(ix.postings)-cap(l.bits))+3) // a bitmap byte
			}
			if l.kind == listDense {
				at = append(at, int64(cap(ix.postings)-cap(l.dir))+dirEntrySize) // a rank
			}
		}
	}
	if len(at) == 0 {
		t.Fatal("no dense term")
	}
	ix.Close()
	for _, off := range at[:min(len(at), 12)] {
		p := filepath.Join(dir, filePostings)
		orig, _ := os.ReadFile(p)
		flip(t, p, off)
		ix, err := OpenWith(dir, OpenOptions{SkipChecksums: true})
		if err != nil {
			t.Fatal(err)
		}
		if err := ix.Verify(); err == nil {
			t.Errorf("offset %d: Verify passed a flipped bit", off)
		}
		for _, q := range []string{"w0 w1 w2", "w3", "w1 w5 w9 w20"} {
			ix.Search(context.Background(), q, 10) // must not crash
		}
		ix.Close()
		os.WriteFile(p, orig, 0o644)
	}
}

// TestBlockWidths: bit-packed blocks at every gap and tf width from 0 to 32 bits, including the largest
// values, decode to what was encoded, by iteration and by advance to each posting and between postings:
// decode's loads without an end test (every block but the last) and its tested loads (the last block,
// whose loads reach past the list's end).
func TestBlockWidths(t *testing.T) {
	for w := 0; w <= 32; w++ {
		t.Run(fmt.Sprintf("%d", w), func(t *testing.T) {
			var docs, tfs []uint32
			d := uint32(0)
			top := uint64(1)<<w - 1 // the largest value of w bits
			for i := 0; len(docs) < 3*blockSize+5; i++ {
				g := uint32(1)
				if i%blockSize == 5 && w > 0 {
					g = uint32(top >> max(0, w-30)) // one gap of w bits per block (30 for w > 30: docs stay below 2^32)
				}
				if uint64(d)+uint64(g) >= 1<<32-1 {
					break
				}
				if len(docs) > 0 {
					d += g
				}
				tf := uint32(1)
				if i%blockSize == 7 {
					tf = uint32(top) + 1 // tf-1 of w bits; wraps to 0 for w = 32, so use the largest tf
					if w == 32 {
						tf = math.MaxUint32
					}
				}
				docs, tfs = append(docs, d), append(tfs, tf)
			}
			n := int(docs[len(docs)-1]) + 1
			// The list as encodeBlocks lays it out (skip entries, then blocks), without the norms that
			// its bounds need: the bounds are not read here.
			nb := (len(docs) + blockSize - 1) / blockSize
			data := make([]byte, nb*skipEntrySize)
			prev := uint32(0)
			for b := 0; b < nb; b++ {
				s, e := b*blockSize, min((b+1)*blockSize, len(docs))
				data = appendBlock(data, docs[s:e], tfs[s:e], prev)
				prev = docs[e-1]
				binary.LittleEndian.PutUint32(data[b*skipEntrySize:], prev)
				binary.LittleEndian.PutUint32(data[b*skipEntrySize+4:], uint32(len(data)-nb*skipEntrySize))
			}
			l := termList{kind: listBlocks, off: 0, n: uint32(len(docs))}
			var c cursor
			if err := c.init(data, l, n); err != nil {
				t.Fatal(err)
			}
			i := 0
			for c.next(); c.doc != noDoc; c.next() {
				if i >= len(docs) || c.doc != docs[i] || c.tf != tfs[i] {
					t.Fatalf("posting %d: got doc %d tf %d, want doc %d tf %d", i, c.doc, c.tf, docs[i], tfs[i])
				}
				i++
			}
			if i != len(docs) {
				t.Fatalf("%d postings decoded, want %d", i, len(docs))
			}
			for step := 1; step <= 7; step += 3 {
				c.init(data, l, n)
				c.next()
				for j := 0; j < len(docs); j += step {
					target := docs[j]
					if j > 0 && step > 1 && docs[j]-docs[j-1] > 1 {
						target = docs[j-1] + 1 // between two postings: lands on docs[j]
					}
					c.advance(target)
					if c.doc != docs[j] || c.tf != tfs[j] {
						t.Fatalf("advance(%d): got doc %d tf %d, want doc %d tf %d", target, c.doc, c.tf, docs[j], tfs[j])
					}
				}
			}
		})
	}
}
