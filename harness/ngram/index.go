package ngram

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"unsafe"

	"github.com/ragbench/ragbench/internal/mmap"

	"github.com/ragbench/ragbench/harness/text"
)

// MaxQueryTokens bounds the tokens of one query (all terms of a CNF query together), as Infini-gram's API does.
const MaxQueryTokens = 500

// ErrQueryTooLong is returned for queries over MaxQueryTokens tokens.
var ErrQueryTooLong = fmt.Errorf("query longer than %d tokens", MaxQueryTokens)

// OpenOptions configures OpenIndex.
type OpenOptions struct {
	// Verify is kept so that callers and configs that set it still build and load: every Open checks
	// every file's size and CRC-32C against the manifest, with or without it.
	Verify bool
	// TokenWidth is the token width of an index without manifest.json (one made by Infini-gram's own
	// indexer): 2 (u16, the default) or 4.
	TokenWidth int
}

// Index is an opened, memory-mapped index. It is safe for concurrent use.
type Index struct {
	dir    string
	man    Manifest
	width  int
	shards []*shard
	vocab  map[string]uint32
	words  []string
	sep    uint32
	tokens uint64
	maps   [][]byte
	// checked counts the files whose checksums Open read.
	checked int
}

// Verified returns how many index files Open checked against their checksums (every file the
// manifest lists a checksum for).
func (ix *Index) Verified() (checked int) { return ix.checked }

type shard struct {
	ds, sa, od []byte
	n          uint64 // tokens
	ptr        int
	width      int
	// keys[i] is the first 8 bytes (big-endian packed, zero-padded) of the suffix of rank i*sampleStep:
	// a small in-memory sample that narrows a search before it touches the mapped table, whose random
	// accesses cost TLB and cache misses.
	keys []uint64
}

// sampleStep is the rank distance between sampled suffix keys (8 bytes per sample: 0.25 bytes of
// memory per token for u32 tokens).
const sampleStep = 32

// sample fills keys.
func (s *shard) sample() {
	if s.n < 4*sampleStep {
		return
	}
	s.keys = make([]uint64, (s.n+sampleStep-1)/sampleStep)
	for i := range s.keys {
		s.keys[i] = s.keyAt(s.rankToPtr(uint64(i) * sampleStep))
	}
}

// keyAt packs the first 8 bytes of the suffix at byte offset p, zero-padded.
func (s *shard) keyAt(p uint64) uint64 {
	var b [8]byte
	copy(b[:], s.ds[p:])
	return binary.BigEndian.Uint64(b[:])
}

// keyRange returns the packed bounds of every 8-byte key that starts with q.
func keyRange(q []byte) (lo, hi uint64) {
	var a, b [8]byte
	for i := range b {
		b[i] = 0xff
	}
	k := copy(a[:], q)
	copy(b[:k], q)
	return binary.BigEndian.Uint64(a[:]), binary.BigEndian.Uint64(b[:])
}

// OpenIndex opens the index in dir. A directory with manifest.json is a ragbench index and is checked against
// its manifest; one without is read as an Infini-gram index (tokenized.N, table.N, offset.N) that can
// be queried by token ids only.
func OpenIndex(dir string, opt OpenOptions) (*Index, error) {
	ix := &Index{dir: dir}
	mp := filepath.Join(dir, "manifest.json")
	data, err := os.ReadFile(mp)
	switch {
	case err == nil:
		if err := json.Unmarshal(data, &ix.man); err != nil {
			return nil, fmt.Errorf("open %s: %w", mp, err)
		}
		if ix.man.Format != ManifestFormat {
			return nil, fmt.Errorf("open %s: format %q, want %q", mp, ix.man.Format, ManifestFormat)
		}
		if ix.man.TokenWidth != 2 && ix.man.TokenWidth != 4 {
			return nil, fmt.Errorf("open %s: token_width %d, want 2 or 4", mp, ix.man.TokenWidth)
		}
		ix.width = ix.man.TokenWidth
	case errors.Is(err, os.ErrNotExist):
		ix.width = opt.TokenWidth
		if ix.width == 0 {
			ix.width = 2
		}
		if ix.width != 2 && ix.width != 4 {
			return nil, fmt.Errorf("open %s: token width %d, want 2 or 4", dir, ix.width)
		}
		if err := ix.discoverShards(); err != nil {
			return nil, err
		}
	default:
		return nil, fmt.Errorf("open %s: %w", dir, err)
	}
	ix.sep = uint32(1)<<(8*uint(ix.width)) - 1
	if ix.width == 4 {
		ix.sep = 0xFFFFFFFF
	}
	v := newVerifier(dir)
	if err := ix.openShards(v); err != nil {
		if werr := v.wait(); werr != nil {
			err = werr // a checksum mismatch says more than what it broke
		}
		ix.Close()
		if _, verr := os.Stat(filepath.Join(dir, "vocab.txt")); verr == nil && ix.man.Format == "" {
			return nil, fmt.Errorf("open %s: manifest.json is missing, so the files were read as an Infini-gram index and did not fit (%w); if this is a ragbench index, rebuild it with ngram build", dir, err)
		}
		return nil, err
	}
	if ix.man.VocabFile != "" {
		if err := ix.loadVocab(v); err != nil {
			if werr := v.wait(); werr != nil {
				err = werr
			}
			ix.Close()
			return nil, err
		}
	}
	// Nothing reads the files' contents before every checksum matched.
	if err := v.wait(); err != nil {
		ix.Close()
		return nil, err
	}
	for _, sh := range ix.shards {
		sh.sample()
	}
	ix.checked = v.Checked
	return ix, nil
}

// discoverShards fills a manifest for an Infini-gram directory from its file names.
func (ix *Index) discoverShards() error {
	for s := 0; ; s++ {
		ds := filepath.Join(ix.dir, fmt.Sprintf("tokenized.%d", s))
		if _, err := os.Stat(ds); err != nil {
			if s == 0 {
				return fmt.Errorf("open %s: no manifest.json and no tokenized.0: not an index", ix.dir)
			}
			break
		}
		ix.man.Shards = append(ix.man.Shards, ShardEntry{Tokens: -1})
	}
	return nil
}

func (ix *Index) openShards(v *verifier) error {
	if len(ix.man.Shards) == 0 {
		return fmt.Errorf("open %s: the index has no shards", ix.dir)
	}
	for s, e := range ix.man.Shards {
		sh := &shard{width: ix.width}
		files := []struct {
			name string
			dst  *[]byte
		}{{"tokenized", &sh.ds}, {"table", &sh.sa}, {"offset", &sh.od}}
		for _, f := range files {
			name := fmt.Sprintf("%s.%d", f.name, s)
			path := filepath.Join(ix.dir, name)
			b, err := ix.mmap(path)
			if err != nil {
				return err
			}
			*f.dst = b
			if e.Files != nil {
				want, ok := e.Files[name]
				if !ok {
					return fmt.Errorf("open %s: manifest lists no %s", ix.dir, name)
				}
				if int64(len(b)) != want.Bytes {
					return fmt.Errorf("open %s: size %d, manifest says %d: truncated or corrupt index", path, len(b), want.Bytes)
				}
				v.check(name, b, want.CRC32C)
			}
		}
		if len(sh.ds)%ix.width != 0 {
			return fmt.Errorf("open %s: tokenized.%d has %d bytes, not a multiple of the token width %d", ix.dir, s, len(sh.ds), ix.width)
		}
		sh.n = uint64(len(sh.ds) / ix.width)
		if sh.n == 0 {
			return fmt.Errorf("open %s: tokenized.%d is empty", ix.dir, s)
		}
		if e.Tokens >= 0 && e.Files != nil && uint64(e.Tokens) != sh.n {
			return fmt.Errorf("open %s: shard %d has %d tokens, manifest says %d", ix.dir, s, sh.n, e.Tokens)
		}
		if uint64(len(sh.sa))%sh.n != 0 {
			return fmt.Errorf("open %s: table.%d has %d bytes, not a multiple of %d tokens: corrupt index", ix.dir, s, len(sh.sa), sh.n)
		}
		sh.ptr = int(uint64(len(sh.sa)) / sh.n)
		if sh.ptr < 1 || sh.ptr > 8 {
			return fmt.Errorf("open %s: table.%d pointer width %d: corrupt index", ix.dir, s, sh.ptr)
		}
		if len(sh.od)%8 != 0 {
			return fmt.Errorf("open %s: offset.%d has %d bytes, not a multiple of 8: corrupt index", ix.dir, s, len(sh.od))
		}
		ix.tokens += sh.n
		ix.shards = append(ix.shards, sh)
	}
	return nil
}

func (ix *Index) mmap(path string) ([]byte, error) {
	b, err := mmap.Map(path)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	ix.maps = append(ix.maps, b)
	return b, nil
}

func (ix *Index) loadVocab(v *verifier) error {
	path := filepath.Join(ix.dir, ix.man.VocabFile)
	data, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("open %s: %w", path, err)
	}
	if int64(len(data)) != ix.man.VocabBytes {
		return fmt.Errorf("open %s: size %d, manifest says %d: truncated or corrupt index", path, len(data), ix.man.VocabBytes)
	}
	v.check(ix.man.VocabFile, data, ix.man.VocabCRC)
	ix.words = make([]string, 0, ix.man.VocabSize)
	ix.vocab = make(map[string]uint32, ix.man.VocabSize)
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 1<<16), 1<<30)
	for sc.Scan() {
		w := sc.Text()
		ix.vocab[w] = uint32(len(ix.words))
		ix.words = append(ix.words, w)
	}
	if len(ix.words) != ix.man.VocabSize {
		return fmt.Errorf("open %s: %d entries, manifest says %d: corrupt index", path, len(ix.words), ix.man.VocabSize)
	}
	return nil
}

// Close unmaps the index files.
func (ix *Index) Close() error {
	err := mmap.UnmapAll(ix.maps)
	ix.maps = nil
	return err
}

// Manifest returns the index manifest (mostly empty for an Infini-gram directory).
func (ix *Index) Manifest() Manifest { return ix.man }

// TokenWidth returns the bytes per token of the token files.
func (ix *Index) TokenWidth() int { return ix.width }

// NumTokens returns the tokens in all shards, document separators included (Infini-gram's count of
// the empty query).
func (ix *Index) NumTokens() uint64 { return ix.tokens }

// NumDocs returns the documents in all shards.
func (ix *Index) NumDocs() uint64 {
	var d uint64
	for _, s := range ix.shards {
		d += uint64(len(s.od) / 8)
	}
	return d
}

// NumShards returns the number of shards.
func (ix *Index) NumShards() int { return len(ix.shards) }

// HasVocab reports whether text queries are possible (a ragbench index, not an Infini-gram one).
func (ix *Index) HasVocab() bool { return ix.vocab != nil }

// Word returns the text of a token id ("" when unknown; "<doc>" for the separator).
func (ix *Index) Word(id uint32) string {
	if id == ix.sep {
		return "<doc>"
	}
	if int(id) < len(ix.words) {
		return ix.words[id]
	}
	return ""
}

// Sep returns the document separator token id.
func (ix *Index) Sep() uint32 { return ix.sep }

// TokenIDs appends the ids of the tokens of q to dst. known is false when a token is not in the
// vocabulary (its count is then 0). It returns an error for an index without a vocabulary.
func (ix *Index) TokenIDs(dst []uint32, q string) (ids []uint32, known bool, err error) {
	if ix.vocab == nil {
		return dst, false, errors.New("this index has no vocabulary (an Infini-gram index): query by token ids")
	}
	if ix.man.Lowercase {
		q = strings.ToLower(q)
	}
	known = true
	text.EachSpan(q, func(i, j int) {
		id, ok := ix.vocab[q[i:j]]
		if !ok {
			known = false
		}
		dst = append(dst, id)
	})
	return dst, known, nil
}

// queryWords returns the token texts of q as the index sees them (lowercased for a lowercase index).
func (ix *Index) queryWords(q string) []string {
	if ix.man.Lowercase {
		q = strings.ToLower(q)
	}
	return text.Words(q)
}

// encode writes ids as little-endian tokens of the index width into dst.
func (ix *Index) encode(dst []byte, ids []uint32) []byte {
	var buf [4]byte
	for _, id := range ids {
		binary.LittleEndian.PutUint32(buf[:], id)
		dst = append(dst, buf[:ix.width]...)
	}
	return dst
}

// rankToPtr reads suffix-array entry r (a byte offset into ds).
func (s *shard) rankToPtr(r uint64) uint64 {
	off := r * uint64(s.ptr)
	switch s.ptr {
	case 4:
		return s.clamp(uint64(binary.LittleEndian.Uint32(s.sa[off:])))
	case 5:
		b := s.sa[off : off+5]
		return s.clamp(uint64(binary.LittleEndian.Uint32(b)) | uint64(b[4])<<32)
	}
	var v uint64
	for i := s.ptr - 1; i >= 0; i-- {
		v = v<<8 | uint64(s.sa[off+uint64(i)])
	}
	return s.clamp(v)
}

// clamp keeps a pointer read from a corrupt table inside the token file, so that a bad index gives
// wrong numbers rather than a crash.
func (s *shard) clamp(v uint64) uint64 {
	if v+uint64(s.width) > uint64(len(s.ds)) {
		return uint64(len(s.ds) - s.width)
	}
	return v
}

// find returns the suffix-array rank range [lo, hi) of suffixes starting with q.
func (s *shard) find(q []byte) (lo, hi uint64) {
	if len(q) == 0 {
		return 0, s.n
	}
	l, h := uint64(0), s.n
	var loH, upL uint64 // bounds of the lower- and upper-bound searches, when the sample narrows them
	if len(s.keys) > 0 {
		// Suffixes starting with q have keys in [klo, khi]: they lie after the last sample below klo
		// and before the first sample above khi.
		klo, khi := keyRange(q)
		keys := s.keys
		i0, j := 0, len(keys)
		for i0 < j {
			mid := int(uint(i0+j) >> 1)
			if keys[mid] < klo {
				i0 = mid + 1
			} else {
				j = mid
			}
		}
		i1, j := i0, len(keys)
		for i1 < j {
			mid := int(uint(i1+j) >> 1)
			if keys[mid] <= khi {
				i1 = mid + 1
			} else {
				j = mid
			}
		}
		if i0 > 0 {
			l = uint64(i0-1)*sampleStep + 1
		}
		h = min(s.n, uint64(i1)*sampleStep)
		if l >= h {
			return l, l
		}
		if i1 > i0 {
			// Samples i0..i1-1 have keys in [klo, khi]. One probe at each end confirms it in the
			// table (a key can tie with a shorter suffix at the end of the shard), and then each
			// bound lies within one sample step: ~5 probes each instead of log2 of the count.
			r0 := uint64(i0) * sampleStep
			if s.cmpAt(r0, q) >= 0 {
				loH = r0 // the lower bound is at most r0
			} else {
				loH = h
			}
			r1 := uint64(i1-1) * sampleStep
			switch c := s.cmpAt(r1, q); {
			case c == 0:
				upL = r1 + 1 // ranks up to r1 are <= q
			case c > 0:
				h = r1
			}
		}
	}
	if loH == 0 || loH > h {
		loH = h
	}
	// lower bound: first rank whose suffix prefix is >= q; ranks seen to be > q bound the upper search.
	up := h
	lh := loH
	for l < lh {
		mid := (l + lh) >> 1
		c := s.cmpAt(mid, q)
		if c < 0 {
			l = mid + 1
		} else {
			lh = mid
			if c > 0 {
				up = min(up, mid)
			}
		}
	}
	lo = l
	h = up
	l = max(l, upL)
	for l < h {
		mid := (l + h) >> 1
		if s.cmpAt(mid, q) <= 0 {
			l = mid + 1
		} else {
			h = mid
		}
	}
	return lo, l
}

// cmpAt compares the first len(q) bytes of the suffix of rank r with q.
func (s *shard) cmpAt(r uint64, q []byte) int {
	p := s.rankToPtr(r)
	return bytes.Compare(s.ds[p:min(p+uint64(len(q)), uint64(len(s.ds)))], q)
}

// tokenAt returns the token starting at byte offset p, and false at the end of the shard.
func (s *shard) tokenAt(p uint64) (uint32, bool) {
	if p+uint64(s.width) > uint64(len(s.ds)) {
		return 0, false
	}
	if s.width == 2 {
		return uint32(binary.LittleEndian.Uint16(s.ds[p:])), true
	}
	return binary.LittleEndian.Uint32(s.ds[p:]), true
}

// docBounds returns the byte range [start, end) of the document containing byte offset p (the
// separator included at start).
func (s *shard) docBounds(p uint64) (uint64, uint64) {
	nd := len(s.od) / 8
	i := sort.Search(nd, func(i int) bool { return binary.LittleEndian.Uint64(s.od[8*i:]) > p })
	var start, end uint64
	if i > 0 {
		start = binary.LittleEndian.Uint64(s.od[8*(i-1):])
	}
	if i < nd {
		end = binary.LittleEndian.Uint64(s.od[8*i:])
	} else {
		end = uint64(len(s.ds))
	}
	return start, end
}

// CountIDs returns the number of occurrences of the token sequence ids, summed over shards. It does not
// allocate for queries of up to 128 tokens.
func (ix *Index) CountIDs(ids []uint32) uint64 {
	var stack [512]byte
	q := ix.encode(stack[:0], ids)
	var c uint64
	for _, s := range ix.shards {
		lo, hi := s.find(q)
		c += hi - lo
	}
	return c
}

// CountText tokenizes q and counts it; unknown tokens give 0.
func (ix *Index) CountText(q string) (uint64, error) {
	var stack [128]uint32
	ids, known, err := ix.TokenIDs(stack[:0], q)
	if err != nil {
		return 0, err
	}
	if len(ids) > MaxQueryTokens {
		return 0, ErrQueryTooLong
	}
	if !known {
		return 0, nil
	}
	return ix.CountIDs(ids), nil
}

// Unigram is a token with its count.
type Unigram struct {
	ID    uint32 `json:"id"`
	Token string `json:"token"`
	Count uint64 `json:"count"`
}

// Unigrams returns the count of every vocabulary entry, most frequent first (ties by id).
func (ix *Index) Unigrams() []Unigram {
	out := make([]Unigram, 0, len(ix.words))
	for id, w := range ix.words {
		out = append(out, Unigram{ID: uint32(id), Token: w, Count: ix.CountIDs([]uint32{uint32(id)})})
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Count > out[j].Count })
	return out
}

// NextToken is one entry of a next-token distribution.
type NextToken struct {
	ID    uint32  `json:"id"`
	Token string  `json:"token"`
	Count uint64  `json:"cont_cnt"`
	Prob  float64 `json:"prob"`
}

// NTD returns the exact distribution of the token following prefix (the separator, "<doc>", marks the end of
// a document; the end of a shard is not counted), and the prefix count. It is exact: equal tokens form
// contiguous suffix-array runs, found by divide and conquer.
func (ix *Index) NTD(prefix []uint32) ([]NextToken, uint64) {
	q := ix.encode(nil, prefix)
	counts := map[uint32]uint64{}
	var total uint64
	for _, s := range ix.shards {
		lo, hi := s.find(q)
		total += hi - lo
		s.runs(lo, hi, uint64(len(q)), counts)
	}
	return ix.distribution(counts), total
}

// NTDSample is NTD with Infini-gram's max_support: when prefix occurs more than maxSupport times, the
// distribution is taken from maxSupport occurrences evenly spaced over the suffix array (deterministic)
// and approx is true; otherwise it is NTD's exact one. The prefix count is always exact.
func (ix *Index) NTDSample(prefix []uint32, maxSupport uint64) (dist []NextToken, total uint64, approx bool) {
	q := ix.encode(nil, prefix)
	type span struct {
		s      *shard
		lo, hi uint64
	}
	var spans []span
	for _, s := range ix.shards {
		lo, hi := s.find(q)
		total += hi - lo
		spans = append(spans, span{s, lo, hi})
	}
	if maxSupport == 0 || total <= maxSupport {
		dist, total = ix.NTD(prefix)
		return dist, total, false
	}
	counts := map[uint32]uint64{}
	m := uint64(len(q))
	for i := uint64(0); i < maxSupport; i++ {
		r := i * total / maxSupport // the i-th of maxSupport evenly spaced ranks over all shards
		for _, sp := range spans {
			if n := sp.hi - sp.lo; r < n {
				if t, ok := sp.s.tokenAt(sp.s.rankToPtr(sp.lo+r) + m); ok {
					counts[t]++
				}
				break
			} else {
				r -= n
			}
		}
	}
	return ix.distribution(counts), total, true
}

// distribution turns next-token counts into a distribution, most frequent first (ties by id).
func (ix *Index) distribution(counts map[uint32]uint64) []NextToken {
	out := make([]NextToken, 0, len(counts))
	var sum uint64
	for _, c := range counts {
		sum += c
	}
	for id, c := range counts {
		out = append(out, NextToken{ID: id, Token: ix.Word(id), Count: c, Prob: float64(c) / float64(sum)})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Count != out[j].Count {
			return out[i].Count > out[j].Count
		}
		return out[i].ID < out[j].ID
	})
	return out
}

func (s *shard) runs(lo, hi, m uint64, counts map[uint32]uint64) {
	if lo >= hi {
		return
	}
	a, okA := s.tokenAt(s.rankToPtr(lo) + m)
	b, okB := s.tokenAt(s.rankToPtr(hi-1) + m)
	if okA && okB && a == b {
		counts[a] += hi - lo
		return
	}
	if hi-lo == 1 {
		if okA {
			counts[a]++
		}
		return
	}
	mid := (lo + hi) / 2
	s.runs(lo, mid, m, counts)
	s.runs(mid, hi, m, counts)
}

// Prob returns count(prompt+cont)/count(prompt), with both counts; prob is -1 when the prompt never occurs.
func (ix *Index) Prob(prompt []uint32, cont uint32) (prob float64, promptCnt, contCnt uint64) {
	promptCnt = ix.CountIDs(prompt)
	if promptCnt == 0 {
		return -1, 0, 0
	}
	full := append(append([]uint32(nil), prompt...), cont)
	contCnt = ix.CountIDs(full)
	return float64(contCnt) / float64(promptCnt), promptCnt, contCnt
}

// String describes the index briefly.
func (ix *Index) String() string {
	return ix.dir + " (" + strconv.FormatUint(ix.tokens, 10) + " tokens, " + strconv.Itoa(len(ix.shards)) + " shards)"
}

// Resident reports how many bytes of the mapped index files are in memory (mincore), out of their
// total: a cold index answers in page faults, a warm one in memory accesses.
func (ix *Index) Resident() (resident, total int64) {
	page := int64(os.Getpagesize())
	for _, b := range ix.maps {
		if len(b) == 0 {
			continue
		}
		n := (int64(len(b)) + page - 1) / page
		vec := make([]byte, n)
		_, _, errno := syscall.Syscall(syscall.SYS_MINCORE, uintptr(unsafe.Pointer(&b[0])), uintptr(len(b)), uintptr(unsafe.Pointer(&vec[0])))
		total += int64(len(b))
		if errno != 0 {
			continue
		}
		for _, v := range vec {
			if v&1 != 0 {
				resident += page
			}
		}
	}
	return min(resident, total), total
}

// Identity names the index's content: a checksum of its manifest, which holds every file's size and
// checksum, so a rebuild with other content gets another identity. Caches put it in their keys. An
// Infini-gram directory without a manifest is named by its path and file sizes.
func (ix *Index) Identity() string {
	data, _ := json.Marshal(ix.man)
	if len(ix.man.Shards) > 0 && ix.man.Shards[0].Files == nil {
		var sizes []int
		for _, s := range ix.shards {
			sizes = append(sizes, len(s.ds), len(s.sa), len(s.od))
		}
		data, _ = json.Marshal(struct {
			Dir   string
			Sizes []int
		}{ix.dir, sizes})
	}
	return fmt.Sprintf("local-%08x", crc32.Checksum(data, castagnoli))
}
