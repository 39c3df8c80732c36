package dense

import "sort"

// topK keeps the k best results seen so far in a min-heap whose root is the worst kept result. Better
// means a higher score, and on equal scores a lower row.
type topK struct {
	k int
	h []Result
}

func newTopK(k int) *topK { return &topK{k: k, h: make([]Result, 0, k)} }

// worse reports whether a ranks below b.
func worse(a, b Result) bool {
	if a.Score != b.Score {
		return a.Score < b.Score
	}
	return a.Row > b.Row
}

// pushRow offers scores[i] for row base+i.
func (t *topK) pushRow(scores []float32, base int) {
	for i, s := range scores {
		if len(t.h) < t.k {
			t.h = append(t.h, Result{Row: base + i, Score: s})
			t.up(len(t.h) - 1)
			continue
		}
		// Rows arrive in increasing order, so an equal score never beats the root.
		if s <= t.h[0].Score {
			continue
		}
		t.h[0] = Result{Row: base + i, Score: s}
		t.down(0)
	}
}

// push offers one result, in any row order.
func (t *topK) push(r Result) {
	if len(t.h) < t.k {
		t.h = append(t.h, r)
		t.up(len(t.h) - 1)
		return
	}
	if !worse(t.h[0], r) {
		return
	}
	t.h[0] = r
	t.down(0)
}

func (t *topK) up(i int) {
	for i > 0 {
		p := (i - 1) / 2
		if !worse(t.h[i], t.h[p]) {
			break
		}
		t.h[i], t.h[p] = t.h[p], t.h[i]
		i = p
	}
}

func (t *topK) down(i int) {
	n := len(t.h)
	for {
		l := 2*i + 1
		if l >= n {
			return
		}
		c := l
		if r := l + 1; r < n && worse(t.h[r], t.h[l]) {
			c = r
		}
		if !worse(t.h[c], t.h[i]) {
			return
		}
		t.h[i], t.h[c] = t.h[c], t.h[i]
		i = c
	}
}

// sorted returns the kept results best first.
func (t *topK) sorted() []Result {
	out := append([]Result(nil), t.h...)
	sort.Slice(out, func(i, j int) bool { return worse(out[j], out[i]) })
	return out
}
