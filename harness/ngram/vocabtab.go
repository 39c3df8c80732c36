package ngram

import "math/bits"

// vocabTable maps token strings to ids during a build. It replaces a map[string]int32, whose lookups
// were about a quarter of the build's CPU time (a profile showed the cost in cache misses on the control
// word, the slot and the key bytes). Here a slot holds the first eight bytes of its key inline, so a
// word of at most eight bytes (most words) is matched with one memory access; longer words compare
// their remainder against words[id].
//
// Word frequencies are Zipfian, so most lookups are of a few thousand words; the main table is too
// large for the CPU caches, so a direct-mapped cache (hot) of recently seen words is checked first.
//
// It is open addressing with linear probing, kept at most half full. The keys' bytes live in words,
// which the builder owns (ids are indices into it).
type vocabTable struct {
	hot   []vslot // a direct-mapped cache of recently found words, small enough to stay in cache; may be nil
	slots []vslot
	n     int
	shift uint // 64 - log2(len(slots))
}

type vslot struct {
	head uint64 // the key's first 8 bytes, little-endian, zero-padded
	tag  uint32 // hash bits 32..55 <<8 | min(len, 255)
	id1  int32  // id + 1; 0 marks an empty slot
}

// hotSize is the number of entries of the direct-mapped cache (16 bytes each).
const hotSize = 1 << 13

func newVocabTable() *vocabTable {
	const logSize = 16
	return &vocabTable{hot: make([]vslot, hotSize), slots: make([]vslot, 1<<logSize), shift: 64 - logSize}
}

// loadHead returns the first min(len(s), 8) bytes of s, little-endian, zero-padded.
func loadHead(s string) uint64 {
	if len(s) >= 8 {
		return le64(s)
	}
	var h uint64
	switch {
	case len(s) >= 4:
		h = uint64(le32(s)) | uint64(le32(s[len(s)-4:]))<<(8*(len(s)-4))
	case len(s) > 0:
		// 1..3 bytes: first, middle and last byte cover every position.
		h = uint64(s[0]) | uint64(s[len(s)/2])<<(8*(len(s)/2)) | uint64(s[len(s)-1])<<(8*(len(s)-1))
	}
	return h
}

// vhash hashes a key whose first bytes are head.
func vhash(s string, head uint64) uint64 {
	const m1, m2 = 0x9E3779B97F4A7C15, 0xBF58476D1CE4E5B9
	h := (head ^ uint64(len(s))*m2) * m1
	for i := 8; i < len(s); i += 8 {
		var c uint64
		if i+8 <= len(s) {
			c = le64(s[i:])
		} else {
			c = loadHead(s[i:])
		}
		h = bits.RotateLeft64(h, 31) ^ c
		h *= m1
	}
	h ^= h >> 29
	h *= m2
	h ^= h >> 32
	return h
}

func vtag(h uint64, n int) uint32 {
	return uint32(h>>32)&^0xFF | uint32(min(n, 255))
}

// find returns the id of s, or -1 and the slot where s would go.
func (t *vocabTable) find(s string, words []string) (int32, int) {
	head := loadHead(s)
	h := vhash(s, head)
	tag := vtag(h, len(s))
	var hs *vslot
	if t.hot != nil {
		hs = &t.hot[h&(hotSize-1)]
		if hs.tag == tag && hs.head == head && hs.id1 != 0 && (len(s) <= 8 || words[hs.id1-1][8:] == s[8:]) {
			return hs.id1 - 1, -1
		}
	}
	mask := len(t.slots) - 1
	i := int((h * 0x9E3779B97F4A7C15) >> t.shift)
	for {
		sl := &t.slots[i]
		if sl.id1 == 0 {
			return -1, i
		}
		if sl.tag == tag && sl.head == head && (len(s) <= 8 || words[sl.id1-1][8:] == s[8:]) {
			if hs != nil {
				*hs = *sl
			}
			return sl.id1 - 1, i
		}
		i = (i + 1) & mask
	}
}

// insert stores id for s (= words[id]) at slot i, which find returned for s, growing the table as needed.
func (t *vocabTable) insert(i int, s string, id int32, words []string) {
	head := loadHead(s)
	t.slots[i] = vslot{head: head, tag: vtag(vhash(s, head), len(s)), id1: id + 1}
	t.n++
	if 2*t.n > len(t.slots) {
		t.grow(words)
	}
}

func (t *vocabTable) grow(words []string) {
	old := t.slots
	t.slots = make([]vslot, 2*len(old))
	t.shift--
	mask := len(t.slots) - 1
	for _, sl := range old {
		if sl.id1 == 0 {
			continue
		}
		s := words[sl.id1-1]
		i := int((vhash(s, sl.head) * 0x9E3779B97F4A7C15) >> t.shift)
		for t.slots[i].id1 != 0 {
			i = (i + 1) & mask
		}
		t.slots[i] = sl
	}
}

// le64 loads s[0:8] little-endian (the compiler merges the byte loads into one).
func le64(s string) uint64 {
	_ = s[7]
	return uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24 |
		uint64(s[4])<<32 | uint64(s[5])<<40 | uint64(s[6])<<48 | uint64(s[7])<<56
}

// le32 loads s[0:4] little-endian.
func le32(s string) uint32 {
	_ = s[3]
	return uint32(s[0]) | uint32(s[1])<<8 | uint32(s[2])<<16 | uint32(s[3])<<24
}
