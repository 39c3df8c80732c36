package bm25

import (
	"bytes"
	"hash/maphash"
	"math"
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
	// hot is a small direct-mapped cache of recently found keys in front of slots. Token frequencies
	// are Zipfian: the few thousand most frequent tokens make up most lookups, and in hot they sit in
	// a few hundred KiB instead of being spread over the whole (often 100+ MB) table, one cache line
	// and one page each.
	hot []tokSlot
}

const hotBits = 13

const inlineKey = 23

type tokSlot struct {
	key  [inlineKey]byte
	klen uint8 // 0 marks an empty slot (tokens are never empty)
	hash uint32
	val  int32
}

func newTokTable() *tokTable {
	return &tokTable{seed: maphash.MakeSeed(), slots: make([]tokSlot, 1<<12), mask: 1<<12 - 1, long: map[string]int32{}, hot: make([]tokSlot, 1<<hotBits)}
}

func (t *tokTable) get(k []byte) (int32, bool) {
	if len(k) > inlineKey {
		v, ok := t.long[string(k)]
		return v, ok
	}
	h := maphash.Bytes(t.seed, k)
	h32 := uint32(h >> 32)
	hs := &t.hot[h>>(64-hotBits)]
	if hs.hash == h32 && int(hs.klen) == len(k) && bytes.Equal(hs.key[:hs.klen], k) {
		return hs.val, true
	}
	for i := h & t.mask; ; i = (i + 1) & t.mask {
		s := &t.slots[i]
		if s.klen == 0 {
			return 0, false
		}
		if s.hash == h32 && int(s.klen) == len(k) && bytes.Equal(s.key[:s.klen], k) {
			*hs = *s
			return s.val, true
		}
	}
}

// tokRef is a token of a document being analyzed: its span in the worker's buffer of lowercased tokens
// and, once looked up, its hash.
type tokRef struct {
	s, e uint32
	h    uint64
}

// tokUnknown marks a token that lookupAll did not find.
const tokUnknown = math.MinInt32

// lookupAll looks up every token of toks (spans of buf) and appends their values, or tokUnknown, to out.
// It hashes all tokens first and probes the table afterwards, so that the probes, whose cache misses
// dominate the lookups of a large table, are independent of each other and overlap in the processor.
func (t *tokTable) lookupAll(buf []byte, toks []tokRef, out []int32) []int32 {
	start := len(out)
	for i := range toks {
		tk := &toks[i]
		k := buf[tk.s:tk.e]
		if len(k) > inlineKey {
			v, ok := t.long[string(k)]
			if !ok {
				v = tokUnknown
			}
			out = append(out, v)
			continue
		}
		h := maphash.Bytes(t.seed, k)
		tk.h = h
		hs := &t.hot[h>>(64-hotBits)]
		if hs.hash == uint32(h>>32) && int(hs.klen) == len(k) && string(hs.key[:hs.klen]) == string(k) {
			out = append(out, hs.val)
			continue
		}
		out = append(out, tokUnknown)
	}
	res := out[start:]
	for i, v := range res {
		if v != tokUnknown {
			continue
		}
		tk := &toks[i]
		k := buf[tk.s:tk.e]
		if len(k) > inlineKey {
			continue
		}
		h32 := uint32(tk.h >> 32)
		for j := tk.h & t.mask; ; j = (j + 1) & t.mask {
			s := &t.slots[j]
			if s.klen == 0 {
				break
			}
			if s.hash == h32 && int(s.klen) == len(k) && string(s.key[:s.klen]) == string(k) {
				res[i] = s.val
				t.hot[tk.h>>(64-hotBits)] = *s
				break
			}
		}
	}
	return out
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
	if hs := &t.hot[h>>(64-hotBits)]; hs.hash == uint32(h>>32) && int(hs.klen) == len(k) && bytes.Equal(hs.key[:hs.klen], k) {
		hs.val = v
	}
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
	t.slots, t.free, t.n, t.long, t.hot = nil, nil, 0, nil, nil
}

func (t *tokTable) grow() {
	old, oldFree := t.slots, t.free
	t.slots, t.free = hugeAlloc[tokSlot](2 * len(old))
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
