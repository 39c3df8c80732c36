package bm25

// termIndex maps terms, kept in a list, to their index in the list. The accumulator uses one for the
// global terms (termList), with hashes the workers computed in parallel (newHash), and each worker one
// for its local terms, with the same hash. The table stores only the hash and the index, comparing
// strings in the list on a hash match. Open addressing with linear probing, load <= 1/2.
type termIndex struct {
	slots []termSlot
	free  func() // releases slots when they are off the Go heap (hugeAlloc)
	mask  uint32
	n     int
}

type termSlot struct {
	hash uint32
	id1  uint32 // id+1; 0 marks an empty slot
}

func newTermIndex() *termIndex {
	return &termIndex{slots: make([]termSlot, 1<<10), mask: 1<<10 - 1}
}

// getOrAdd returns the id of term t with hash h (termHash), adding it to list with the next id when it is
// new; it returns the possibly grown list.
func (x *termIndex) getOrAdd(t string, h uint64, list []string) (uint32, []string) {
	h32 := uint32(h)
	for i := h32 & x.mask; ; i = (i + 1) & x.mask {
		s := &x.slots[i]
		if s.id1 == 0 {
			id := uint32(len(list))
			list = appendDoubling(list, t)
			s.hash, s.id1 = h32, id+1
			x.n++
			if 2*x.n > len(x.slots) {
				x.grow()
			}
			return id, list
		}
		if s.hash == h32 && list[s.id1-1] == t {
			return s.id1 - 1, list
		}
	}
}

// release frees the slots; the index must not be used afterwards.
func (x *termIndex) release() {
	if x.free != nil {
		x.free()
	}
	*x = termIndex{}
}

func (x *termIndex) grow() {
	old, oldFree := x.slots, x.free
	x.slots, x.free = hugeAlloc[termSlot](2 * len(old))
	x.mask = uint32(len(x.slots) - 1)
	for _, s := range old {
		if s.id1 == 0 {
			continue
		}
		for i := s.hash & x.mask; ; i = (i + 1) & x.mask {
			if x.slots[i].id1 == 0 {
				x.slots[i] = s
				break
			}
		}
	}
	if oldFree != nil {
		oldFree()
	}
}

// appendDoubling appends v to s, doubling the capacity when s is full. append grows large slices by about
// 1.25x, so a list that grows to millions of entries (the term lists, one per worker and the global one)
// is copied about five times over; doubling copies it about once.
func appendDoubling[T any](s []T, v T) []T {
	s = growTo(s, len(s)+1)
	s[len(s)-1] = v
	return s
}
