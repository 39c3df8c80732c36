package ngram

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
)

// Result is the answer to a count or co-occurrence query.
type Result struct {
	Count  uint64 `json:"count"`
	Approx bool   `json:"approx"`
}

// Counter answers the corpus-statistics questions of QuCo-RAG. The local index (exact mode), Compat
// (Infini-gram mode over a local index), the Infini-gram API client and the caches all satisfy it;
// Open builds one from a Config.
type Counter interface {
	// Count returns the number of occurrences of query: the token sequence of a phrase, counted
	// exactly (Approx false), or, for a CNF query ("a AND b OR c"), the count of its AND semantics
	// below.
	Count(ctx context.Context, query string) (Result, error)
	// CoOccur returns how often a and b occur near each other, as the CNF count of "a AND b" with a
	// window of window tokens:
	//
	//   - exact mode (*Index): the number of occurrences of the rarer of a and b (a on ties) that have
	//     an occurrence of the other starting within window tokens (|Δ| ≤ window) in the same
	//     document. An occurrence never pairs with itself, so a == b needs a second occurrence. The
	//     count is exact (Approx false).
	//   - Infini-gram mode (Compat, the public API, the authors' cache): Infini-gram's find_cnf. Each
	//     match of the rarer clause (chosen per shard) is joined with the nearest match of the other
	//     starting before it and the nearest starting at or after it, each kept when its start is within
	//     window tokens, into one span; a span that contains a document separator is dropped, and the
	//     spans left are counted. A match with a partner in its own document whose other-side partner
	//     lies across a document boundary is therefore not counted, where exact mode counts it. A clause
	//     more frequent than max_clause_freq is subsampled per shard and the count scaled up by an
	//     integer factor, with Approx true.
	//
	// A cache answers as the counter it recorded, and its keys tell the two modes apart.
	CoOccur(ctx context.Context, a, b string, window int) (Result, error)
}

// Mode selects the semantics of CNF (AND) queries.
type Mode int

const (
	// Exact counts the occurrences of the rarest clause that have, for every other clause, an
	// occurrence starting within the window in the same document.
	Exact Mode = iota
	// InfiniGram reproduces Infini-gram's engine: max_clause_freq subsampling with its approx flag,
	// merging of a match before and a match after into one span, and dropping spans that contain a
	// document separator.
	InfiniGram
)

// ParseMode parses "exact" or "infinigram".
func ParseMode(s string) (Mode, error) {
	switch strings.ToLower(s) {
	case "", "exact":
		return Exact, nil
	case "infinigram", "infini-gram", "compat":
		return InfiniGram, nil
	}
	return 0, fmt.Errorf("unknown mode %q: want exact or infinigram", s)
}

func (m Mode) String() string {
	if m == InfiniGram {
		return "infinigram"
	}
	return "exact"
}

// Infini-gram's defaults for CNF queries.
const (
	DefaultMaxClauseFreq = 50000
	DefaultMaxDiffTokens = 100
)

// CNFOptions configures CountCNF.
type CNFOptions struct {
	Mode          Mode
	MaxDiffTokens int    // the window, in tokens (0 is a window of 0; Infini-gram's default is DefaultMaxDiffTokens)
	MaxClauseFreq uint64 // InfiniGram mode only: subsampling threshold (default DefaultMaxClauseFreq)
}

// ParseCNF splits a query in Infini-gram's syntax into clauses of terms: " AND " separates clauses,
// " OR " separates terms within a clause (so OR binds tighter). A query without either is one term.
func ParseCNF(q string) [][]string {
	if !strings.Contains(q, " AND ") && !strings.Contains(q, " OR ") {
		return [][]string{{q}}
	}
	var out [][]string
	for _, c := range strings.Split(q, " AND ") {
		out = append(out, strings.Split(c, " OR "))
	}
	return out
}

// IsCNF reports whether q uses AND or OR.
func IsCNF(q string) bool { return strings.Contains(q, " AND ") || strings.Contains(q, " OR ") }

// TextCNF tokenizes the terms of a parsed CNF query. Terms with unknown tokens become nil (no
// occurrences).
func (ix *Index) TextCNF(cnf [][]string) ([][][]uint32, error) {
	out := make([][][]uint32, len(cnf))
	total := 0
	for i, c := range cnf {
		for _, term := range c {
			ids, known, err := ix.TokenIDs(nil, term)
			if err != nil {
				return nil, err
			}
			total += len(ids)
			if !known {
				ids = nil
				out[i] = append(out[i], nil)
				continue
			}
			out[i] = append(out[i], ids)
		}
	}
	if total > MaxQueryTokens {
		return nil, ErrQueryTooLong
	}
	return out, nil
}

// Count implements Counter: the exact count of the tokens of query (a CNF query is counted exactly
// with the default window).
func (ix *Index) Count(ctx context.Context, query string) (Result, error) {
	if IsCNF(query) {
		cnf, err := ix.TextCNF(ParseCNF(query))
		if err != nil {
			return Result{}, err
		}
		return ix.CountCNF(ctx, cnf, CNFOptions{MaxDiffTokens: DefaultMaxDiffTokens})
	}
	c, err := ix.CountText(query)
	return Result{Count: c}, err
}

// CoOccur implements Counter with exact semantics: the number of occurrences of the rarer of a and b
// (a on ties) that have an occurrence of the other starting within window tokens (|Δ| ≤ window) in
// the same document. An occurrence never pairs with itself, so for a == b another occurrence is needed.
func (ix *Index) CoOccur(ctx context.Context, a, b string, window int) (Result, error) {
	cnf, err := ix.TextCNF([][]string{{a}, {b}})
	if err != nil {
		return Result{}, err
	}
	return ix.CountCNF(ctx, cnf, CNFOptions{Mode: Exact, MaxDiffTokens: window})
}

// Compat is a Counter over an index with Infini-gram's approximate CNF semantics.
type Compat struct {
	Index         *Index
	MaxClauseFreq uint64
}

// Count implements Counter.
func (c Compat) Count(ctx context.Context, query string) (Result, error) {
	if IsCNF(query) {
		cnf, err := c.Index.TextCNF(ParseCNF(query))
		if err != nil {
			return Result{}, err
		}
		return c.Index.CountCNF(ctx, cnf, CNFOptions{Mode: InfiniGram, MaxDiffTokens: DefaultMaxDiffTokens, MaxClauseFreq: c.MaxClauseFreq})
	}
	return c.Index.Count(ctx, query)
}

// CoOccur implements Counter as Infini-gram's count of "a AND b" with max_diff_tokens = window.
func (c Compat) CoOccur(ctx context.Context, a, b string, window int) (Result, error) {
	cnf, err := c.Index.TextCNF([][]string{{a}, {b}})
	if err != nil {
		return Result{}, err
	}
	return c.Index.CountCNF(ctx, cnf, CNFOptions{Mode: InfiniGram, MaxDiffTokens: window, MaxClauseFreq: c.MaxClauseFreq})
}

type cnfTerm struct {
	q      []byte
	ranges [][2]uint64 // per shard
}

type cnfClause struct {
	terms    []cnfTerm
	total    uint64
	perShard []uint64
}

func (ix *Index) prepareCNF(cnf [][][]uint32) ([]cnfClause, error) {
	if len(cnf) == 0 {
		return nil, errors.New("empty CNF query")
	}
	n := 0
	for _, c := range cnf {
		if len(c) == 0 {
			return nil, errors.New("a CNF clause has no terms")
		}
		for _, t := range c {
			n += len(t)
		}
	}
	if n > MaxQueryTokens {
		return nil, ErrQueryTooLong
	}
	out := make([]cnfClause, len(cnf))
	for i, c := range cnf {
		cl := cnfClause{perShard: make([]uint64, len(ix.shards))}
		seen := map[string]bool{}
		for _, ids := range c {
			if ids == nil {
				continue // unknown tokens: no occurrences
			}
			if len(ids) == 0 {
				return nil, errors.New("a CNF term is empty")
			}
			q := ix.encode(nil, ids)
			if seen[string(q)] {
				continue
			}
			seen[string(q)] = true
			t := cnfTerm{q: q, ranges: make([][2]uint64, len(ix.shards))}
			for s, sh := range ix.shards {
				lo, hi := sh.find(q)
				t.ranges[s] = [2]uint64{lo, hi}
				cl.perShard[s] += hi - lo
				cl.total += hi - lo
			}
			cl.terms = append(cl.terms, t)
		}
		out[i] = cl
	}
	return out, nil
}

// CountCNF counts a CNF query given as token ids (clauses of terms; a nil term has no occurrences).
func (ix *Index) CountCNF(ctx context.Context, cnf [][][]uint32, opt CNFOptions) (Result, error) {
	if err := ctx.Err(); err != nil {
		return Result{}, err
	}
	if opt.MaxDiffTokens < 0 {
		return Result{}, fmt.Errorf("window %d: must not be negative", opt.MaxDiffTokens)
	}
	if opt.MaxClauseFreq == 0 {
		opt.MaxClauseFreq = DefaultMaxClauseFreq
	}
	clauses, err := ix.prepareCNF(cnf)
	if err != nil {
		return Result{}, err
	}
	for _, c := range clauses {
		if c.total == 0 {
			return Result{}, nil
		}
	}
	if opt.Mode == InfiniGram {
		return ix.countCNFCompat(ctx, clauses, opt)
	}
	if len(clauses) == 1 {
		return Result{Count: clauses[0].total}, nil
	}
	return ix.countCNFExact(ctx, clauses, opt.MaxDiffTokens)
}

// countCNFExact: occurrences of the rarest clause with, for every other clause, an occurrence within
// the window in the same document.
func (ix *Index) countCNFExact(ctx context.Context, clauses []cnfClause, window int) (Result, error) {
	r := 0
	for i, c := range clauses {
		if c.total < clauses[r].total {
			r = i
		}
	}
	w := uint64(window)
	var count uint64
	var pos []uint32
	var tmp []uint32
	others := make([][]uint32, 0, len(clauses)-1)
	otherIdx := make([]int, 0, len(clauses)-1)
	steps := 0
	for s, sh := range ix.shards {
		if clauses[r].perShard[s] == 0 {
			continue
		}
		others = others[:0]
		otherIdx = otherIdx[:0]
		skip := false
		for ci := range clauses {
			if ci == r {
				continue
			}
			c := &clauses[ci]
			if c.perShard[s] == 0 {
				skip = true
				break
			}
			pos = make([]uint32, 0, c.perShard[s])
			for _, t := range c.terms {
				rg := t.ranges[s]
				for k := rg[0]; k < rg[1]; k++ {
					pos = append(pos, uint32(sh.rankToPtr(k)/uint64(sh.width)))
				}
			}
			tmp = sortU32(pos, tmp)
			others = append(others, pos)
			otherIdx = append(otherIdx, ci)
		}
		if skip {
			continue
		}
		for _, tr := range clauses[r].terms {
			// ident[i]: clause otherIdx[i] contains the very term tr, so its occurrence at p is p itself.
			ident := make([]bool, len(others))
			for i, ci := range otherIdx {
				for _, t := range clauses[ci].terms {
					if bytes.Equal(t.q, tr.q) {
						ident[i] = true
					}
				}
			}
			rg := tr.ranges[s]
			for k := rg[0]; k < rg[1]; k++ {
				steps++
				if steps&1023 == 0 {
					if err := ctx.Err(); err != nil {
						return Result{}, err
					}
				}
				p := sh.rankToPtr(k) / uint64(sh.width)
				var dStart, dEnd uint64
				haveDoc := false
				all := true
				for i, lst := range others {
					if !nearWithin(sh, lst, p, w, ident[i], &haveDoc, &dStart, &dEnd) {
						all = false
						break
					}
				}
				if all {
					count++
				}
			}
		}
	}
	return Result{Count: count}, nil
}

// nearWithin reports whether the sorted token positions lst have an entry within w of p in p's
// document; when self is set, one entry equal to p is p's own occurrence and does not count.
func nearWithin(sh *shard, lst []uint32, p, w uint64, self bool, haveDoc *bool, dStart, dEnd *uint64) bool {
	i := sort.Search(len(lst), func(i int) bool { return uint64(lst[i]) >= p })
	eq := 0
	for i+eq < len(lst) && uint64(lst[i+eq]) == p {
		eq++
	}
	if eq > 0 && (!self || eq > 1) {
		return true
	}
	inDoc := func(q uint64) bool {
		if !*haveDoc {
			a, b := sh.docBounds(p * uint64(sh.width))
			*dStart, *dEnd = a/uint64(sh.width), b/uint64(sh.width)
			*haveDoc = true
		}
		return q >= *dStart && q < *dEnd
	}
	if i > 0 {
		q := uint64(lst[i-1])
		if p-q <= w && inDoc(q) {
			return true
		}
	}
	if j := i + eq; j < len(lst) {
		q := uint64(lst[j])
		if q-p <= w && inDoc(q) {
			return true
		}
	}
	return false
}

// sortU32 sorts a in place (LSD radix sort for large inputs) using tmp as scratch; it returns the
// scratch for reuse.
func sortU32(a, tmp []uint32) []uint32 {
	if len(a) < 512 {
		slices.Sort(a)
		return tmp
	}
	if cap(tmp) < len(a) {
		tmp = make([]uint32, len(a))
	}
	tmp = tmp[:len(a)]
	src, dst := a, tmp
	for shift := uint(0); shift < 32; shift += 16 {
		var cnt [1 << 16]int
		for _, v := range src {
			cnt[(v>>shift)&0xFFFF]++
		}
		sum := 0
		for i, c := range cnt {
			cnt[i] = sum
			sum += c
		}
		for _, v := range src {
			b := (v >> shift) & 0xFFFF
			dst[cnt[b]] = v
			cnt[b]++
		}
		src, dst = dst, src
	}
	// two passes: the result is back in a
	return tmp
}

// countCNFCompat follows Infini-gram's find_cnf.
func (ix *Index) countCNFCompat(ctx context.Context, clauses []cnfClause, opt CNFOptions) (Result, error) {
	ns := uint64(len(ix.shards))
	mcf := opt.MaxClauseFreq / ns
	if mcf == 0 {
		return Result{}, fmt.Errorf("max_clause_freq %d is smaller than the number of shards (%d)", opt.MaxClauseFreq, ns)
	}
	W := uint64(opt.MaxDiffTokens) * uint64(ix.width)
	// Subsample each clause per shard: segments and factor.
	type disj struct {
		segs   [][][2]uint64 // [shard][term]
		factor []float64
		cnt    []uint64
	}
	ds := make([]disj, len(clauses))
	for ci, c := range clauses {
		d := disj{segs: make([][][2]uint64, ns), factor: make([]float64, ns), cnt: make([]uint64, ns)}
		for s := range ix.shards {
			gen := newMT19937(19260817)
			var cnt uint64
			segs := make([][2]uint64, len(c.terms))
			for ti, t := range c.terms {
				segs[ti] = t.ranges[s]
				cnt += t.ranges[s][1] - t.ranges[s][0]
			}
			factor := 1.0
			if cnt > mcf {
				var newCnt uint64
				for ti, sg := range segs {
					length := sg[1] - sg[0]
					newLen := (length*mcf + (cnt - 1)) / cnt
					start := sg[0] + gen.uniform(length-newLen)
					segs[ti] = [2]uint64{start, start + newLen}
					newCnt += newLen
				}
				if newCnt == 0 {
					return Result{}, errors.New("infini-gram subsampling kept no occurrences")
				}
				factor = float64(cnt / newCnt) // Infini-gram divides integers here
			}
			d.segs[s], d.factor[s], d.cnt[s] = segs, factor, cnt
		}
		ds[ci] = d
	}
	var total uint64
	approx := false
	sep := bytes.Repeat([]byte{0xff}, ix.width)
	for s, sh := range ix.shards {
		if err := ctx.Err(); err != nil {
			return Result{}, err
		}
		order := make([]int, len(clauses))
		for i := range order {
			order[i] = i
		}
		sort.SliceStable(order, func(i, j int) bool { return ds[order[i]].cnt[s] < ds[order[j]].cnt[s] })
		first := ds[order[0]]
		var ranges [][2]uint64
		for _, sg := range first.segs[s] {
			for k := sg[0]; k < sg[1]; k++ {
				p := sh.rankToPtr(k)
				ranges = append(ranges, [2]uint64{p, p})
			}
		}
		factor := first.factor[s]
		for _, ci := range order[1:] {
			d := ds[ci]
			var ptrs []uint64
			for _, sg := range d.segs[s] {
				for k := sg[0]; k < sg[1]; k++ {
					ptrs = append(ptrs, sh.rankToPtr(k))
				}
			}
			slices.Sort(ptrs)
			var next [][2]uint64
			for _, lr := range ranges {
				l, r := lr[0], lr[1]
				lo := sort.Search(len(ptrs), func(i int) bool { return ptrs[i] >= r }) - 1 // last < r
				hi := sort.Search(len(ptrs), func(i int) bool { return ptrs[i] >= l })     // first >= l
				hasL, hasR := lo >= 0, hi < len(ptrs)
				var newL, newR uint64
				if hasL {
					newL = min(l, ptrs[lo])
				}
				if hasR {
					newR = max(r, ptrs[hi])
				}
				okL := hasL && newL+W >= l
				okR := hasR && newR <= r+W
				if okL && okR {
					next = append(next, [2]uint64{newL, newR})
				} else {
					if okL {
						next = append(next, [2]uint64{newL, l})
					}
					if okR {
						next = append(next, [2]uint64{r, newR})
					}
				}
			}
			ranges = next
			factor *= d.factor[s]
		}
		kept := 0
		for _, lr := range ranges {
			if bytes.Index(sh.ds[lr[0]:lr[1]], sep) < 0 {
				kept++
			}
		}
		total += uint64(float64(kept) * factor)
		if factor != 1.0 {
			approx = true
		}
	}
	return Result{Count: total, Approx: approx}, nil
}
