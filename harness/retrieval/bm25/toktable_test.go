package bm25

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"unsafe"
)

// TestTokTable checks the builder's hash table against a Go map, across growth and long keys.
func TestTokTable(t *testing.T) {
	tt := newTokTable()
	ref := map[string]int32{}
	for i := 0; i < 50000; i++ {
		k := fmt.Sprintf("k%d", i*7919%100003)
		if i%97 == 0 {
			k = strings.Repeat("x", 20+i%10) + k // some keys longer than inlineKey
		}
		tt.put([]byte(k), int32(i))
		ref[k] = int32(i)
	}
	for k, v := range ref {
		got, ok := tt.get([]byte(k))
		if !ok || got != v {
			t.Fatalf("get(%q) = %d, %v; want %d", k, got, ok, v)
		}
	}
	for _, k := range []string{"", "nope", strings.Repeat("y", 40)} {
		if _, ok := tt.get([]byte(k)); ok {
			t.Fatalf("get(%q) found a missing key", k)
		}
	}
}

// TestLookupAll checks the batched lookup against get, with the hot cache both cold and warm, for keys
// present, absent and longer than inlineKey.
func TestLookupAll(t *testing.T) {
	tt := newTokTable()
	var buf []byte
	var toks []tokRef
	want := map[string]int32{}
	for i := 0; i < 30000; i++ {
		k := fmt.Sprintf("w%d", i*7919%50021)
		if i%53 == 0 {
			k = strings.Repeat("L", 30) + k
		}
		if i%3 != 0 { // a third of the keys stay absent
			tt.put([]byte(k), int32(i))
			want[k] = int32(i)
		}
		start := len(buf)
		buf = append(buf, k...)
		toks = append(toks, tokRef{s: uint32(start), e: uint32(len(buf))})
	}
	view := newTokView(tt)
	for round := 0; round < 2; round++ {
		got, unknown := view.lookupAll(buf, toks, nil)
		nUnknown := 0
		for i, tk := range toks {
			k := string(buf[tk.s:tk.e])
			v, ok := want[k]
			if !ok || len(k) > inlineKey { // long keys are left to resolve
				v = tokUnknown
			}
			if got[i] != v {
				t.Fatalf("round %d: lookupAll(%q) = %d, want %d", round, k, got[i], v)
			}
			if v == tokUnknown {
				nUnknown++
			}
		}
		if unknown != nUnknown {
			t.Fatalf("round %d: lookupAll reported %d unknown tokens, want %d", round, unknown, nUnknown)
		}
	}
}

// TestTokTableConcurrent has goroutines insert overlapping key sets while they look keys up without the
// lock (run it with -race): every value found must be the key's, every key put must be found afterwards,
// and the table must grow many times meanwhile. With 200,000 keys the table outgrows hugeMin, so that
// arrays prepared in the background are taken over and replaced arrays are unmapped while the other
// goroutines read (a read of an unmapped array would crash the test); at the end no reader holds an
// array, so every replaced one must have been unmapped.
func TestTokTableConcurrent(t *testing.T) {
	for _, n := range []int{20000, 200000} {
		t.Run(fmt.Sprint(n), func(t *testing.T) { testTokTableConcurrent(t, n) })
	}
}

func testTokTableConcurrent(t *testing.T, n int) {
	tt := newTokTable()
	valOf := func(i int) int32 { return int32(i*31 + 7) }
	keyOf := func(i int) string {
		if i%101 == 0 {
			return strings.Repeat("L", 30) + fmt.Sprint(i)
		}
		return fmt.Sprintf("c%d", i)
	}
	var wg sync.WaitGroup
	errs := make(chan error, 4)
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			view := newTokView(tt)
			var buf []byte
			var toks []tokRef
			for i := g; i < n; i += 2 { // goroutines 0,2 and 1,3 insert the same keys
				k := keyOf(i)
				tt.put([]byte(k), valOf(i))
				// Look up a window of keys, some put by others, some not yet.
				buf, toks = buf[:0], toks[:0]
				for j := max(0, i-8); j < i+8; j++ {
					s := len(buf)
					buf = append(buf, keyOf(j)...)
					toks = append(toks, tokRef{s: uint32(s), e: uint32(len(buf))})
				}
				got, _ := view.lookupAll(buf, toks, nil)
				for x, v := range got {
					j := max(0, i-8) + x
					if v != tokUnknown && v != valOf(j) {
						errs <- fmt.Errorf("lookupAll(%q) = %d, want %d", keyOf(j), v, valOf(j))
						return
					}
					if j == i && len(keyOf(j)) <= inlineKey && v != valOf(j) {
						errs <- fmt.Errorf("lookupAll(%q) right after put = %d, want %d", keyOf(j), v, valOf(j))
						return
					}
				}
			}
		}(g)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	for i := 0; i < n; i++ {
		if v, ok := tt.get([]byte(keyOf(i))); !ok || v != valOf(i) {
			t.Fatalf("get(%q) = %d, %v; want %d", keyOf(i), v, ok, valOf(i))
		}
	}
	tt.mu.Lock()
	tt.reclaim()
	if len(tt.retired) != 0 {
		t.Errorf("%d replaced arrays still mapped with no reader", len(tt.retired))
	}
	big := 2*len(tt.cur.Load().slots)*int(unsafe.Sizeof(tokSlot{})) > 4*hugeMin
	tt.mu.Unlock()
	if n >= 200000 && !big {
		t.Errorf("the table did not outgrow hugeMin: the test no longer covers unmapping")
	}
	tt.release()
}

// TestTermIndex checks the accumulator's term index against a Go map: ids in order of first addition,
// stable on repeats, across growth, with many deliberately colliding hashes.
func TestTermIndex(t *testing.T) {
	x := newTermIndex()
	var list chunkedStrings
	ref := map[string]uint32{}
	for i := 0; i < 40000; i++ {
		j := i * 7919 % 20011
		k := fmt.Sprintf("t%d", j)
		h := uint64(j) * 0x9e3779b97f4a7c15
		if j%3 == 0 {
			h = uint64(len(k)) // equal hashes: only the string comparison tells these keys apart
		}
		want, ok := ref[k]
		if !ok {
			want = uint32(len(ref))
			ref[k] = want
		}
		got := x.getOrAdd(k, h, &list)
		if got != want || list.at(got) != k || list.len() != len(ref) {
			t.Fatalf("getOrAdd(%q) = %d (list has %d, entry %q); want %d (%d terms)", k, got, list.len(), list.at(got), want, len(ref))
		}
	}
}

// TestSortTerms checks the prefix-key dictionary sort against sorting the strings, on terms that share
// long prefixes, are prefixes of each other, hold bytes above 0x7f and a zero byte.
func TestSortTerms(t *testing.T) {
	terms := []string{"b", "abcdefghij", "abcdefghi", "abcdefgh", "abcdefg", "a", "abcdefgh\x00", "é", "zz", "abcdefghik", "ab\x00c", "ab"}
	for i := 0; i < 3000; i++ {
		terms = append(terms, fmt.Sprintf("abcdefg%d", i*7919%10007), fmt.Sprintf("x%d", i))
	}
	got := sortTerms(terms)
	want := make([]uint32, len(terms))
	for i := range want {
		want[i] = uint32(i)
	}
	sort.Slice(want, func(i, j int) bool { return terms[want[i]] < terms[want[j]] })
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("position %d: %q, want %q", i, terms[got[i]], terms[want[i]])
		}
	}
}

// TestTokTableHazard checks the unmapping of replaced arrays step by step: an array that a reader has
// announced stays mapped (and readable) across growth, and is unmapped once the reader lets go; one
// that no reader holds is unmapped at the growth itself.
func TestTokTableHazard(t *testing.T) {
	tt := newTokTable()
	defer tt.release()
	v := newTokView(tt)
	i := 0
	put := func() {
		tt.put([]byte(fmt.Sprintf("h%d", i)), int32(i))
		i++
	}
	slotBytes := int(unsafe.Sizeof(tokSlot{}))
	for len(tt.cur.Load().slots)*slotBytes < hugeMin { // from here on arrays are mapped, not on the heap
		put()
	}
	held := v.acquire()
	for tt.cur.Load() == held {
		put()
	}
	tt.mu.Lock()
	kept, nRetired := slices.Contains(tt.retired, held), len(tt.retired)
	tt.mu.Unlock()
	if !kept {
		t.Fatalf("the array a reader holds was not kept (retired: %d arrays)", nRetired)
	}
	var sum uint32
	for k := range held.slots { // still mapped: reading it must not crash
		sum += held.slots[k].hash
	}
	if sum == 0 {
		t.Fatalf("the held array reads as empty")
	}
	v.using.Store(nil)
	next := tt.cur.Load()
	for tt.cur.Load() == next {
		put()
	}
	tt.mu.Lock()
	nRetired = len(tt.retired)
	tt.mu.Unlock()
	if nRetired != 0 {
		t.Fatalf("%d replaced arrays still mapped after the growth with no reader holding them", nRetired)
	}
}
