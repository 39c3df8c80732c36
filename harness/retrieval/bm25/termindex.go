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
// new.
func (x *termIndex) getOrAdd(t string, h uint64, list *chunkedStrings) uint32 {
	h32 := uint32(h)
	for i := h32 & x.mask; ; i = (i + 1) & x.mask {
		s := &x.slots[i]
		if s.id1 == 0 {
			id := list.add(t)
			s.hash, s.id1 = h32, id+1
			x.n++
			if 2*x.n > len(x.slots) {
				x.grow()
			}
			return id
		}
		if s.hash == h32 && list.at(s.id1-1) == t {
			return s.id1 - 1
		}
	}
}

// chunkedStrings is an append-only list of strings kept in chunks of 1<<strChunkBits, so that appending
// never copies: the vocabulary's term list, a []string grown by doubling, copied every string header
// again at each doubling, with a write barrier per pointer while the collector was marking (0.38 CPU-s of
// the 1M synthetic build, under the vocabulary lock).
type chunkedStrings struct {
	chunks [][]string
	n      uint32
}

const strChunkBits = 14

// add appends s and returns its index.
func (c *chunkedStrings) add(s string) uint32 {
	i := c.n
	if i>>strChunkBits == uint32(len(c.chunks)) {
		c.chunks = append(c.chunks, make([]string, 1<<strChunkBits))
	}
	c.chunks[i>>strChunkBits][i&(1<<strChunkBits-1)] = s
	c.n++
	return i
}

// at returns the string at index i (< len).
func (c *chunkedStrings) at(i uint32) string {
	return c.chunks[i>>strChunkBits][i&(1<<strChunkBits-1)]
}

// len returns the number of strings.
func (c *chunkedStrings) len() int { return int(c.n) }

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
