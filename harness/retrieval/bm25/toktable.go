package bm25

import (
	"bytes"
	"hash/maphash"
	"math"
	"sync"
	"sync/atomic"
)

// tokTable maps token bytes to an int32, for the index builder's hottest loop. It is shared by the
// analysis workers: lookups take no lock, inserts are serialized by mu. Keys of up to inlineKey bytes
// live inside the slot, so a lookup usually touches one cache line and the garbage collector never scans
// the table; longer keys fall back to a Go map (under mu). Open addressing with linear probing, load
// <= 1/2, insert only: a value never changes once a key is in.
//
// Lock-free reads: a slot is published by an atomic store of its hash (never 0 for a full slot) after
// its key and value are written, and a reader loads the hash atomically before reading the rest. The
// table grows into a new array published through an atomic pointer; the old arrays stay mapped until
// release, since a reader may still be probing one (it then misses keys added since, and the caller
// resolves them again under mu).
type tokTable struct {
	seed maphash.Seed
	cur  atomic.Pointer[tokSlots]

	mu   sync.Mutex // held by writers
	n    int
	long map[string]int32
	old  []func() // frees of replaced arrays
}

// tokSlots is one generation of a tokTable's array.
type tokSlots struct {
	slots []tokSlot
	mask  uint64
	free  func() // releases slots when they are not on the Go heap
}

const inlineKey = 23

type tokSlot struct {
	key  [inlineKey]byte
	klen uint8
	hash uint32 // tokHash32 of the key; 0 marks an empty slot. Loaded and stored atomically in the table.
	val  int32
}

// tokHash32 is the hash a slot stores: the high half of the key's hash, never 0.
func tokHash32(h uint64) uint32 { return uint32(h>>32) | 1 }

func newTokTable() *tokTable {
	t := &tokTable{seed: maphash.MakeSeed(), long: map[string]int32{}}
	t.cur.Store(&tokSlots{slots: make([]tokSlot, 1<<12), mask: 1<<12 - 1})
	return t
}

// get returns the value of k. It takes mu only for keys longer than inlineKey.
func (t *tokTable) get(k []byte) (int32, bool) {
	if len(k) > inlineKey {
		t.mu.Lock()
		defer t.mu.Unlock()
	}
	return t.getLocked(k)
}

// getLocked is get for a caller holding mu (mu guards only the keys longer than inlineKey).
func (t *tokTable) getLocked(k []byte) (int32, bool) {
	if len(k) > inlineKey {
		v, ok := t.long[string(k)]
		return v, ok
	}
	h := maphash.Bytes(t.seed, k)
	if s := t.cur.Load().find(k, tokHash32(h), h); s != nil {
		return s.val, true
	}
	return 0, false
}

// find returns the published slot of key k (hash h, slot hash h32), or nil.
func (a *tokSlots) find(k []byte, h32 uint32, h uint64) *tokSlot {
	for i := h & a.mask; ; i = (i + 1) & a.mask {
		s := &a.slots[i]
		sh := atomic.LoadUint32(&s.hash)
		if sh == 0 {
			return nil
		}
		if sh == h32 && int(s.klen) == len(k) && string(s.key[:s.klen]) == string(k) {
			return s
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

const hotBits = 13

// tokView is one worker's way into a shared tokTable: a small direct-mapped cache of recently found keys
// in front of it. Token frequencies are Zipfian: the few thousand most frequent tokens make up most
// lookups, and in hot they sit in a few hundred KiB instead of being spread over the whole (often 100+
// MB) table, one cache line and one page each. Values never change, so a private cache cannot go stale.
type tokView struct {
	t   *tokTable
	hot []tokSlot
}

func newTokView(t *tokTable) tokView { return tokView{t: t, hot: make([]tokSlot, 1<<hotBits)} }

// lookupAll looks up every token of toks (spans of buf) and appends their values, or tokUnknown, to out;
// it also returns the number of unknown tokens. Keys longer than inlineKey are always reported unknown
// (they live under the table's lock; the caller's resolve finds them). It hashes all tokens first and
// probes the table afterwards, so that the probes, whose cache misses dominate the lookups of a large
// table, are independent of each other and overlap in the processor.
func (v tokView) lookupAll(buf []byte, toks []tokRef, out []int32) ([]int32, int) {
	t := v.t
	start := len(out)
	missed := 0
	for i := range toks {
		tk := &toks[i]
		k := buf[tk.s:tk.e]
		if len(k) > inlineKey {
			out = append(out, tokUnknown)
			continue
		}
		h := maphash.Bytes(t.seed, k)
		tk.h = h
		hs := &v.hot[h>>(64-hotBits)]
		if hs.hash == tokHash32(h) && int(hs.klen) == len(k) && string(hs.key[:hs.klen]) == string(k) {
			out = append(out, hs.val)
			continue
		}
		out = append(out, tokUnknown)
		missed++
	}
	if missed == 0 {
		return out, 0
	}
	a := t.cur.Load()
	res := out[start:]
	unknown := 0
	for i, val := range res {
		if val != tokUnknown {
			continue
		}
		tk := &toks[i]
		k := buf[tk.s:tk.e]
		if len(k) > inlineKey {
			unknown++
			continue
		}
		if s := a.find(k, tokHash32(tk.h), tk.h); s != nil {
			res[i] = s.val
			v.hot[tk.h>>(64-hotBits)] = *s
			continue
		}
		unknown++
	}
	return out, unknown
}

// put adds k with value v unless k is already in; it takes mu.
func (t *tokTable) put(k []byte, v int32) {
	t.mu.Lock()
	t.putLocked(k, v)
	t.mu.Unlock()
}

// putLocked is put for a caller holding mu.
func (t *tokTable) putLocked(k []byte, v int32) {
	if len(k) > inlineKey {
		if _, ok := t.long[string(k)]; !ok {
			t.long[string(k)] = v
		}
		return
	}
	a := t.cur.Load()
	if 2*(t.n+1) > len(a.slots) {
		a = t.grow(a)
	}
	h := maphash.Bytes(t.seed, k)
	if a.insert(k, tokHash32(h), h, v, true) {
		t.n++
	}
}

// insert puts k into a unless it is there, reporting whether it added it. With publish, the slot's hash
// is stored atomically after the rest (the array is shared); without, a is still private.
func (a *tokSlots) insert(k []byte, h32 uint32, h uint64, v int32, publish bool) bool {
	for i := h & a.mask; ; i = (i + 1) & a.mask {
		s := &a.slots[i]
		sh := s.hash // only the writer stores hashes, so a plain read is current
		if sh == 0 {
			copy(s.key[:], k)
			s.klen = uint8(len(k))
			s.val = v
			if publish {
				atomic.StoreUint32(&s.hash, h32)
			} else {
				s.hash = h32
			}
			return true
		}
		if sh == h32 && int(s.klen) == len(k) && bytes.Equal(s.key[:s.klen], k) {
			return false
		}
	}
}

// grow moves the table into an array twice as large and publishes it; the old array stays mapped.
func (t *tokTable) grow(old *tokSlots) *tokSlots {
	a := &tokSlots{}
	a.slots, a.free = hugeAlloc[tokSlot](2 * len(old.slots))
	a.mask = uint64(len(a.slots) - 1)
	for i := range old.slots {
		s := &old.slots[i]
		if s.hash == 0 {
			continue
		}
		k := s.key[:s.klen]
		a.insert(k, s.hash, maphash.Bytes(t.seed, k), s.val, false)
	}
	if old.free != nil {
		t.old = append(t.old, old.free)
	}
	t.cur.Store(a)
	return a
}

// release frees the table's memory; the table must not be used afterwards.
func (t *tokTable) release() {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, f := range t.old {
		f()
	}
	if a := t.cur.Load(); a != nil && a.free != nil {
		a.free()
	}
	t.cur.Store(nil)
	t.old, t.n, t.long = nil, 0, nil
}
