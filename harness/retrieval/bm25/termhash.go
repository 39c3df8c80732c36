package bm25

import (
	"hash/maphash"
	"sort"
	"sync"
)

// termTable is an open-addressing hash table over the index's sorted dictionary, built in memory on the
// first search (query round 9): a query term is found with one or two table slots and one comparison
// of term bytes instead of a binary search over all terms, whose 20-odd steps each read two cold cache
// lines of termoff.bin and terms.bin in a single pass over many queries. It is not stored in the index.
type termTable struct {
	once  sync.Once
	seed  maphash.Seed
	slots []uint64 // per slot: the high 32 bits of the hash, then the term number plus one (0: empty)
	mask  uint64
}

// maxHashedTerms is the largest dictionary hashed (term numbers must fit in 32 bits); larger ones keep
// the binary search.
const maxHashedTerms = 1<<32 - 2

// build fills the table with the terms of ix.
func (tt *termTable) build(ix *Index) {
	if ix.nTerms == 0 || ix.nTerms > maxHashedTerms {
		return
	}
	size := 1
	for size < ix.nTerms+ix.nTerms/2 {
		size *= 2
	}
	tt.seed = maphash.MakeSeed()
	tt.slots = make([]uint64, size)
	tt.mask = uint64(size - 1)
	for i := 0; i < ix.nTerms; i++ {
		h := maphash.Bytes(tt.seed, ix.term(i))
		for s := h & tt.mask; ; s = (s + 1) & tt.mask {
			if tt.slots[s] == 0 {
				tt.slots[s] = h>>32<<32 | uint64(i+1)
				break
			}
		}
	}
}

// lookup finds a term in the dictionary: by the hash table (built on the first call), or by binary
// search when there is none.
func (ix *Index) lookup(t string) (int, bool) {
	tt := &ix.termTab
	tt.once.Do(func() { tt.build(ix) })
	if tt.slots == nil {
		return ix.lookupSorted(t)
	}
	h := maphash.String(tt.seed, t)
	tag := h >> 32
	for s := h & tt.mask; ; s = (s + 1) & tt.mask {
		e := tt.slots[s]
		if e == 0 {
			return 0, false
		}
		if e>>32 == tag {
			if i := int(uint32(e)) - 1; string(ix.term(i)) == t {
				return i, true
			}
		}
	}
}

// lookupSorted finds a term by binary search in the sorted dictionary.
func (ix *Index) lookupSorted(t string) (int, bool) {
	i := sort.Search(ix.nTerms, func(i int) bool { return string(ix.term(i)) >= t })
	if i < ix.nTerms && string(ix.term(i)) == t {
		return i, true
	}
	return 0, false
}
