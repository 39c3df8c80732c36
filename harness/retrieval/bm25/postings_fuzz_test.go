package bm25

import "testing"

// FuzzPostingsRoundTrip encodes a term's postings from fuzzed bytes (document gaps, tfs, norms and the
// number of documents) and decodes them again: every form (blocks, dense with a tf >= 2 bitmap or
// blocks, tfs escaped above 15) must give back exactly the postings, split into lists whose bounds hold,
// and a probe of each dense list must agree with its iteration.
func FuzzPostingsRoundTrip(f *testing.F) {
	f.Add([]byte{1, 1, 2, 1, 1, 1}, uint16(10))
	f.Add([]byte{0, 3, 0, 1, 0, 20, 5, 2, 0, 1, 0, 1, 0, 1, 0, 1}, uint16(40))
	f.Add(make([]byte, 600), uint16(700))
	f.Fuzz(func(t *testing.T, in []byte, extra uint16) {
		// Pairs of bytes: gap-1 and tf (0 means 1; values above 200 become large tfs).
		var docs, tfs []uint32
		d := uint32(0)
		for i := 0; i+1 < len(in); i += 2 {
			if len(docs) > 0 {
				d += uint32(in[i]%8) + 1
			} else {
				d = uint32(in[i] % 8)
			}
			tf := uint32(in[i+1]%4) + 1
			if in[i+1] > 200 {
				tf = uint32(in[i+1]) * 3
			}
			docs, tfs = append(docs, d), append(tfs, tf)
		}
		if len(docs) == 0 {
			return
		}
		n := int(d) + 1 + int(extra%64)
		norms := make([]uint8, n)
		for i := range norms {
			norms[i] = uint8(i*7 + int(extra))
		}
		K := normTable(0.9, 0.4, 20)
		rec, data, _ := encodeTerm(docs, tfs, norms, &K, nil, nil)
		ix := &Index{postings: data, meta: Meta{Docs: int64(n), K1: 0.9, B: 0.4}}
		ix.norms = norms
		ls, nl, err := ix.lists(termInfo{off: 0, df: rec.df, maxTf: rec.maxTf, bound: rec.bound, minNrm: rec.minNrm})
		if err != nil {
			t.Fatalf("lists: %v", err)
		}
		got := map[uint32]uint32{}
		for _, l := range ls[:nl] {
			var c cursor
			if err := c.init(data, l, n); err != nil {
				t.Fatal(err)
			}
			cnt := 0
			for c.next(); c.doc != noDoc; c.next() {
				if _, dup := got[c.doc]; dup {
					t.Fatalf("doc %d decoded twice", c.doc)
				}
				got[c.doc] = c.tf
				if v := float32(tfNorm(float64(c.tf), K[norms[c.doc]])); v > l.bound || v > float32(c.blockBound(c.block)) {
					t.Fatalf("doc %d tf %d: %v exceeds the list's bounds", c.doc, c.tf, v)
				}
				if l.kind != listBlocks {
					var p cursor
					p.init(data, l, n)
					if tf := p.probe(c.doc); tf != c.tf {
						t.Fatalf("probe of doc %d: tf %d, iteration says %d", c.doc, tf, c.tf)
					}
				}
				cnt++
			}
			if cnt != int(l.n) {
				t.Fatalf("list of kind %d: %d postings, header says %d", l.kind, cnt, l.n)
			}
		}
		if len(got) != len(docs) {
			t.Fatalf("%d postings decoded, %d encoded", len(got), len(docs))
		}
		for i, d := range docs {
			if got[d] != tfs[i] {
				t.Fatalf("doc %d: tf %d, encoded %d", d, got[d], tfs[i])
			}
		}
	})
}
