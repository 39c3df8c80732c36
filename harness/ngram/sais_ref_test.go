package ngram

import "slices"

// saisRef is the straightforward SA-IS (one type bit per position, one bucket array, plain induce
// loops) that the build used before the cache-friendlier saisText. It is kept, test-only, as a second
// reference: brute force checks small texts, saisRef checks texts of millions of symbols, and the
// benchmarks compare against it in the same run.

// saisRef builds the suffix array of s into sa. s must end with a unique smallest symbol 0 (the
// sentinel), every symbol must be in [0, k), and len(sa) must equal len(s). sa[0] is then len(s)-1.
func saisRef(s []int32, sa []int32, k int) {
	n := len(s)
	if n == 0 {
		return
	}
	if n == 1 {
		sa[0] = 0
		return
	}
	if n == 2 {
		sa[0], sa[1] = 1, 0
		return
	}
	t := refNewBits(n)
	// t marks S-type positions; the sentinel is S, the symbol before it L.
	t.set(n - 1)
	for i := n - 3; i >= 0; i-- {
		if s[i] < s[i+1] || (s[i] == s[i+1] && t.get(i+1)) {
			t.set(i)
		}
	}
	isLMS := func(i int32) bool { return i > 0 && t.get(int(i)) && !t.get(int(i-1)) }
	// The symbol counts are computed once per level (recounting them for every bucket pass was ~7% of
	// a Zipfian build with its 1M-symbol alphabet); bkt holds the moving bucket heads or tails.
	cnt := make([]int32, k)
	refBucketCounts(s, cnt)
	bkt := make([]int32, k)

	// Stage 1: sort the LMS substrings by induced sorting.
	refBucketEnds(cnt, bkt)
	for i := range sa {
		sa[i] = -1
	}
	for i := 1; i < n; i++ {
		if isLMS(int32(i)) {
			bkt[s[i]]--
			sa[bkt[s[i]]] = int32(i)
		}
	}
	refInduceL(s, sa, t, cnt, bkt)
	refInduceS(s, sa, t, cnt, bkt)

	// Compact the sorted LMS positions into the first n1 slots.
	n1 := 0
	for i := 0; i < n; i++ {
		if isLMS(sa[i]) {
			sa[n1] = sa[i]
			n1++
		}
	}
	// Name the LMS substrings: equal substrings get equal names. Two LMS substrings are equal when
	// they have the same length and the same symbols (their types then agree too, since both end in
	// an S-type symbol), so the length of each, up to and including the next LMS position, is stored
	// first in the slot that later holds its name. This compares symbols only, with no type lookups.
	for i := n1; i < n; i++ {
		sa[i] = -1
	}
	for i, prevLMS := 1, -1; i < n; i++ {
		if isLMS(int32(i)) {
			if prevLMS >= 0 {
				sa[n1+prevLMS/2] = int32(i - prevLMS + 1)
			}
			prevLMS = i
		}
	}
	sa[n1+(n-1)/2] = 1 // the sentinel is the last LMS substring
	name := int32(0)
	prev, prevLen := int32(-1), int32(0)
	for i := 0; i < n1; i++ {
		pos := sa[i]
		plen := sa[n1+int(pos/2)]
		if plen != prevLen || !slices.Equal(s[pos:pos+plen], s[prev:prev+plen]) {
			name++
			prev, prevLen = pos, plen
		}
		sa[n1+int(pos/2)] = name - 1 // LMS positions are at least 2 apart
	}
	for i, j := n-1, n-1; i >= n1; i-- {
		if sa[i] >= 0 {
			sa[j] = sa[i]
			j--
		}
	}

	// Stage 2: sort the reduced problem, recursively when names repeat.
	s1 := sa[n-n1:]
	sa1 := sa[:n1]
	if int(name) < n1 {
		saisRef(s1, sa1, int(name))
	} else {
		for i := 0; i < n1; i++ {
			sa1[s1[i]] = int32(i)
		}
	}

	// Stage 3: induce the full order from the sorted LMS suffixes.
	for i, j := 1, 0; i < n; i++ {
		if isLMS(int32(i)) {
			s1[j] = int32(i)
			j++
		}
	}
	for i := 0; i < n1; i++ {
		sa1[i] = s1[sa1[i]]
	}
	for i := n1; i < n; i++ {
		sa[i] = -1
	}
	refBucketEnds(cnt, bkt)
	for i := n1 - 1; i >= 0; i-- {
		j := sa[i]
		sa[i] = -1
		bkt[s[j]]--
		sa[bkt[s[j]]] = j
	}
	refInduceL(s, sa, t, cnt, bkt)
	refInduceS(s, sa, t, cnt, bkt)
}

func refBucketCounts(s []int32, bkt []int32) {
	for i := range bkt {
		bkt[i] = 0
	}
	for _, c := range s {
		bkt[c]++
	}
}

// refBucketEnds sets bkt[c] to the end (exclusive) of symbol c's bucket, from the counts cnt.
func refBucketEnds(cnt []int32, bkt []int32) {
	sum := int32(0)
	for i, c := range cnt {
		sum += c
		bkt[i] = sum
	}
}

// refBucketStarts sets bkt[c] to the start of symbol c's bucket, from the counts cnt.
func refBucketStarts(cnt []int32, bkt []int32) {
	sum := int32(0)
	for i, c := range cnt {
		bkt[i] = sum
		sum += c
	}
}

func refInduceL(s, sa []int32, t refBitset, cnt, bkt []int32) {
	refBucketStarts(cnt, bkt)
	for i := 0; i < len(sa); i++ {
		j := sa[i] - 1
		if j >= 0 && !t.get(int(j)) {
			sa[bkt[s[j]]] = j
			bkt[s[j]]++
		}
	}
}

func refInduceS(s, sa []int32, t refBitset, cnt, bkt []int32) {
	refBucketEnds(cnt, bkt)
	for i := len(sa) - 1; i >= 0; i-- {
		j := sa[i] - 1
		if j >= 0 && t.get(int(j)) {
			bkt[s[j]]--
			sa[bkt[s[j]]] = j
		}
	}
}

// refBitset is a fixed-size bit set.
type refBitset []uint64

func refNewBits(n int) refBitset   { return make(refBitset, (n+63)/64) }
func (b refBitset) set(i int)      { b[i>>6] |= 1 << (uint(i) & 63) }
func (b refBitset) get(i int) bool { return b[i>>6]&(1<<(uint(i)&63)) != 0 }
