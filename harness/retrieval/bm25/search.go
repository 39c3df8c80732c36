package bm25

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"math"
	"math/bits"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"slices"
	"sort"
	"sync"

	"github.com/ragbench/ragbench/internal/mmap"

	"github.com/ragbench/ragbench/harness/retrieval"
)

// Index is an opened, memory-mapped BM25 index. It is safe for concurrent use.
type Index struct {
	dir  string
	meta Meta

	docs, docOff, norms, lens, terms, termOff, termInfo, postings []byte
	maps                                                          [][]byte
	frees                                                         []func() // Close releases the files read into memory (OpenOptions.HugePostings)

	nTerms int
	params Params
	k      [256]float64 // the norm table of params
	tf     tfTable      // tfNorm(tf, k[norm]) for tf 1 to tfTabMax (taat.go); its first row is a tf = 1 posting's factor

	termTab termTable // the dictionary's hash table, built on the first lookup (termhash.go)
}

// Params are the scoring parameters of a search.
type Params struct {
	// K1 and B are BM25's parameters.
	K1, B float64
	// ExactLength scores with each document's exact length instead of Lucene's one-byte quantised
	// length (see lengthToNorm). Off by default, so that scores match Lucene.
	ExactLength bool
}

// OpenOptions configure Open.
type OpenOptions struct {
	// SkipChecksums skips the CRC-32C check of every file (sizes are always checked). Checking reads the
	// whole index once; skip it for very large indexes that were checked before.
	SkipChecksums bool
	// HugePostings reads postings.bin, on Linux and when it has hugePostingsMin (4 MiB) to
	// hugePostingsMax (2 GiB) bytes, into anonymous memory advised to use transparent huge pages
	// (hugeAlloc) instead of mapping it like the other files: a search touches a few postings here and
	// there all over the file, and with 4 KiB pages most of those touches also miss the TLB. It costs the
	// file's size in resident memory beside the page cache's copy, and a read of the file at Open. Off by
	// default: the index is memory-mapped on open.
	HugePostings bool
}

// hugePostingsMin and hugePostingsMax bound the size of a postings file that Open reads into huge pages
// (see OpenOptions.HugePostings). hugePostingsMin is a variable only so that tests can take the path with
// small indexes.
var hugePostingsMin int64 = hugeMin

const hugePostingsMax = 2 << 30

// fileSizeIn reports whether the file at path has size bytes, from lo to hi (a file that cannot be
// stat-ed does not: it is then mapped, and the mapping reports the error).
func fileSizeIn(path string, size, lo, hi int64) bool {
	st, err := os.Stat(path)
	return err == nil && st.Size() == size && size >= lo && size <= hi
}

// readHuge reads the file at path, of size bytes, into memory from hugeAlloc; free releases it.
func readHuge(path string, size int64) (b []byte, free func(), err error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	b, free = hugeAlloc[byte](int(size))
	if _, err := io.ReadFull(f, b); err != nil {
		if free != nil {
			free()
		}
		return nil, nil, fmt.Errorf("read %s: %w", path, err)
	}
	return b, free, nil
}

// Open maps the index in dir. A missing or corrupt file (wrong size, wrong checksum, inconsistent
// tables) is an error naming it.
func Open(dir string) (*Index, error) { return OpenWith(dir, OpenOptions{}) }

// OpenWith is Open with options.
func OpenWith(dir string, opt OpenOptions) (*Index, error) {
	m, err := ReadMeta(dir)
	if err != nil {
		return nil, err
	}
	ix := &Index{dir: dir, meta: *m}
	ok := false
	defer func() {
		if !ok {
			ix.Close()
		}
	}()
	dst := map[string]*[]byte{fileDocs: &ix.docs, fileDocOff: &ix.docOff, fileNorms: &ix.norms, fileLens: &ix.lens,
		fileTerms: &ix.terms, fileTermOff: &ix.termOff, fileTermInfo: &ix.termInfo, filePostings: &ix.postings}
	for _, name := range dataFiles {
		want, listed := m.Files[name]
		if !listed {
			return nil, fmt.Errorf("bm25 index %s: %s does not list %s", dir, fileMeta, name)
		}
		var b []byte
		path := filepath.Join(dir, name)
		if name == filePostings && opt.HugePostings && runtime.GOOS == "linux" && fileSizeIn(path, want.Size, hugePostingsMin, hugePostingsMax) {
			var free func()
			if b, free, err = readHuge(path, want.Size); err != nil {
				return nil, fmt.Errorf("bm25 index %s: %w", dir, err)
			}
			if free != nil {
				ix.frees = append(ix.frees, free)
			}
		} else {
			if b, err = mmap.Map(path); err != nil {
				return nil, fmt.Errorf("bm25 index %s: %w", dir, err)
			}
			ix.maps = append(ix.maps, b)
		}
		*dst[name] = b
		if int64(len(b)) != want.Size {
			return nil, fmt.Errorf("bm25 index %s: %s is %d bytes, want %d: the index is corrupt or incomplete; rebuild it", dir, name, len(b), want.Size)
		}
		if !opt.SkipChecksums {
			if got := crc32.Checksum(b, castagnoli); got != want.CRC32C {
				return nil, fmt.Errorf("bm25 index %s: %s checksum %08x, want %08x: the index is corrupt; rebuild it", dir, name, got, want.CRC32C)
			}
		}
	}
	n := m.Docs
	V := m.Terms
	switch {
	case int64(len(ix.docOff)) != 8*(n+1):
		err = fmt.Errorf("%s has %d bytes for %d documents", fileDocOff, len(ix.docOff), n)
	case int64(len(ix.norms)) != n:
		err = fmt.Errorf("%s has %d bytes for %d documents", fileNorms, len(ix.norms), n)
	case int64(len(ix.lens)) != 4*n:
		err = fmt.Errorf("%s has %d bytes for %d documents", fileLens, len(ix.lens), n)
	case int64(len(ix.termOff)) != 8*(V+1):
		err = fmt.Errorf("%s has %d bytes for %d terms", fileTermOff, len(ix.termOff), V)
	case int64(len(ix.termInfo)) != termInfoSize*V:
		err = fmt.Errorf("%s has %d bytes for %d terms", fileTermInfo, len(ix.termInfo), V)
	case binary.LittleEndian.Uint64(ix.docOff[8*n:]) != uint64(len(ix.docs)):
		err = fmt.Errorf("%s does not end at the size of %s", fileDocOff, fileDocs)
	case binary.LittleEndian.Uint64(ix.termOff[8*V:]) != uint64(len(ix.terms)):
		err = fmt.Errorf("%s does not end at the size of %s", fileTermOff, fileTerms)
	}
	if err != nil {
		return nil, fmt.Errorf("bm25 index %s: %w: the index is corrupt; rebuild it", dir, err)
	}
	ix.nTerms = int(V)
	if err := ix.SetParams(Params{K1: m.K1, B: m.B}); err != nil {
		return nil, err
	}
	ok = true
	return ix, nil
}

// HugePostings reports whether Open read postings.bin into memory (OpenOptions.HugePostings) rather
// than mapping it.
func (ix *Index) HugePostings() bool { return len(ix.frees) > 0 }

// Close unmaps the index and releases what Open read into memory. The Index must not be used afterwards.
func (ix *Index) Close() error {
	err := mmap.UnmapAll(ix.maps)
	ix.maps = nil
	for _, free := range ix.frees {
		free()
	}
	ix.frees = nil
	return err
}

// Meta returns the index's description.
func (ix *Index) Meta() Meta { return ix.meta }

// Len returns the number of documents.
func (ix *Index) Len() int { return int(ix.meta.Docs) }

// SetParams changes the scoring parameters (by default the index's K1 and B, quantised lengths). It must
// not be called concurrently with searches.
func (ix *Index) SetParams(p Params) error {
	if p.K1 < 0 || p.B < 0 || p.B > 1 || math.IsNaN(p.K1) || math.IsNaN(p.B) {
		return fmt.Errorf("bm25: k1=%g b=%g: want k1 >= 0 and 0 <= b <= 1", p.K1, p.B)
	}
	ix.params = p
	ix.k = normTable(p.K1, p.B, ix.meta.AvgDL())
	ix.tf.build(&ix.k)
	return nil
}

// Params returns the current scoring parameters.
func (ix *Index) Params() Params { return ix.params }

// normTable gives, for each norm byte, k1 * (1 - b + b * dl / avgdl) with dl the decoded length.
func normTable(k1, b, avgdl float64) [256]float64 {
	var t [256]float64
	if avgdl <= 0 {
		avgdl = 1
	}
	for i := range t {
		t[i] = k1 * (1 - b + b*float64(normToLength(uint8(i)))/avgdl)
	}
	return t
}

// lengthK is k1 * (1 - b + b * dl / avgdl) for an exact length.
func (ix *Index) lengthK(dl uint32) float64 {
	avgdl := ix.meta.AvgDL()
	if avgdl <= 0 {
		avgdl = 1
	}
	return ix.params.K1 * (1 - ix.params.B + ix.params.B*float64(dl)/avgdl)
}

// tfNorm is BM25's saturating term-frequency factor tf / (tf + K), as Lucene 8+ computes it (without
// the constant k1 + 1 numerator, which does not change rankings).
func tfNorm(tf, k float64) float64 {
	if tf == 0 {
		return 0
	}
	return tf / (tf + k)
}

// IDF is Lucene's BM25 idf: ln(1 + (N - df + 0.5) / (df + 0.5)), with N the number of documents that
// have terms.
func IDF(df, n int64) float64 {
	return math.Log(1 + (float64(n)-float64(df)+0.5)/(float64(df)+0.5))
}

func (ix *Index) term(i int) []byte {
	a := binary.LittleEndian.Uint64(ix.termOff[8*i:])
	b := binary.LittleEndian.Uint64(ix.termOff[8*i+8:])
	return ix.terms[a:b]
}

type termInfo struct {
	off    uint64
	df     uint32
	maxTf  uint32
	bound  float32
	minNrm uint8
}

func (ix *Index) info(i int) termInfo {
	r := ix.termInfo[termInfoSize*i:]
	return termInfo{
		off:    binary.LittleEndian.Uint64(r),
		df:     binary.LittleEndian.Uint32(r[8:]),
		maxTf:  binary.LittleEndian.Uint32(r[12:]),
		bound:  math.Float32frombits(binary.LittleEndian.Uint32(r[16:])),
		minNrm: r[20],
	}
}

// The kinds of posting list (a term has one list, or two when it is dense; see postings.go).
const (
	listBlocks = iota // block-encoded postings
	listDense         // a dense term's tf >= 2 bitmap, with ranks and tf nibbles
	listOnes          // a dense term's tf = 1 bitmap
)

// termList is one posting list of a term.
type termList struct {
	kind   int
	off    uint64  // listBlocks: the offset of the skip entries in postings.bin
	n      uint32  // postings in the list
	bound  float32 // the largest tf/(tf+K) in the list under the index's default parameters (or more)
	maxTf  uint32  // the largest tf in the list (or more)
	minNrm uint8   // the smallest norm byte in the list (or less)

	bits, dir, nib, esc []byte // dense lists: bitmap, directory, tf nibbles and escapes
}

// lists returns the posting lists of a term whose dictionary record is inf, without empty ones. It
// checks that they lie within postings.bin.
func (ix *Index) lists(inf termInfo) ([2]termList, int, error) {
	var ls [2]termList
	post := ix.postings
	if inf.df == 0 || inf.off >= uint64(len(post)) {
		return ls, 0, errCorrupt
	}
	switch post[inf.off] {
	case kindBlocks:
		ls[0] = termList{kind: listBlocks, off: inf.off + 1, n: inf.df, bound: inf.bound, maxTf: inf.maxTf, minNrm: inf.minNrm}
		return ls, 1, nil
	case kindDense:
		if inf.off+denseHeaderSize > uint64(len(post)) {
			return ls, 0, errCorrupt
		}
		h := post[inf.off+1:]
		nEsc := uint64(binary.LittleEndian.Uint32(h))
		nHi := binary.LittleEndian.Uint32(h[4:])
		if nHi > inf.df {
			return ls, 0, errCorrupt
		}
		words, dirs := denseSizes(ix.Len())
		p := inf.off + denseHeaderSize
		// parts: tf >= 2 bitmap, directory, nibbles, escapes (hiBits only); tf = 1 bitmap, directory.
		var parts [6][]byte
		sizes := [6]uint64{8 * uint64(words), dirEntrySize * uint64(dirs), (uint64(nHi) + 1) / 2, escEntrySize * nEsc,
			8 * uint64(words), oneEntrySize * uint64(dirs)}
		first := 0
		hiForm := h[13]
		switch hiForm {
		case hiBits:
		case hiBlocks:
			if nEsc != 0 {
				return ls, 0, errCorrupt
			}
			first = 4
			if nHi > 0 {
				end, err := listEnd(post, p, nHi)
				if err != nil {
					return ls, 0, err
				}
				parts[0] = post[p:end] // the block list, for the error check below only
				p = end
			}
		default:
			return ls, 0, errCorrupt
		}
		for i := first; i < len(sizes); i++ {
			n := sizes[i]
			if p+n > uint64(len(post)) {
				return ls, 0, errCorrupt
			}
			parts[i] = post[p : p+n]
			p += n
		}
		nl := 0
		if nHi > 0 {
			// The tf >= 2 list keeps the term's bounds (valid for any part of its postings).
			ls[nl] = termList{kind: listDense, n: nHi, bound: inf.bound, maxTf: inf.maxTf, minNrm: inf.minNrm,
				bits: parts[0], dir: parts[1], nib: parts[2], esc: parts[3]}
			if hiForm == hiBlocks {
				ls[nl] = termList{kind: listBlocks, off: inf.off + denseHeaderSize, n: nHi, bound: inf.bound, maxTf: inf.maxTf, minNrm: inf.minNrm}
			}
			nl++
		}
		if nHi < inf.df {
			ls[nl] = termList{kind: listOnes, n: inf.df - nHi, bound: math.Float32frombits(binary.LittleEndian.Uint32(h[9:])),
				maxTf: 1, minNrm: h[8], bits: parts[4], dir: parts[5]}
			nl++
		}
		return ls, nl, nil
	}
	return ls, 0, errCorrupt
}

// listEnd returns the offset just past the block-encoded list of n > 0 postings whose skip entries start
// at off.
func listEnd(post []byte, off uint64, n uint32) (uint64, error) {
	nb := (uint64(n) + blockSize - 1) / blockSize
	end := off + nb*skipEntrySize
	if end > uint64(len(post)) {
		return 0, errCorrupt
	}
	dataLen := uint64(binary.LittleEndian.Uint32(post[end-skipEntrySize+4:]))
	if end+dataLen > uint64(len(post)) {
		return 0, errCorrupt
	}
	return end + dataLen, nil
}

// Doc returns the stored document with ordinal i.
func (ix *Index) Doc(i int) (id, title, text string, err error) {
	if i < 0 || i >= ix.Len() {
		return "", "", "", fmt.Errorf("bm25: document %d out of range", i)
	}
	a := binary.LittleEndian.Uint64(ix.docOff[8*i:])
	b := binary.LittleEndian.Uint64(ix.docOff[8*i+8:])
	if a > b || b > uint64(len(ix.docs)) {
		return "", "", "", fmt.Errorf("bm25 index %s: document %d: bad offsets: the index is corrupt", ix.dir, i)
	}
	rec := ix.docs[a:b]
	var l [3]uint64
	p := 0
	for j := range l {
		v, n := binary.Uvarint(rec[p:])
		if n <= 0 {
			return "", "", "", fmt.Errorf("bm25 index %s: document %d: bad record: the index is corrupt", ix.dir, i)
		}
		l[j] = v
		p += n
	}
	if uint64(p)+l[0]+l[1]+l[2] != uint64(len(rec)) {
		return "", "", "", fmt.Errorf("bm25 index %s: document %d: bad record: the index is corrupt", ix.dir, i)
	}
	id = string(rec[p : p+int(l[0])])
	p += int(l[0])
	title = string(rec[p : p+int(l[1])])
	p += int(l[1])
	text = string(rec[p : p+int(l[2])])
	return id, title, text, nil
}

// Verify decodes every posting list and checks it: document ordinals strictly increasing and in range,
// frequencies positive, counts matching the dictionary, and the stored score bounds holding. It reads the
// whole index; Open checks checksums, Verify checks the structure behind them.
func (ix *Index) Verify() (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("bm25 index %s: %v", ix.dir, r)
		}
	}()
	K := normTable(ix.meta.K1, ix.meta.B, ix.meta.AvgDL())
	var total int64
	for i := 0; i < ix.nTerms; i++ {
		if i > 0 && bytes.Compare(ix.term(i-1), ix.term(i)) >= 0 {
			return fmt.Errorf("bm25 index %s: terms %q and %q out of order", ix.dir, ix.term(i-1), ix.term(i))
		}
		inf := ix.info(i)
		ls, nl, err := ix.lists(inf)
		if err != nil {
			return fmt.Errorf("bm25 index %s: term %q: %w", ix.dir, ix.term(i), err)
		}
		n := 0
		var cs [2]cursor
		for j, l := range ls[:nl] {
			c := &cs[j]
			if err := c.init(ix.postings, l, ix.Len()); err != nil {
				return fmt.Errorf("bm25 index %s: term %q: %w", ix.dir, ix.term(i), err)
			}
			m, prev, escs := 0, int64(-1), 0
			for c.next(); c.doc != noDoc; c.next() {
				bad := int64(c.doc) <= prev || int64(c.doc) >= ix.meta.Docs || c.tf == 0 ||
					l.kind == listOnes && c.tf != 1 || nl == 2 && j == 0 && c.tf < 2 || l.kind == listDense && c.rankBefore(c.doc) != c.rank
				if bad {
					return fmt.Errorf("bm25 index %s: term %q: list %d: posting %d (doc %d, tf %d) out of order or range", ix.dir, ix.term(i), j, m, c.doc, c.tf)
				}
				if v := float32(tfNorm(float64(c.tf), K[ix.norms[c.doc]])); v > l.bound || v > float32(c.blockBound(c.block)) ||
					c.tf > l.maxTf || ix.norms[c.doc] < l.minNrm {
					return fmt.Errorf("bm25 index %s: term %q: list %d: doc %d exceeds the stored bounds", ix.dir, ix.term(i), j, c.doc)
				}
				if l.kind == listDense && c.tf > 15 {
					escs++
				}
				prev = int64(c.doc)
				m++
			}
			if m != int(l.n) || escs != len(l.esc)/escEntrySize {
				return fmt.Errorf("bm25 index %s: term %q: list %d has %d postings (%d escapes), its header says %d (%d)", ix.dir, ix.term(i), j, m, escs, l.n, len(l.esc)/escEntrySize)
			}
			n += m
		}
		if nl == 2 {
			// Every posting is in exactly one list: probe the tf = 1 bitmap for the other list's documents.
			a, b := &cs[0], &cs[1]
			a.init(ix.postings, ls[0], ix.Len())
			b.init(ix.postings, ls[1], ix.Len())
			for a.next(); a.doc != noDoc; a.next() {
				if b.probe(a.doc) != 0 {
					return fmt.Errorf("bm25 index %s: term %q: doc %d is in both posting lists", ix.dir, ix.term(i), a.doc)
				}
			}
		}
		if n != int(inf.df) {
			return fmt.Errorf("bm25 index %s: term %q: %d postings, dictionary says %d", ix.dir, ix.term(i), n, inf.df)
		}
		total += int64(n)
	}
	if total != ix.meta.Postings {
		return fmt.Errorf("bm25 index %s: %d postings, meta says %d", ix.dir, total, ix.meta.Postings)
	}
	return nil
}

// ScoredDoc is a document ordinal with its score.
type ScoredDoc struct {
	Doc   uint32
	Score float64
}

// queryTerm is one posting list of a distinct analyzed query term (a term has one or two lists, see
// postings.go); the lists of a term share its term, pos and weight.
type queryTerm struct {
	term   string
	pos    int      // position in the query's canonical (first-occurrence) order
	weight float64  // idf times the term's count in the query
	ub     float64  // upper bound of the list's contribution to any document
	key    float64  // sortByBound's sort key
	bscale float64  // weight times padding, to turn a block's stored bound into a score bound; 0 when the stored bounds do not apply
	list   termList // the list cur iterates, to start it again
	cur    cursor
}

var errCorrupt = errors.New("corrupt postings")

// qtPool recycles query terms: each holds a cursor with block buffers of a few kilobytes, which would
// otherwise be allocated and zeroed for every list of every query.
var qtPool = sync.Pool{New: func() any { return new(queryTerm) }}

// release returns query terms to the pool; they must not be used afterwards.
func release(qts []*queryTerm) {
	for _, q := range qts {
		qtPool.Put(q)
	}
}

// Retrieve returns the top k documents for the query, best first; it implements retrieval.Retriever. A
// query without indexed terms (for example only stopwords) returns no hits and no error.
func (ix *Index) Retrieve(ctx context.Context, query string, k int) ([]retrieval.Hit, error) {
	top, err := ix.Search(ctx, query, k)
	if err != nil {
		return nil, err
	}
	hits := make([]retrieval.Hit, len(top))
	for i, s := range top {
		id, title, text, err := ix.Doc(int(s.Doc))
		if err != nil {
			return nil, err
		}
		hits[i] = retrieval.Hit{ID: id, Title: title, Text: text, Score: s.Score, Rank: i + 1}
	}
	return hits, nil
}

// Search returns the ordinals and scores of the top k documents, best first; ties go to the lower
// ordinal (earlier document), as in Lucene.
func (ix *Index) Search(ctx context.Context, query string, k int) (top []ScoredDoc, err error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if k <= 0 {
		return nil, nil
	}
	qts, err := ix.prepare(query)
	if err != nil || len(qts) == 0 {
		return nil, err
	}
	defer release(qts)
	defer func() {
		// A sound index does not panic: either its files were damaged (opened without checksums, or
		// changed since) or this is a bug. The checksums tell which.
		if r := recover(); r != nil {
			top, err = nil, ix.searchFailure(query, r)
		}
	}()
	sort.SliceStable(qts, func(i, j int) bool { return qts[i].ub < qts[j].ub })
	return ix.maxScore(qts, k, ix.initialTheta(qts, k)), nil
}

// searchFailure returns the error of a search of query that panicked with r: a corrupt index when a
// file of it no longer matches the checksum in its meta.json, and otherwise an internal error, with the
// stack, that names no index damage.
func (ix *Index) searchFailure(query string, r any) error {
	if err := ix.checkSums(); err != nil {
		return fmt.Errorf("bm25 index %s: query %q: %v: %w", ix.dir, query, r, err)
	}
	return fmt.Errorf("bm25 index %s: query %q: internal error (the index files match their checksums; please report this): %v\n%s", ix.dir, query, r, debug.Stack())
}

// checkSums compares every data file of the index, as the search reads it, with its CRC-32C in
// meta.json, and returns an error naming the first that differs.
func (ix *Index) checkSums() error {
	files := map[string][]byte{fileDocs: ix.docs, fileDocOff: ix.docOff, fileNorms: ix.norms, fileLens: ix.lens,
		fileTerms: ix.terms, fileTermOff: ix.termOff, fileTermInfo: ix.termInfo, filePostings: ix.postings}
	for _, name := range dataFiles {
		if got, want := crc32.Checksum(files[name], castagnoli), ix.meta.Files[name].CRC32C; got != want {
			return fmt.Errorf("%s checksum %08x, want %08x: the index is corrupt; rebuild it", name, got, want)
		}
	}
	return nil
}

// prepare analyzes the query and opens a cursor per distinct term found in the index. A term repeated in
// the query counts that many times, as in Lucene's boolean query of one clause per token.
func (ix *Index) prepare(query string) ([]*queryTerm, error) {
	count := map[string]int{}
	var order []string
	for _, t := range analyze(ix.meta.Analyzer, query) {
		if count[t] == 0 {
			order = append(order, t)
		}
		count[t]++
	}
	var qts []*queryTerm
	for _, t := range order {
		i, ok := ix.lookup(t)
		if !ok {
			continue
		}
		inf := ix.info(i)
		w := float64(count[t]) * IDF(int64(inf.df), ix.meta.DocCount)
		ls, nl, err := ix.lists(inf)
		if err != nil {
			return nil, fmt.Errorf("bm25 index %s: term %q: %w", ix.dir, t, err)
		}
		pos := 0
		if len(qts) > 0 {
			pos = qts[len(qts)-1].pos + 1
		}
		for _, l := range ls[:nl] {
			qt := qtPool.Get().(*queryTerm)
			qt.term, qt.weight, qt.pos, qt.ub, qt.bscale, qt.list = t, w, pos, 0, 0, l
			if err := qt.cur.init(ix.postings, l, ix.Len()); err != nil {
				return nil, fmt.Errorf("bm25 index %s: term %q: %w", ix.dir, t, err)
			}
			// The bounds stored at build time are exact for the index's default parameters; otherwise bound
			// the factor with the largest tf and the shortest length (decoded lengths never exceed exact ones).
			var bound float64
			if !ix.params.ExactLength && ix.params.K1 == ix.meta.K1 && ix.params.B == ix.meta.B {
				bound = float64(l.bound)
				qt.bscale = w * (1 + 1e-6)
			} else {
				bound = tfNorm(float64(l.maxTf), ix.k[l.minNrm])
			}
			qt.ub = w * bound * (1 + 1e-6)
			qts = append(qts, qt)
		}
	}
	return qts, nil
}

// score is the contribution of a posting.
func (ix *Index) score(qt *queryTerm, doc, tf uint32) float64 {
	var k float64
	if ix.params.ExactLength {
		k = ix.lengthK(binary.LittleEndian.Uint32(ix.lens[4*doc:]))
	} else {
		k = ix.k[ix.norms[doc]]
	}
	return qt.weight * tfNorm(float64(tf), k)
}

// sampleBlocks is how many blocks (for a dense list: directory windows) of a list initialTheta scores.
const sampleBlocks = 1

// sampleLeads is how many lists initialTheta samples at most, while fewer than k documents are found.
const sampleLeads = 3

// sampleList appends to sample the documents of the sampleBlocks blocks with the largest bounds of q's
// list, in document order, and to tfs their tfs in the list (when tfs is not nil), and starts q's
// cursor again.
func (ix *Index) sampleList(q *queryTerm, sample, tfs []uint32) ([]uint32, []uint32) {
	c := &q.cur
	var blocks [sampleBlocks]int
	var bb [sampleBlocks]float64
	nb := 0
	for b := 0; b < c.nb; b++ {
		v := c.blockBound(b)
		if nb < sampleBlocks {
			blocks[nb], bb[nb] = b, v
			nb++
			continue
		}
		m := 0
		for i := 1; i < nb; i++ {
			if bb[i] < bb[m] {
				m = i
			}
		}
		if v > bb[m] {
			copy(blocks[m:], blocks[m+1:nb])
			copy(bb[m:], bb[m+1:nb])
			blocks[nb-1], bb[nb-1] = b, v
		}
	}
	c.next() // a fresh cursor stands before its first posting, where advance would not move it
	for _, b := range blocks[:nb] {
		first := uint32(0)
		if b > 0 {
			first = c.lastDoc(b-1) + 1
		}
		last := c.lastDoc(b)
		for c.advance(first); c.doc <= last && c.doc != noDoc; c.next() {
			sample = append(sample, c.doc)
			if tfs != nil {
				tfs = append(tfs, c.tf)
			}
		}
	}
	c.init(ix.postings, q.list, ix.Len()) // cannot fail: it did in prepare
	return sample, tfs
}

// initialTheta returns a threshold that the k-th score of the query's result is known to reach: the k-th
// exact score among the documents of the sampleBlocks blocks with the largest bounds in the list with the
// largest bound (the rarest term's), and in the next lists while fewer than k documents are found (up to
// sampleLeads lists), or -Inf when there are still fewer than k or the stored bounds do not apply.
// Starting MaxScore from it prunes from the first candidate on, instead of only after the top
// k filled up with the earliest documents. It scores as maxScore does (contributions summed in query
// order), so the threshold is the exact score of a real document and no document of the result falls
// below it. qts must be sorted by bound; its cursors are started again afterwards.
func (ix *Index) initialTheta(qts []*queryTerm, k int) float64 {
	theta := math.Inf(-1)
	if ix.params.ExactLength || len(qts) == 0 {
		return theta
	}
	for _, q := range qts {
		if q.bscale == 0 {
			return theta
		}
	}
	// The sampleBlocks blocks with the largest bounds of the list with the largest bound, and of the next
	// lists while fewer than k documents are found (up to sampleLeads lists).
	var sampleBuf [sampleLeads * sampleBlocks * max(blockSize, denseWindow)]uint32
	var tfBuf [sampleBlocks * max(blockSize, denseWindow)]uint32
	sample := sampleBuf[:0]
	// lead is the first sampled list while it is the only one, and leadTfs the tfs of its sample, which
	// then need no lookup (the documents are its postings, in document order).
	lead, leadTfs := qts[len(qts)-1], tfBuf[:0]
	leads := 0
	for i := len(qts) - 1; i >= 0 && leads < sampleLeads && len(sample) < k; i-- {
		leads++
		if leads == 1 {
			sample, leadTfs = ix.sampleList(qts[i], sample, leadTfs)
		} else {
			sample, _ = ix.sampleList(qts[i], sample, nil)
		}
	}
	if leads > 1 {
		slices.Sort(sample)
		sample = slices.Compact(sample) // a document can be in the blocks of several lists
		lead, leadTfs = nil, nil
	}
	if len(sample) < k {
		return theta
	}
	npos := 0
	for _, q := range qts {
		npos = max(npos, q.pos+1)
	}
	var contribBuf [64]float64
	contrib := contribBuf[:0]
	if npos <= len(contribBuf) {
		contrib = contribBuf[:npos]
	} else {
		contrib = make([]float64, npos)
	}
	norms, kt := ix.norms, &ix.k
	h := topK{k: k}
	for _, q := range qts {
		if !q.cur.dense {
			q.cur.next() // as for lead above (a probe of a dense list does not use the position)
		}
	}
	for si, d := range sample {
		nrm := norms[d]
		for _, q := range qts {
			var tf uint32
			if q == lead && leadTfs != nil {
				tf = leadTfs[si]
			} else if qc := &q.cur; qc.dense {
				tf = qc.probe(d)
			} else {
				qc.advance(d)
				if qc.doc == d {
					tf = qc.tf
				}
			}
			if tf != 0 {
				contrib[q.pos] = q.weight * tfNorm(float64(tf), kt[nrm]) // as maxScore computes it
			}
		}
		s := 0.0
		for i, v := range contrib {
			s += v
			contrib[i] = 0
		}
		h.push(ScoredDoc{Doc: d, Score: s})
	}
	if h.len() == k {
		theta = h.min().Score
	}
	for _, q := range qts {
		if !q.cur.dense { // a probe does not move a dense cursor
			q.cur.init(ix.postings, q.list, ix.Len()) // cannot fail: it did in prepare
		}
	}
	return theta
}

// orderAlpha is the exponent of a list's postings in sortByBound's key.
const orderAlpha = 0.5

// sortByBound sorts the lists qts by bound per posting (bound / postings^orderAlpha), smallest first,
// and returns prefix, where prefix[i] bounds what the lists qts[:i] can add to a document: the sum over
// terms of the largest bound among the term's lists in qts[:i] (a document is in at most one list of a
// term); and npos, one more than the largest query position. MaxScore makes a prefix of that order
// non-essential, so the order decides which lists are iterated: weighing the bound by the postings makes
// the long lists of low bound non-essential first.
func sortByBound(qts []*queryTerm) (prefix []float64, npos int) {
	for _, q := range qts {
		q.key = q.ub / math.Pow(float64(q.list.n), orderAlpha)
	}
	sort.SliceStable(qts, func(i, j int) bool { return qts[i].key < qts[j].key })
	prefix = make([]float64, len(qts)+1)
	for _, q := range qts {
		npos = max(npos, q.pos+1)
	}
	setPrefix(qts, prefix, npos)
	return prefix, npos
}

// zeroed returns n zeros: buf's first n when it has them (a caller's stack array), else a new slice.
func zeroed(buf *[16]float64, n int) []float64 {
	if n <= len(buf) {
		return buf[:n]
	}
	return make([]float64, n)
}

// setPrefix sets prefix[i] to the bound of what the lists qts[:i] can add to a document together: per
// query position (term) the largest bound among its lists there (a document is in at most one list of a
// term), summed. npos is one more than the largest position.
func setPrefix(qts []*queryTerm, prefix []float64, npos int) {
	var tmBuf [16]float64
	termMax := zeroed(&tmBuf, npos)
	for i, q := range qts {
		prefix[i+1] = prefix[i] + max(0, q.ub-termMax[q.pos])
		termMax[q.pos] = max(termMax[q.pos], q.ub)
	}
}

// maxScoreDAAT is document-at-a-time MaxScore (Turtle and Flood 1995): terms whose bounds together cannot lift
// a document above the current k-th score are not iterated, only probed for the candidates of the
// others, skipping whole blocks. A document's final score is summed in the query's term order, so that it
// does not depend on k or on the pruning (exact ties stay ties, broken by ordinal). theta0 is a score the
// k-th result is known to reach (-Inf when none is known; see initialTheta): documents bounded below it
// are pruned from the start. maxScore uses it for exact lengths; maxScoreBatches gives the same results
// for quantised ones.
func (ix *Index) maxScoreDAAT(qts []*queryTerm, k int, theta0 float64) []ScoredDoc {
	nq := len(qts)
	prefix, npos := sortByBound(qts)
	contrib := make([]float64, npos) // by query position; zero when the term is absent (scores are > 0)
	touched := make([]int, 0, nq)    // the positions written in contrib for the current candidate
	exact, norms, kt := ix.params.ExactLength, ix.norms, &ix.k
	h := topK{k: k}
	theta := theta0
	ess := 0 // qts[:ess] are non-essential
	for ess < nq && prefix[ess+1] < theta {
		ess++
	}
	// edocs[i] is qts[i]'s current document for the essential lists (i >= ess): the candidate loop reads
	// it from one small array instead of from each list's cursor. Non-essential entries are stale.
	edocs := make([]uint32, nq)
	for i, q := range qts {
		q.cur.next()
		edocs[i] = q.cur.doc
	}
	// next is the candidate after d, found while stepping the lists that matched d, so that the essential
	// lists are passed over once per candidate; haveNext is false when it has to be searched for again.
	next, haveNext := uint32(noDoc), false
	for {
		// The next candidate: the smallest current document among essential terms.
		d := uint32(noDoc)
		if haveNext {
			d = next
		} else {
			for _, cd := range edocs[ess:] {
				d = min(d, cd)
			}
		}
		haveNext = false
		if d == noDoc {
			break
		}
		s := 0.0
		nrm := norms[d] // read once for every list (the score's norm; unused with exact lengths)
		next = noDoc
		for j := ess; j < nq; j++ {
			if cd := edocs[j]; cd != d {
				next = min(next, cd)
			} else {
				q := qts[j]
				var v float64
				if exact {
					v = ix.score(q, d, q.cur.tf)
				} else {
					v = q.weight * tfNorm(float64(q.cur.tf), kt[nrm]) // as score computes it
				}
				contrib[q.pos] = v
				touched = append(touched, q.pos)
				s += v
				c := &q.cur
				if c.i < c.m { // next, inlined
					c.doc, c.tf = c.docs[c.i], c.tfs[c.i]
					c.i++
				} else {
					c.nextSlow()
				}
				edocs[j] = c.doc
				next = min(next, c.doc)
			}
		}
		haveNext = true
		pruned := false
		for i := ess - 1; i >= 0; i-- {
			if s+prefix[i+1] < theta {
				pruned = true
				break
			}
			q := qts[i]
			if contrib[q.pos] != 0 {
				continue // the document is in the term's other list
			}
			var tf uint32
			if c := &q.cur; c.dense {
				if c.word(int(d/64))>>(d%64)&1 != 0 { // probe, inlined
					if tf = 1; !c.ones {
						tf = c.tfAt(c.rankBefore(d))
					}
				}
			} else {
				if q.cur.doc < d {
					q.cur.advance(d)
				}
				if q.cur.doc == d {
					tf = q.cur.tf
				}
			}
			if tf != 0 {
				var v float64
				if exact {
					v = ix.score(q, d, tf)
				} else {
					v = q.weight * tfNorm(float64(tf), kt[nrm])
				}
				contrib[q.pos] = v
				touched = append(touched, q.pos)
				s += v
			}
		}
		if !pruned {
			s = 0
			for _, v := range contrib {
				s += v
			}
			if s >= theta || h.len() < k {
				h.push(ScoredDoc{Doc: d, Score: s})
				if h.len() == k && h.min().Score > theta {
					theta = h.min().Score
					e := ess
					for ess < nq && prefix[ess+1] < theta {
						ess++
					}
					if ess != e {
						haveNext = false // next is over the old essential lists
					}
				}
			}
		}
		for _, p := range touched { // reset what was written, cheaper than clearing every position
			contrib[p] = 0
		}
		touched = touched[:0]
	}
	return h.sorted()
}

// BruteForce scores every document containing a query term, exhaustively and term at a time, and
// returns the top k. It is the reference that the MaxScore search is tested against.
func (ix *Index) BruteForce(query string, k int) ([]ScoredDoc, error) {
	qts, err := ix.prepare(query)
	if err != nil {
		return nil, err
	}
	acc := map[uint32]float64{}
	for _, q := range qts { // in query order, as maxScore sums
		for q.cur.next(); q.cur.doc != noDoc; q.cur.next() {
			acc[q.cur.doc] += ix.score(q, q.cur.doc, q.cur.tf)
		}
	}
	all := make([]ScoredDoc, 0, len(acc))
	for d, s := range acc {
		all = append(all, ScoredDoc{d, s})
	}
	sort.Slice(all, func(i, j int) bool { return better(all[i], all[j]) })
	if len(all) > k {
		all = all[:k]
	}
	return all, nil
}

// better orders results: higher score first, then lower ordinal.
func better(a, b ScoredDoc) bool {
	if a.Score != b.Score {
		return a.Score > b.Score
	}
	return a.Doc < b.Doc
}

// topK is a bounded min-heap whose root is the worst kept result.
type topK struct {
	k int
	h []ScoredDoc
}

func (t *topK) len() int           { return len(t.h) }
func (t *topK) min() ScoredDoc     { return t.h[0] }
func (t *topK) less(i, j int) bool { return better(t.h[j], t.h[i]) } // i is worse than j

func (t *topK) push(x ScoredDoc) {
	if len(t.h) < t.k {
		t.h = append(t.h, x)
		for i := len(t.h) - 1; i > 0; {
			p := (i - 1) / 2
			if !t.less(i, p) {
				break
			}
			t.h[i], t.h[p] = t.h[p], t.h[i]
			i = p
		}
		return
	}
	if !better(x, t.h[0]) {
		return
	}
	t.h[0] = x
	for i := 0; ; {
		l, r, m := 2*i+1, 2*i+2, i
		if l < len(t.h) && t.less(l, m) {
			m = l
		}
		if r < len(t.h) && t.less(r, m) {
			m = r
		}
		if m == i {
			break
		}
		t.h[i], t.h[m] = t.h[m], t.h[i]
		i = m
	}
}

func (t *topK) sorted() []ScoredDoc {
	out := append([]ScoredDoc(nil), t.h...)
	sort.Slice(out, func(i, j int) bool { return better(out[i], out[j]) })
	return out
}

const noDoc = math.MaxUint32

// cursor iterates one posting list (a termList). For a block-encoded list a block is decoded into docs
// and tfs lazily: next decodes the rest of the block at once (sequential iteration), advance only as far
// as its target (probes of non-essential lists), so that next and advance are mostly array steps. A
// dense list (a bitmap) is iterated word by word, and probe looks a document up without moving the
// cursor; its "blocks" are the directory's windows of denseWindow documents.
type cursor struct {
	skips  []byte // nblocks entries of (last doc, end offset)
	data   []byte
	df     int
	nb     int
	block  int  // current block
	i      int  // next index into docs/tfs
	m      int  // postings decoded so far in the current block
	n      int  // postings in the current block
	bg, bt uint // the current block's bit widths of document gaps and of tf-1
	gapBit int  // the bit offset in data of the current block's first gap
	tfBit  int  // the bit offset in data of the current block's first tf-1
	last   uint32
	doc    uint32
	tf     uint32

	dense          bool
	ones           bool   // dense: the tf = 1 bitmap (no ranks, no nibbles)
	bits, dir, nib []byte // dense: the bitmap, the directory, the tf nibbles
	esc            []byte // dense: the escapes
	words          int    // dense: bitmap words
	ndocs          int    // dense: documents in the index
	wi             int    // dense: the current bitmap word
	w              uint64 // dense: the current word's bits after doc
	rank           int    // dense: the current posting's number
	tmin           uint32 // tf >= 2 bitmap: when 2 or more, next steps only to postings with tf >= tmin (tfmin.go)

	docs [blockSize]uint32
	tfs  [blockSize]uint32
}

// init positions the cursor before the first posting of list l of postings.bin, in an index of ndocs
// documents.
func (c *cursor) init(post []byte, l termList, ndocs int) error {
	if l.kind == listBlocks {
		c.dense, c.ones = false, false
		return c.initBlocks(post, l.off, l.n)
	}
	words, dirs := denseSizes(ndocs)
	// Field by field: the cursor may be reused, and zeroing its block arrays would cost more than the rest.
	c.dense, c.ones = true, l.kind == listOnes
	c.bits, c.dir, c.nib, c.esc = l.bits, l.dir, l.nib, l.esc
	c.words, c.ndocs, c.df, c.nb = words, ndocs, int(l.n), dirs
	c.wi, c.w, c.rank, c.block, c.doc, c.tf, c.i, c.m, c.tmin = -1, 0, -1, -1, 0, 0, 0, 0, 0
	return nil
}

func (c *cursor) initBlocks(post []byte, off uint64, df uint32) error {
	nb := (int(df) + blockSize - 1) / blockSize
	end := off + uint64(nb*skipEntrySize)
	if end > uint64(len(post)) {
		return errCorrupt
	}
	c.skips = post[off:end]
	dataLen := uint64(binary.LittleEndian.Uint32(c.skips[(nb-1)*skipEntrySize+4:]))
	if end+dataLen > uint64(len(post)) {
		return errCorrupt
	}
	c.data = post[end : end+dataLen]
	c.df, c.nb = int(df), nb
	c.block, c.i, c.m, c.n, c.doc = -1, 0, 0, 0, 0
	c.w, c.tmin = 0, 0 // the bitmap fields of a reused cursor must not look live
	return nil
}

// word returns bitmap word i of a dense term.
func (c *cursor) word(i int) uint64 { return binary.LittleEndian.Uint64(c.bits[8*i:]) }

// rankBefore returns the number of a dense term's postings before document d (d < ndocs).
func (c *cursor) rankBefore(d uint32) int {
	wi := int(d / 64)
	e := wi / (denseWindow / 64)
	r := int(binary.LittleEndian.Uint32(c.dir[dirEntrySize*e:]))
	for j := e * (denseWindow / 64); j < wi; j++ {
		r += popcount(c.word(j))
	}
	return r + popcount(c.word(wi)&(1<<(d%64)-1))
}

// tfAt returns the tf of a dense term's posting number r.
func (c *cursor) tfAt(r int) uint32 {
	if t := c.nib[r/2] >> (4 * (r % 2)) & 15; t != 0 {
		return uint32(t)
	}
	// An escape: binary search the (rank, tf) table.
	n := len(c.esc) / escEntrySize
	i := sort.Search(n, func(i int) bool { return binary.LittleEndian.Uint32(c.esc[escEntrySize*i:]) >= uint32(r) })
	if i == n || binary.LittleEndian.Uint32(c.esc[escEntrySize*i:]) != uint32(r) {
		panic(errCorrupt)
	}
	return binary.LittleEndian.Uint32(c.esc[escEntrySize*i+4:])
}

// probe returns a dense term's tf in document d, 0 when d does not have the term. The cursor does not
// move.
func (c *cursor) probe(d uint32) uint32 {
	if c.word(int(d/64))>>(d%64)&1 == 0 {
		return 0
	}
	if c.ones {
		return 1
	}
	return c.tfAt(c.rankBefore(d))
}

// nextDense moves a dense cursor to the next set bit at or after the current word position.
// nextInWord steps a tf = 1 bitmap cursor to the next set bit of its current word, as nextDense would,
// and reports whether there was one; false for any other cursor. Small enough to inline in the merge loops.
func (c *cursor) nextInWord() bool {
	if !c.ones || c.w == 0 {
		return false
	}
	c.doc = uint32(c.wi*64 + bits.TrailingZeros64(c.w))
	c.w &= c.w - 1
	c.block = int(c.doc / denseWindow)
	c.tf = 1
	return true
}

func (c *cursor) nextDense() {
	for c.w == 0 {
		c.wi++
		if c.wi >= c.words {
			c.wi, c.doc = c.words, noDoc
			return
		}
		c.w = c.word(c.wi)
	}
	c.doc = uint32(c.wi*64 + bits.TrailingZeros64(c.w))
	c.w &= c.w - 1
	if c.ones {
		c.tf = 1
	} else {
		c.rank++
		c.tf = c.tfAt(c.rank)
	}
	c.block = int(c.doc / denseWindow)
}

// advanceDense moves a dense cursor to its first posting at or after target.
func (c *cursor) advanceDense(target uint32) {
	if int64(target) >= int64(c.ndocs) {
		c.wi, c.w, c.doc = c.words, 0, noDoc
		return
	}
	c.wi = int(target / 64)
	c.w = c.word(c.wi) &^ (1<<(target%64) - 1)
	if !c.ones {
		c.rank = c.rankBefore(target) - 1
	}
	c.nextDense()
}

func (c *cursor) blockLen(b int) int {
	if b == c.nb-1 {
		return c.df - b*blockSize
	}
	return blockSize
}

// lastDoc is the last document of block b: for a dense term the last of the window.
func (c *cursor) lastDoc(b int) uint32 {
	if c.dense {
		return uint32(min((b+1)*denseWindow, c.ndocs) - 1)
	}
	return binary.LittleEndian.Uint32(c.skips[b*skipEntrySize:])
}

// blockBound is block b's largest tf/(tf+K) under the index's default parameters.
func (c *cursor) blockBound(b int) float64 {
	if c.ones {
		return float64(math.Float32frombits(binary.LittleEndian.Uint32(c.dir[b*oneEntrySize:])))
	}
	if c.dense {
		return float64(math.Float32frombits(binary.LittleEndian.Uint32(c.dir[b*dirEntrySize+4:])))
	}
	return float64(math.Float32frombits(binary.LittleEndian.Uint32(c.skips[b*skipEntrySize+8:])))
}

// blockAt returns the first block at or after from whose last doc is >= target (nb when none).
func (c *cursor) blockAt(from int, target uint32) int {
	from = max(from, 0)
	if c.dense {
		return min(max(from, int(target/denseWindow)), c.nb)
	}
	for i := 0; i < 2 && from < c.nb; i, from = i+1, from+1 {
		if c.lastDoc(from) >= target {
			return from
		}
	}
	return from + sort.Search(c.nb-from, func(i int) bool { return c.lastDoc(from+i) >= target })
}

func (c *cursor) blockEnd(b int) int {
	return int(binary.LittleEndian.Uint32(c.skips[b*skipEntrySize+4:]))
}

// enter positions the cursor before the first posting of block b, without decoding it. A block whose
// widths or length do not add up panics (recovered by Search and Verify).
func (c *cursor) enter(b int) {
	c.block = b
	c.n = c.blockLen(b)
	c.i, c.m = 0, 0
	start := 0
	if b > 0 {
		start, c.last = c.blockEnd(b-1), c.lastDoc(b-1)
	} else {
		c.last = 0
	}
	data := c.data
	bg, bt := int(data[start]), int(data[start+1])
	if bg > 32 || bt > 32 || start+packedLen(c.n, bg, bt) != c.blockEnd(b) {
		panic(errCorrupt)
	}
	c.bg, c.bt = uint(bg), uint(bt)
	c.gapBit = 8 * (start + 2)
	c.tfBit = c.gapBit + 8*((c.n*bg+7)/8)
	c.doc = c.last
}

// decode decodes postings of the current block until stop of them are decoded or, with target > 0, one
// at or past target was decoded. The values are at fixed bit widths, so that each is a load, a shift and
// a mask, with no branch on its length.
func (c *cursor) decode(stop int, target uint32) {
	data := c.data
	d, m := c.last, c.m
	bg, bt := c.bg, c.bt
	gmask, tmask := uint64(1)<<bg-1, uint64(1)<<bt-1
	gb, tb := c.gapBit+m*int(bg), c.tfBit+m*int(bt)
	if target > 0 && m < stop {
		// Only the posting at or past target can be returned (advance skips the others, and later targets
		// are larger): decode the gaps, and the tf of the last one.
		if (gb+(stop-m)*int(bg))>>3+8 <= len(data) {
			for m < stop {
				d += uint32(binary.LittleEndian.Uint64(data[gb>>3:]) >> (gb & 7) & gmask)
				c.docs[uint(m)%blockSize] = d
				gb += int(bg)
				m++
				if d >= target {
					break
				}
			}
		} else {
			for m < stop {
				d += uint32(load64(data, gb>>3) >> (gb & 7) & gmask)
				c.docs[m%blockSize] = d
				gb += int(bg)
				m++
				if d >= target {
					break
				}
			}
		}
		tb += (m - 1 - c.m) * int(bt)
		c.tfs[(m-1)%blockSize] = uint32(load64(data, tb>>3)>>(tb&7)&tmask) + 1
		c.last, c.m = d, m
		return
	}
	if (gb+(stop-m)*int(bg))>>3+8 <= len(data) && (tb+(stop-m)*int(bt))>>3+8 <= len(data) {
		// Every load of the block is 8 bytes inside data: no test of the end per value.
		if bt == 0 { // all tfs 1
			for ; m < stop; m++ {
				d += uint32(binary.LittleEndian.Uint64(data[gb>>3:]) >> (gb & 7) & gmask)
				c.docs[uint(m)%blockSize], c.tfs[uint(m)%blockSize] = d, 1
				gb += int(bg)
			}
		} else {
			for ; m < stop; m++ {
				d += uint32(binary.LittleEndian.Uint64(data[gb>>3:]) >> (gb & 7) & gmask)
				t := uint32(binary.LittleEndian.Uint64(data[tb>>3:])>>(tb&7)&tmask) + 1
				c.docs[uint(m)%blockSize], c.tfs[uint(m)%blockSize] = d, t
				gb += int(bg)
				tb += int(bt)
			}
		}
		c.last, c.m = d, m
		return
	}
	for m < stop {
		d += uint32(load64(data, gb>>3) >> (gb & 7) & gmask)
		t := uint32(load64(data, tb>>3)>>(tb&7)&tmask) + 1
		c.docs[m%blockSize], c.tfs[m%blockSize] = d, t
		gb += int(bg)
		tb += int(bt)
		m++
	}
	c.last, c.m = d, m
}

// load64 reads 8 little-endian bytes at o, as zeros past the end of b.
func load64(b []byte, o int) uint64 {
	if o+8 <= len(b) {
		return binary.LittleEndian.Uint64(b[o:])
	}
	var x uint64
	for j := 0; o+j < len(b) && j < 8; j++ {
		x |= uint64(b[o+j]) << (8 * j)
	}
	return x
}

// next moves to the next posting, or sets doc to noDoc at the end.
func (c *cursor) next() {
	if c.i < c.m { // the common case, small enough to inline (a dense cursor keeps i == m == 0)
		c.doc, c.tf = c.docs[c.i], c.tfs[c.i]
		c.i++
		return
	}
	c.nextSlow()
}

func (c *cursor) nextSlow() {
	if c.dense {
		if c.tmin > 1 {
			c.nextDenseMin()
			return
		}
		c.nextDense()
		return
	}
	if c.i == c.m {
		if c.m == c.n {
			if c.block+1 >= c.nb {
				c.doc = noDoc
				return
			}
			c.enter(c.block + 1)
		}
		c.decode(c.n, 0)
	}
	c.doc, c.tf = c.docs[c.i], c.tfs[c.i]
	c.i++
}

// advance moves to the first posting with doc >= target.
func (c *cursor) advance(target uint32) {
	if c.doc >= target {
		return
	}
	if c.dense {
		c.advanceDense(target)
		return
	}
	if c.block < 0 || c.lastDoc(c.block) < target {
		// Find the first block whose last doc is >= target: usually the next one, else by binary search.
		b := c.blockAt(c.block+1, target)
		if b >= c.nb {
			c.block, c.i, c.m, c.n, c.doc = c.nb-1, 0, 0, 0, noDoc
			return
		}
		c.enter(b)
	}
	// The current block's last doc is >= target, so the scan stops inside it.
	i := c.i
	for i < c.m && c.docs[i] < target {
		i++
	}
	if i == c.m {
		c.decode(c.n, target)
		if c.docs[c.m-1] < target {
			panic(errCorrupt) // the skip entry's last doc is not in the block
		}
		i = c.m - 1
	}
	c.doc, c.tf = c.docs[i], c.tfs[i]
	c.i = i + 1
}

// QueryCost returns how many distinct indexed terms the query has and their total postings (the work an
// exhaustive scorer would do); benchmarks report it to characterise a query set.
func (ix *Index) QueryCost(query string) (terms int, postings int64, err error) {
	qts, err := ix.prepare(query)
	if err != nil {
		return 0, 0, err
	}
	for _, q := range qts {
		postings += int64(q.cur.df)
		terms = max(terms, q.pos+1)
	}
	return terms, postings, nil
}
