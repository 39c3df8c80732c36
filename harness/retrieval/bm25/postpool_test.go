package bm25

import "testing"

// TestPostPool checks the slab pool: a slab holds what was asked for with bounded waste, a returned slab
// is handed out again, distinct slabs never share memory, and requests beyond the largest class come
// from the heap.
func TestPostPool(t *testing.T) {
	var p postPool
	defer p.release()
	for _, n := range []int{1, 4096, 4097, 6144, 6145, 20000, 1 << 20, slabSizes[len(slabSizes)-1]} {
		s := p.get(n)
		if cap(s.ids) < n || cap(s.tfs) < n || len(s.ids) != 0 || len(s.tfs) != 0 {
			t.Fatalf("get(%d): cap %d/%d, len %d/%d", n, cap(s.ids), cap(s.tfs), len(s.ids), len(s.tfs))
		}
		if n > 4096 && cap(s.ids) > n+n/2 {
			t.Fatalf("get(%d): cap %d wastes more than half", n, cap(s.ids))
		}
		p.put(s)
	}
	if s := p.get(slabSizes[len(slabSizes)-1] + 1); s.class != -1 {
		t.Fatalf("a request beyond the largest class got class %d, want the heap (-1)", s.class)
	}
	// Slabs in use at the same time are disjoint: fill each with its own number and check.
	var live []slab
	for i := 0; i < 300; i++ {
		s := p.get(5000)
		s.ids = s.ids[:5000]
		for j := range s.ids {
			s.ids[j] = int32(i)
		}
		live = append(live, s)
	}
	for i, s := range live {
		for _, v := range s.ids[:5000] {
			if v != int32(i) {
				t.Fatalf("slab %d was overwritten by slab %d", i, v)
			}
		}
	}
	first := &live[0].ids[:1][0]
	p.put(live[0])
	if s := p.get(5000); &s.ids[:1][0] != first {
		t.Fatalf("a returned slab was not reused")
	}
}
