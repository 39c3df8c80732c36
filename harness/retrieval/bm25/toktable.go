package bm25

import (
	"bytes"
	"encoding/binary"
	"hash/maphash"
	"math"
	"slices"
	"sync"
	"sync/atomic"
	"unsafe"
)

// tokTable maps token bytes to an int32, for the index builder's hottest loop. It is shared by the
// analysis workers: lookups take no lock, inserts are serialized by mu. Keys of up to inlineKey bytes
// live inside the slot, so a lookup usually touches one cache line and the garbage collector never scans
// the table; longer keys fall back to a Go map (under mu). Open addressing with linear probing, load
// <= 1/2, insert only: a value never changes once a key is in.
//
// Lock-free reads: a slot is published by an atomic store of its hash (never 0 for a full slot) after
// its key and value are written, and a reader loads the hash atomically before reading the rest. The
// table grows into a new array published through an atomic pointer; a reader still probing an old array
// misses keys added since (the caller resolves them again under mu). Each reader (tokView) announces the
// array it probes (a hazard pointer), and an old array is unmapped once no reader announces it, so that
// its memory serves the build's later allocations (fresh memory is expensive, see hugeAlloc). Right after
// the table is 3/8 full, a background goroutine maps the next array, faults its pages in and copies the
// published slots into it (prepare), so that the growth, under mu, where every worker with a new token
// waits, only adds the slots inserted since. (Not right after a growth: the last array prepared would
// then often never be used, and fresh memory costs as much as the copy.)
type tokTable struct {
	seed   maphash.Seed
	seed64 uint64 // seeds the hash of short keys
	cur    atomic.Pointer[tokSlots]

	mu      sync.Mutex // held by writers; guards the fields below
	n       int
	long    map[string]int32
	views   []*tokView     // the readers, whose hazard pointers an old array waits for
	retired []*tokSlots    // replaced arrays not yet unmapped
	prep    chan *tokSlots // the next array, being prepared (nil: none; see prepare)
	prepLog int            // its size (log2 slots)
	added   []uint32       // slots of the current array inserted since the preparation started
}

// tokSlots is one generation of a tokTable's array.
type tokSlots struct {
	slots []tokSlot
	mask  uint64
	shift uint8  // a key's first slot is hash >> shift: the high bits, which tokHash32 keeps
	free  func() // releases slots when they are not on the Go heap
}

// newTokSlots returns an empty array of 1<<logN slots (at most 1<<31, so that a slot's 32-bit hash
// still holds the bits that place it).
func newTokSlots(logN int) *tokSlots {
	a := &tokSlots{shift: uint8(64 - logN)}
	a.slots, a.free = hugeAlloc[tokSlot](1 << logN)
	a.mask = uint64(len(a.slots) - 1)
	return a
}

const inlineKey = 23

type tokSlot struct {
	key  [inlineKey]byte
	klen uint8
	hash uint32 // tokHash32 of the key; 0 marks an empty slot. Loaded and stored atomically in the table.
	val  int32
}

// tokHash32 is the hash a slot stores: the high half of the key's hash, never 0. Its bits 1 to 31 are
// the hash's bits 33 to 63, so an array of up to 1<<31 slots places a slot from it alone.
func tokHash32(h uint64) uint32 { return uint32(h>>32) | 1 }

func newTokTable() *tokTable {
	t := &tokTable{seed: maphash.MakeSeed(), long: map[string]int32{}}
	t.seed64 = maphash.Comparable(t.seed, 0)
	t.cur.Store(newTokSlots(12))
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
	h, pk := t.hash(k)
	if s := t.cur.Load().find(k, pk, tokHash32(h), h); s != nil {
		return s.val, true
	}
	return 0, false
}

// packKey returns a key of at most 8 bytes as a little-endian integer, zero-padded. Index tokens never
// contain a zero byte (they are letters, digits and marks), and keys are compared with their length as
// well, so a packed key identifies a short token.
func packKey(k []byte) uint64 {
	var p [8]byte
	copy(p[:], k)
	return binary.LittleEndian.Uint64(p[:])
}

// mixKey hashes a packed short key with the table's seed (a 64-bit finalizer: every input bit reaches
// the high bits, which index the table and the hot caches).
func mixKey(pk, seed uint64) uint64 {
	h := pk ^ seed
	h ^= h >> 33
	h *= 0xff51afd7ed558ccd
	h ^= h >> 33
	h *= 0xc4ceb9fe1a85ec53
	h ^= h >> 33
	return h
}

// hash returns the hash of a key of at most inlineKey bytes and, for keys of at most 8 bytes (most
// tokens), the packed key (else 0). Short keys are hashed from their packed form, longer ones with
// maphash.
func (t *tokTable) hash(k []byte) (h, pk uint64) {
	if len(k) <= 8 {
		pk = packKey(k)
		return mixKey(pk, t.seed64), pk
	}
	return maphash.Bytes(t.seed, k), 0
}

// slotKey8 returns the first 8 bytes of a slot's key as an integer: for a key of at most 8 bytes, its
// packed form (the rest of the array is zero).
func slotKey8(s *tokSlot) uint64 { return binary.LittleEndian.Uint64(s.key[:8]) }

// find returns the published slot of key k (packed key pk when len(k) <= 8, hash h, slot hash h32), or
// nil.
func (a *tokSlots) find(k []byte, pk uint64, h32 uint32, h uint64) *tokSlot {
	n := len(k)
	for i := h >> a.shift; ; i = (i + 1) & a.mask {
		s := &a.slots[i]
		sh := atomic.LoadUint32(&s.hash)
		if sh == 0 {
			return nil
		}
		if sh == h32 && int(s.klen) == n {
			if n <= 8 {
				if slotKey8(s) == pk {
					return s
				}
			} else if string(s.key[:n]) == string(k) {
				return s
			}
		}
	}
}

// tokRef is a token of a document being analyzed: its span in the worker's buffer of lowercased tokens
// and, once looked up, its hash and (for at most 8 bytes) packed key.
type tokRef struct {
	s, e uint32
	h    uint64
	pk   uint64
}

// tokUnknown marks a token that lookupAll did not find.
const tokUnknown = math.MinInt32

const hotBits = 14

// hotSlot is a hot-cache entry: a short key (packed) with its value. Long keys are not cached.
type hotSlot struct {
	pk  uint64
	val int32
	n   uint32 // key length; 0 marks an empty slot
}

// tokView is one worker's way into a shared tokTable: a small direct-mapped cache of recently found keys
// of at most 8 bytes in front of it. Token frequencies are Zipfian: the few thousand most frequent tokens
// make up most lookups, and in hot they sit in a few hundred KiB instead of being spread over the whole
// (often 100+ MB) table, one cache line and one page each. Values never change, so a private cache
// cannot go stale.
type tokView struct {
	t     *tokTable
	hot   []hotSlot
	sink  uint32                   // keeps the prefetching loads of lookupAll from being optimized away
	using atomic.Pointer[tokSlots] // the array lookupAll is probing (nil: none)
}

func newTokView(t *tokTable) *tokView {
	v := &tokView{t: t, hot: make([]hotSlot, 1<<hotBits)}
	t.mu.Lock()
	t.views = append(t.views, v)
	t.mu.Unlock()
	return v
}

// acquire returns the table's current array, announced in v.using so that it stays mapped until
// v.using changes. The announcement is checked against the current array again: an array replaced in
// between may already have been judged unused and unmapped (see reclaim).
func (v *tokView) acquire() *tokSlots {
	a := v.t.cur.Load()
	for {
		v.using.Store(a)
		b := v.t.cur.Load()
		if b == a {
			return a
		}
		a = b
	}
}

// lookupAll looks up every token of toks (spans of buf) and appends their values, or tokUnknown, to out;
// it also returns the number of unknown tokens. Keys longer than inlineKey are always reported unknown
// (they live under the table's lock; the caller's resolve finds them). It hashes all tokens first and
// probes the table afterwards, so that the probes, whose cache misses dominate the lookups of a large
// table, are independent of each other and overlap in the processor. A key of at most 8 bytes is read as
// one integer (buf is given 8 bytes of spare capacity for that) and compared as one.
func (v *tokView) lookupAll(buf []byte, toks []tokRef, out []int32) ([]int32, int) {
	t := v.t
	buf = slices.Grow(buf, 8)
	start := len(out)
	missed := 0
	seed := t.seed64
	for i := range toks {
		tk := &toks[i]
		n := tk.e - tk.s
		if n <= 8 {
			pk := tk.pk // packed by appendTokens on its ASCII path
			if pk == 0 {
				pk = binary.LittleEndian.Uint64(buf[tk.s:tk.s+8]) & (^uint64(0) >> (64 - 8*n))
			}
			h := mixKey(pk, seed)
			tk.h, tk.pk = h, pk
			hs := &v.hot[h>>(64-hotBits)]
			if hs.pk == pk && hs.n == n {
				out = append(out, hs.val)
				continue
			}
		} else if n <= inlineKey {
			tk.h = maphash.Bytes(t.seed, buf[tk.s:tk.e])
		}
		out = append(out, tokUnknown)
		missed++
	}
	if missed == 0 {
		return out, 0
	}
	a := v.acquire()
	defer v.using.Store(nil)
	res := out[start:]
	// Touch the first slot of every token to probe, in a loop of independent loads without branches on
	// their values, so that the processor has many of these cache misses in flight at once; the probes
	// below then mostly hit the cache.
	var touch uint32
	for i, val := range res {
		if val == tokUnknown {
			touch += atomic.LoadUint32(&a.slots[toks[i].h>>a.shift].hash)
		}
	}
	v.sink += touch
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
		if s := a.find(k, tk.pk, tokHash32(tk.h), tk.h); s != nil {
			res[i] = s.val
			if len(k) <= 8 {
				v.hot[tk.h>>(64-hotBits)] = hotSlot{pk: tk.pk, val: s.val, n: uint32(len(k))}
			}
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
	} else if t.prep == nil && 8*(t.n+1) > 3*len(a.slots) {
		t.prepare(a)
	}
	if len(t.retired) > 0 && t.n&1023 == 0 {
		t.reclaim()
	}
	h, pk := t.hash(k)
	if i, ok := a.insert(k, pk, tokHash32(h), h, v); ok {
		t.n++
		if t.prep != nil {
			t.added = append(t.added, i)
		}
	}
}

// prepare starts a goroutine that maps the array that will replace a, faults its pages in and copies
// a's published slots into it, while the workers go on; the slots inserted meanwhile are listed in
// added, for grow to add. Only arrays large enough to be mapped (hugeMin) are prepared, and only while a
// slot's stored hash places it (up to 1<<31 slots).
func (t *tokTable) prepare(a *tokSlots) {
	logN := 64 - int(a.shift) + 1
	if 2*len(a.slots)*int(unsafe.Sizeof(tokSlot{})) < hugeMin || logN > 31 {
		return
	}
	ch := make(chan *tokSlots, 1)
	t.prep, t.prepLog, t.added = ch, logN, t.added[:0]
	go func() {
		next := newTokSlots(logN)
		prefault(next.slots)
		for i := range a.slots {
			s := &a.slots[i]
			if atomic.LoadUint32(&s.hash) == 0 {
				continue // empty, or being filled: then it is in added
			}
			next.place(s)
		}
		ch <- next
	}()
}

// place copies s, a published slot of the previous array, into a (not yet published), at the first free
// slot from where its stored hash puts it.
func (a *tokSlots) place(s *tokSlot) {
	h := uint64(s.hash) << 32
	for j := h >> a.shift; ; j = (j + 1) & a.mask {
		if d := &a.slots[j]; d.hash == 0 {
			*d = *s
			return
		}
	}
}

// insert puts k into a (shared: the slot's hash is stored atomically after the rest) unless it is there,
// reporting whether it added it, and where.
func (a *tokSlots) insert(k []byte, pk uint64, h32 uint32, h uint64, v int32) (uint32, bool) {
	n := len(k)
	for i := h >> a.shift; ; i = (i + 1) & a.mask {
		s := &a.slots[i]
		sh := s.hash // only the writer stores hashes, so a plain read is current
		if sh == 0 {
			copy(s.key[:], k)
			s.klen = uint8(n)
			s.val = v
			atomic.StoreUint32(&s.hash, h32)
			return uint32(i), true
		}
		if sh == h32 && int(s.klen) == n {
			if n <= 8 {
				if slotKey8(s) == pk {
					return 0, false
				}
			} else if bytes.Equal(s.key[:n], k) {
				return 0, false
			}
		}
	}
}

// grow moves the table into an array twice as large (the prepared one, if any) and publishes it; the old
// array is unmapped once no reader uses it (reclaim). Keys are distinct and, up to 1<<31 slots, a slot's
// stored hash places it (see tokHash32), so nothing is rehashed or compared.
func (t *tokTable) grow(old *tokSlots) *tokSlots {
	logN := 64 - int(old.shift) + 1
	var a *tokSlots
	if t.prep != nil && t.prepLog == logN {
		// The prepared array holds the slots published when its copy passed them; add those inserted
		// since, unless the copy saw them.
		a = <-t.prep
		t.prep = nil
		for _, i := range t.added {
			s := &old.slots[i]
			h := uint64(s.hash) << 32
			var pk uint64
			if s.klen <= 8 {
				pk = slotKey8(s)
			}
			a.insert(s.key[:s.klen], pk, s.hash, h, s.val)
		}
		t.added = t.added[:0]
		t.cur.Store(a)
		if old.free != nil {
			t.retired = append(t.retired, old)
		}
		t.reclaim()
		return a
	}
	a = newTokSlots(logN)
	for i := range old.slots {
		s := &old.slots[i]
		if s.hash == 0 {
			continue
		}
		h := uint64(s.hash) << 32
		if logN > 31 { // beyond what the stored hash holds (a table of over 64 GiB): rehash
			h, _ = t.hash(s.key[:s.klen])
		}
		for j := h >> a.shift; ; j = (j + 1) & a.mask {
			if d := &a.slots[j]; d.hash == 0 {
				*d = *s
				break
			}
		}
	}
	t.cur.Store(a)
	if old.free != nil {
		t.retired = append(t.retired, old)
	}
	t.reclaim()
	return a
}

// reclaim unmaps the retired arrays that no reader announces. A reader that announces an array after
// this check also sees that it is no longer current and moves on (tokView.acquire): the announcement and
// the check of the current array are sequentially consistent atomics, like the publication of a new
// array before this check.
func (t *tokTable) reclaim() {
	kept := t.retired[:0]
	for _, r := range t.retired {
		inUse := false
		for _, v := range t.views {
			if v.using.Load() == r {
				inUse = true
				break
			}
		}
		if inUse {
			kept = append(kept, r)
		} else {
			r.free()
		}
	}
	clear(t.retired[len(kept):])
	t.retired = kept
}

// release frees the table's memory; the table must not be used afterwards.
func (t *tokTable) release() {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, r := range t.retired {
		r.free()
	}
	if t.prep != nil {
		if a := <-t.prep; a.free != nil {
			a.free()
		}
	}
	if a := t.cur.Load(); a != nil && a.free != nil {
		a.free()
	}
	t.cur.Store(nil)
	t.retired, t.prep, t.views, t.n, t.long = nil, nil, nil, 0, nil
}
