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
	terms []string // by vocabulary id; read only under tok.mu or after the workers are done
}

func newVocab(an Analyzer) *vocab {
	return &vocab{an: an, tok: newTokTable(), stems: newTermIndex(), seed: maphash.MakeSeed()}
}

// resolve replaces every tokUnknown in vals (the values of toks, spans of buf) by the token's id, adding
// new tokens (stopword test, Porter stemmer, term id) to the vocabulary. It takes tok.mu once.
func (v *vocab) resolve(buf []byte, toks []tokRef, vals []int32) {
	v.tok.mu.Lock()
	defer v.tok.mu.Unlock()
	for i, id := range vals {
		if id != tokUnknown {
			continue
		}
		k := buf[toks[i].s:toks[i].e]
		if got, ok := v.tok.getLocked(k); ok {
			vals[i] = got
			continue
		}
		id = -1
		if t, keep := termOf(v.an, k); keep {
			var tid uint32
			tid, v.terms = v.stems.getOrAdd(t, maphash.String(v.seed, t), v.terms)
			id = int32(tid)
		}
		v.tok.putLocked(k, id)
		vals[i] = id
	}
}

// release frees the token table and the stem index.
func (v *vocab) release() {
	v.tok.release()
	v.tok.mu.Lock()
	v.stems.release()
	v.tok.mu.Unlock()
}
