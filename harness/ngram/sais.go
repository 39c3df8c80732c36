package ngram

import "slices"

// This file implements SA-IS (Nong, Zhang and Chan, "Two efficient algorithms for linear time suffix
// array construction", 2011) over an integer alphabet: linear in the text length. Besides the text and
// the suffix array it needs two arrays of the alphabet size per level; at the recursive levels they
// live in the unused middle of the suffix array when it is large enough. It does not modify the text,
// so the build can write the token file from it while SA-IS runs.
//
// It is written for texts much larger than the CPU caches with a large alphabet (a Zipfian corpus has
// a million distinct tokens), where the time goes into random memory accesses: every induced suffix
// costs a read of the text and a write of the suffix array at unrelated places. Changes after Yuta
// Mori's sais and libsais, none of which changes the result (the unique suffix array):
//
//   - No type bit array. When a suffix j is induced, the type of j itself is known (the pass that
//     induces it only induces one type), so the type of j-1 follows from comparing s[j-1] with s[j],
//     which sit in the same cache line; it is stored with the entry as its sign (a negative entry ^j
//     means "j-1 is to be induced by the other pass"). The passes then read no type bits at all: one
//     random access fewer per induced suffix, and n/8 bytes less memory.
//   - The LMS-substring names are compared by stored length and symbols (equal lengths and symbols
//     imply equal types, since both substrings end in an S-type symbol).
//
// Tried and dropped (docs/corpus-statistics.md has the figures): induce passes (and naming) in blocks, a gather
// loop reading the predecessors' symbols before a loop doing the stores (to overlap the cache misses; 20% more CPU
// than the single loop, whose iterations the CPU already overlaps), with touches of the bucket
// counter and target slot (slower still), or with the gather and the stores of each block split
// across two goroutines (no faster on the 2-core VM measured: the random reads did not get faster
// with a second core); huge-page mappings for the bucket arrays (within the noise); computing the
// predecessor's type with conditional moves instead of a branch (5-10% slower on 10M Zipfian tokens:
// with the branch the CPU runs ahead on its prediction instead of waiting for the load of s[j-1]).

// saisText builds the suffix array of s into sa. s must end with a unique smallest symbol 0 (the
// sentinel), every symbol must be in [0, k), and len(sa) must equal len(s). sa[0] is then len(s)-1.
// s is not modified.
func saisText(s []int32, sa []int32, k int) {
	saisLevel(s, sa, k, nil)
}

// saisLevel is saisText with free, scratch memory that the bucket arrays may use.
func saisLevel(s []int32, sa []int32, k int, free []int32) {
	n := len(s)
	switch n {
	case 0:
		return
	case 1:
		sa[0] = 0
		return
	case 2:
		sa[0], sa[1] = 1, 0
		return
	}
	// Symbol counts (computed once per level) and the moving bucket heads or tails.
	var cnt, bkt []int32
	switch {
	case len(free) >= 2*k:
		cnt, bkt = free[:k], free[k:2*k]
	case len(free) >= k:
		cnt, bkt = free[:k], make([]int32, k)
	default:
		cnt, bkt = make([]int32, k), make([]int32, k)
	}
	clear(cnt)
	for _, c := range s {
		cnt[c]++
	}

	// Stage 1: sort the LMS substrings by induced sorting. Every LMS position goes to the end of its
	// bucket (0 marks an empty slot; an LMS entry is positive: its predecessor is L-type).
	clear(sa)
	bucketEnds(cnt, bkt)
	n1 := 0
	eachLMS(s, func(i int) {
		c := s[i]
		bkt[c]--
		sa[bkt[c]] = int32(i)
		n1++
	})
	induceL(s, sa, cnt, bkt, true)
	induceS(s, sa, cnt, bkt, true)
	// Now the positive entries are exactly the LMS positions but the sentinel's, in the order of their
	// LMS substrings; the sentinel's substring is the smallest.
	sa[0] = int32(n - 1)
	for i, m := 1, 1; i < n; i++ {
		if v := sa[i]; v > 0 {
			sa[m] = v
			m++
		}
	}

	// Name the LMS substrings: equal substrings get equal names. The length of each (up to and
	// including the next LMS position) is stored first in the slot that later holds its name, at
	// n1 + pos/2 (LMS positions are at least 2 apart).
	clear(sa[n1:])
	prevLMS := n - 1
	sa[n1+(n-1)/2] = 1
	eachLMS(s[:n-1], func(i int) {
		sa[n1+i/2] = int32(prevLMS - i + 1)
		prevLMS = i
	})
	name := nameLMS(s, sa, n1)
	for i, j := n-1, n-1; i >= n1; i-- {
		if v := sa[i]; v > 0 {
			sa[j] = v - 1
			j--
		}
	}

	// Stage 2: sort the reduced problem, recursively when names repeat.
	s1 := sa[n-n1:]
	sa1 := sa[:n1]
	if int(name) < n1 {
		saisLevel(s1, sa1, int(name), sa[n1:n-n1])
	} else {
		for i := 0; i < n1; i++ {
			sa1[s1[i]] = int32(i)
		}
	}

	// Stage 3: induce the full order from the sorted LMS suffixes.
	j := n1 - 1
	s1[j] = int32(n - 1)
	eachLMS(s[:n-1], func(i int) {
		j--
		s1[j] = int32(i)
	})
	for i := 0; i < n1; i++ {
		sa1[i] = s1[sa1[i]]
	}
	clear(sa[n1:])
	bucketEnds(cnt, bkt)
	for i := n1 - 1; i >= 0; i-- {
		p := sa[i]
		sa[i] = 0
		c := s[p]
		bkt[c]--
		sa[bkt[c]] = p
	}
	induceL(s, sa, cnt, bkt, false)
	induceS(s, sa, cnt, bkt, false)
}

// eachLMS calls fn for every LMS position of s (S-type, with an L-type predecessor) from right to
// left, treating the last symbol as S-type (the sentinel, or the symbol before it when s is cut there:
// its successor is then the sentinel, and it is L-type unless the text has length 1, where nothing is
// reported).
func eachLMS(s []int32, fn func(i int)) {
	n := len(s)
	if n < 2 {
		return
	}
	// Which types: for the full text the last symbol is the sentinel (S). For s[:n-1] of a text the
	// last symbol precedes the sentinel, so it is L-type; handle both by deciding it explicitly.
	i := n - 1
	sType := s[i] == 0 // only the sentinel is 0
	c1 := s[i]
	for i--; i >= 0; i-- {
		c0 := s[i]
		t0 := c0 < c1 || (c0 == c1 && sType)
		if sType && !t0 {
			fn(i + 1)
		}
		c1, sType = c0, t0
	}
}

// nameLMS names the sorted LMS substrings in sa[:n1], whose lengths are stored at sa[n1+pos/2], with
// names 1, 2, ... (equal substrings get equal names), stored in place of the lengths. It returns the
// number of distinct names.
func nameLMS(s, sa []int32, n1 int) int32 {
	name := int32(0)
	prev, prevLen := int32(-1), int32(0)
	for i := 0; i < n1; i++ {
		pos := sa[i]
		plen := sa[n1+int(pos/2)]
		if plen != prevLen || !slices.Equal(s[pos:pos+plen], s[prev:prev+plen]) {
			name++
			prev, prevLen = pos, plen
		}
		sa[n1+int(pos/2)] = name
	}
	return name
}

// bucketEnds sets bkt[c] to the end (exclusive) of symbol c's bucket, from the counts cnt.
func bucketEnds(cnt []int32, bkt []int32) {
	sum := int32(0)
	for i, c := range cnt {
		sum += c
		bkt[i] = sum
	}
}

// bucketStarts sets bkt[c] to the start of symbol c's bucket, from the counts cnt.
func bucketStarts(cnt []int32, bkt []int32) {
	sum := int32(0)
	for i, c := range cnt {
		bkt[i] = sum
		sum += c
	}
}

// induceL induces the L-type suffixes from left to right. Positive entries are suffixes whose
// predecessor is L-type; each puts that predecessor at the head of its bucket, negative when its own
// predecessor is S-type or absent. In stage 1 (clearUsed) the entries used are cleared, so that
// afterwards only the LMS suffixes stay positive.
func induceL(s, sa, cnt, bkt []int32, clearUsed bool) {
	bucketStarts(cnt, bkt)
	for i := 0; i < len(sa); i++ {
		v := sa[i]
		if v <= 0 {
			continue
		}
		j := v - 1
		c := s[j]
		e := j
		if j == 0 || s[j-1] < c {
			e = ^j
		}
		p := bkt[c]
		sa[p] = e
		bkt[c] = p + 1
		if clearUsed {
			sa[i] = 0
		}
	}
}

// induceS induces the S-type suffixes from right to left. Negative entries ^v are suffixes whose
// predecessor is S-type (or, for v = 0, absent); each is made positive (or, in stage 1, cleared) and
// puts its predecessor at the tail of its bucket, negative unless that predecessor is an LMS position.
func induceS(s, sa, cnt, bkt []int32, stage1 bool) {
	bucketEnds(cnt, bkt)
	for i := len(sa) - 1; i >= 0; i-- {
		v := sa[i]
		if v >= 0 {
			continue
		}
		v = ^v
		if stage1 {
			sa[i] = 0
		} else {
			sa[i] = v
		}
		if v == 0 {
			continue
		}
		j := v - 1
		c := s[j]
		e := j
		if j == 0 || s[j-1] <= c {
			e = ^j
		}
		p := bkt[c] - 1
		sa[p] = e
		bkt[c] = p
	}
}
