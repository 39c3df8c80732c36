package bm25

import (
	"encoding/binary"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestSpillSort checks the spill's bucket sort against a brute-force stable sort of the same postings:
// the encoded run must list every term in increasing id order with its postings in document order, and
// the granule starts must point at the first term of each granule. The term counts cover a run with
// fewer terms than the head, exactly the head, a tail of one bucket per term (shift 0) and tails of
// several terms per bucket, with skewed (Zipf) and uniform ids.
func TestSpillSort(t *testing.T) {
	cases := []struct {
		nTerms, docs int
		zipf         bool
		why          string
	}{
		{1, 50, false, "one term"},
		{100, 300, true, "all terms in the head"},
		{spillHead, 2000, false, "exactly the head"},
		{spillHead + 1<<spillTailBits, 3000, false, "tail of one term per bucket (shift 0)"},
		{spillHead + 1<<spillTailBits + 1, 3000, false, "tail just past shift 0"},
		{200000, 5000, true, "skewed ids, shift > 0"},
		{200000, 5000, false, "uniform ids, shift > 0"},
	}
	for _, c := range cases {
		t.Run(c.why, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(uint64(c.nTerms), uint64(c.docs)))
			z := rand.NewZipf(rng, 1.1, 2, uint64(c.nTerms-1))
			b := &builder{memLeft: 1 << 40}
			defer b.pool.release()
			job := &runJob{nTerms: c.nTerms}
			var want []posting
			doc := uint32(1000)
			for len(job.batches) < 5 || doc < uint32(1000+c.docs) {
				bt := &batch{first: doc}
				bt.slab = b.pool.get(4096)
				bt.ids, bt.tfs = bt.slab.ids, bt.slab.tfs
				for d := 0; d < 1+rng.IntN(40) && len(bt.ids) < 3000; d++ {
					seen := map[int32]bool{}
					for k := 0; k < rng.IntN(60); k++ {
						var g int32
						if c.zipf {
							g = int32(z.Uint64())
						} else {
							g = int32(rng.IntN(c.nTerms))
						}
						if seen[g] {
							continue
						}
						seen[g] = true
						tf := uint32(1 + rng.IntN(3))
						if rng.IntN(50) == 0 {
							tf = uint32(rng.IntN(1 << 20))
						}
						bt.ids = append(bt.ids, g)
						bt.tfs = append(bt.tfs, tf)
						want = append(want, posting{term: uint32(g), doc: doc, tf: tf})
					}
					bt.ends = append(bt.ends, int32(len(bt.ids)))
					doc++
				}
				job.batches = append(job.batches, bt)
				job.n += len(bt.ids)
				bt.first = doc - uint32(len(bt.ends))
			}
			slices.SortStableFunc(want, func(x, y posting) int { return int(x.term) - int(y.term) })
			b.runs = make([]run, 1)
			sc := b.getScratch()
			defer sc.release()
			if err := b.spill(job, sc); err != nil {
				t.Fatal(err)
			}
			r := b.runs[0]
			defer func() {
				if r.free != nil {
					r.free()
				}
			}()
			// Decode the run.
			var got []posting
			p := r.data[:r.size]
			gotStarts := map[int]int64{}
			for len(p) > 0 {
				off := r.size - int64(len(p))
				term, k := binary.Uvarint(p)
				p = p[k:]
				n, k := binary.Uvarint(p)
				p = p[k:]
				if g := granOf(int(term)); gotStarts[g] == 0 && (len(got) == 0 || granOf(int(got[len(got)-1].term)) != g) {
					gotStarts[g] = off
				}
				doc := uint32(0)
				for i := uint64(0); i < n; i++ {
					gap, k := binary.Uvarint(p)
					p = p[k:]
					tf, k := binary.Uvarint(p)
					p = p[k:]
					doc += uint32(gap)
					got = append(got, posting{term: uint32(term), doc: doc, tf: uint32(tf)})
				}
			}
			if len(got) != len(want) {
				t.Fatalf("run holds %d postings, want %d", len(got), len(want))
			}
			for i := range got {
				if got[i] != want[i] {
					t.Fatalf("posting %d: got %+v, want %+v", i, got[i], want[i])
				}
			}
			// A granule with terms starts at its first term; one without starts where the next begins.
			for g, off := range gotStarts {
				if r.start(g) != off {
					t.Fatalf("granule %d starts at %d, want %d", g, r.start(g), off)
				}
			}
			for g := 1; g < len(r.starts); g++ {
				if r.starts[g] < r.starts[g-1] {
					t.Fatalf("granule starts decrease at %d", g)
				}
			}
		})
	}
}
