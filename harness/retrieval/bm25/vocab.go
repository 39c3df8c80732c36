package bm25

import "hash/maphash"

// vocab is the analysis workers' shared vocabulary: lowercased token -> term id (or -1 for a stopword)
// in tok, and term -> term id in stems. Its ids (vocabulary ids) are given in whatever order the workers
// meet new terms; the accumulator renumbers them in document order (first occurrence), so the index does
// not depend on scheduling. Known tokens are looked up without a lock (tokView.lookupAll); new ones are
// resolved under tok.mu, which also guards stems and terms.
type vocab struct {
	an    Analyzer
	tok   *tokTable
	stems *termIndex
	seed  maphash.Seed
	terms chunkedStrings // by vocabulary id; read only under tok.mu or after the workers are done
}

func newVocab(an Analyzer) *vocab {
	return &vocab{an: an, tok: newTokTable(), stems: newTermIndex(), seed: maphash.MakeSeed()}
}

// resolveScratch is a worker's memory for vocab.resolve: per unknown token, its term and the term's hash
// (keep false: a stopword).
type resolveScratch struct {
	terms  []string
	hashes []uint64
	keep   []bool
}

// resolve replaces every tokUnknown in vals (the values of toks, spans of buf) by the token's id, adding
// new tokens (stopword test, Porter stemmer, term id) to the vocabulary. The terms of the unknown tokens
// and their hashes are computed before it takes tok.mu (once): at the start of a build nearly every token
// is new, and with Porter under the lock the workers took turns instead of running side by side. A
// token that another worker added meanwhile is found again under the lock, its term unused.
func (v *vocab) resolve(buf []byte, toks []tokRef, vals []int32, rs *resolveScratch) {
	rs.terms, rs.hashes, rs.keep = rs.terms[:0], rs.hashes[:0], rs.keep[:0]
	for i, id := range vals {
		if id != tokUnknown {
			continue
		}
		t, keep := termOf(v.an, buf[toks[i].s:toks[i].e])
		var h uint64
		if keep {
			h = maphash.String(v.seed, t)
		}
		rs.terms, rs.hashes, rs.keep = append(rs.terms, t), append(rs.hashes, h), append(rs.keep, keep)
	}
	v.tok.mu.Lock()
	defer v.tok.mu.Unlock()
	j := 0
	for i, id := range vals {
		if id != tokUnknown {
			continue
		}
		t, h, keep := rs.terms[j], rs.hashes[j], rs.keep[j]
		j++
		k := buf[toks[i].s:toks[i].e]
		if got, ok := v.tok.getLocked(k); ok {
			vals[i] = got
			continue
		}
		id = -1
		if keep {
			var tid uint32
			tid = v.stems.getOrAdd(t, h, &v.terms)
			id = int32(tid)
		}
		v.tok.putLocked(k, id)
		vals[i] = id
	}
	clear(rs.terms) // the strings are the vocabulary's now, or garbage
}

// release frees the token table and the stem index.
func (v *vocab) release() {
	v.tok.release()
	v.tok.mu.Lock()
	v.stems.release()
	v.tok.mu.Unlock()
}
