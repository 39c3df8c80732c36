package bm25

import (
	"bytes"
	"hash/maphash"
)

// tokTable maps token bytes to an int32, for the index builder's hottest loop. Keys of up to inlineKey
// bytes live inside the slot, so a lookup usually touches one cache line and the garbage collector never
// scans the table; longer keys fall back to a Go map. Open addressing with linear probing, load <= 1/2.
type tokTable struct {
	seed  maphash.Seed
	slots []tokSlot
	mask  uint64
	n     int
	long  map[string]int32
	free  func() // releases slots when they are not on the Go heap
}

const inlineKey = 23

type tokSlot struct {
	key  [inlineKey]byte
	klen uint8 // 0 marks an empty slot (tokens are never empty)
	hash uint32
	val  int32
}

func newTokTable() *tokTable {
	return &tokTable{seed: maphash.MakeSeed(), slots: make([]tokSlot, 1<<12), mask: 1<<12 - 1, long: map[string]int32{}}
}

func (t *tokTable) get(k []byte) (int32, bool) {
	if len(k) > inlineKey {
		v, ok := t.long[string(k)]
		return v, ok
	}
	h := maphash.Bytes(t.seed, k)
	h32 := uint32(h >> 32)
	for i := h & t.mask; ; i = (i + 1) & t.mask {
		s := &t.slots[i]
		if s.klen == 0 {
			return 0, false
		}
		if s.hash == h32 && int(s.klen) == len(k) && bytes.Equal(s.key[:s.klen], k) {
			return s.val, true
		}
	}
}

func (t *tokTable) put(k []byte, v int32) {
	if len(k) > inlineKey {
		t.long[string(k)] = v
		return
	}
	if 2*(t.n+1) > len(t.slots) {
		t.grow()
	}
	h := maphash.Bytes(t.seed, k)
	t.insert(k, uint32(h>>32), h, v)
}

func (t *tokTable) insert(k []byte, h32 uint32, h uint64, v int32) {
	for i := h & t.mask; ; i = (i + 1) & t.mask {
		s := &t.slots[i]
		if s.klen == 0 {
			copy(s.key[:], k)
			s.klen = uint8(len(k))
			s.hash = h32
			s.val = v
			t.n++
			return
		}
		if s.hash == h32 && int(s.klen) == len(k) && bytes.Equal(s.key[:s.klen], k) {
			s.val = v
			return
		}
	}
}

// release frees the table's memory; the table must not be used afterwards.
func (t *tokTable) release() {
	if t.free != nil {
		t.free()
	}
	t.slots, t.free, t.n, t.long = nil, nil, 0, nil
}

func (t *tokTable) grow() {
	old, oldFree := t.slots, t.free
	t.slots, t.free = allocSlots(2 * len(old))
	t.mask = uint64(len(t.slots) - 1)
	t.n = 0
	for i := range old {
		s := &old[i]
		if s.klen == 0 {
			continue
		}
		k := s.key[:s.klen]
		h := maphash.Bytes(t.seed, k)
		t.insert(k, s.hash, h, s.val)
	}
	if oldFree != nil {
		oldFree()
	}
}
