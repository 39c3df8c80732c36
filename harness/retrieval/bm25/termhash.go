package bm25

import (
	"hash/maphash"
	"sort"
	"sync"
	"sync/atomic"
)

// termTable is an open-addressing hash table over the index's sorted dictionary, built in memory once
// the index has served hashAfter term lookups: a query term is found with one or two table slots and one comparison
// of term bytes instead of a binary search over all terms, whose 20-odd steps each read two cold cache
// lines of termoff.bin and terms.bin in a single pass over many queries. It is not stored in the index.
type termTable struct {
	lookups atomic.Int64 // lookups so far, until the table is built
	built   atomic.Bool  // the table is built (slots may still be nil: too many terms)
	once    sync.Once
	seed    maphash.Seed
	slots   []uint64 // per slot: the high 32 bits of the hash, then the term number plus one (0: empty)
	mask    uint64
}

// maxHashedTerms is the largest dictionary hashed; larger ones keep the binary search. It bounds the
// table's memory (8 bytes per slot, fewer than 3 slots per term: at most 256 MiB) and its one-off build
// time (about 0.15 s per million terms here), which the index's mapped files do not otherwise cost.
const maxHashedTerms = 1 << 24

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

// hashAfter is how many lookups go by binary search before the table is built: building it takes
// about 0.15 s at 1.2M terms (writes to a 16 MB table), which a single query would not win back.
const hashAfter = 64

// lookup finds a term in the dictionary: by binary search for the first hashAfter lookups, then by the
// hash table (built at that point), or by binary search when the dictionary is too large to hash.
func (ix *Index) lookup(t string) (int, bool) {
	tt := &ix.termTab
	if !tt.built.Load() {
		if tt.lookups.Add(1) <= hashAfter {
			return ix.lookupSorted(t)
		}
		tt.once.Do(func() {
			tt.build(ix)
			tt.built.Store(true)
		})
	}
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
