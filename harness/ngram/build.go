package ngram

import (
	"bufio"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"hash/crc32"
	"io"
	"math"
	"math/bits"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/ragbench/ragbench/internal/atomicdir"

	"github.com/ragbench/ragbench/harness/corpus"
)

// ManifestFormat names the manifest layout version.
const ManifestFormat = "ragbench-ngram/1"

// TokenizerName names the tokenizer recorded in manifests built here.
const TokenizerName = "ragbench/harness/text (DPR SimpleTokenizer rules)"

// DefaultShardTokens is the default shard size in tokens (separators included).
const DefaultShardTokens = 1 << 28

// maxShardTokens bounds a shard so that int32 suffix-array entries suffice.
const maxShardTokens = math.MaxInt32 - 2

// BuildOptions configures Build.
type BuildOptions struct {
	Format      corpus.Format // corpus format; empty means detect from the path
	Lowercase   bool          // lowercase text before tokenizing (queries are lowercased too)
	Title       bool          // index "title\ntext" instead of the text alone
	TokenWidth  int           // bytes per token in tokenized.N: 2 or 4 (default 4)
	ShardTokens int           // tokens per shard, separators included (default DefaultShardTokens)
	Workers     int           // shards built at once (default GOMAXPROCS)
	Progress    io.Writer     // progress lines go here when non-nil
	Force       bool          // replace an existing index at the output path
}

// Manifest describes a built index; it is written last, as manifest.json.
type Manifest struct {
	Format     string       `json:"format"`
	Layout     string       `json:"layout"`
	Tokenizer  string       `json:"tokenizer"`
	Lowercase  bool         `json:"lowercase"`
	Title      bool         `json:"title"`
	TokenWidth int          `json:"token_width"`
	DocSep     string       `json:"doc_sep"`
	VocabFile  string       `json:"vocab_file"`
	VocabSize  int          `json:"vocab_size"`
	VocabCRC   uint32       `json:"vocab_crc32c"`
	VocabBytes int64        `json:"vocab_bytes"`
	Tokens     int64        `json:"tokens"`
	Docs       int64        `json:"docs"`
	Shards     []ShardEntry `json:"shards"`
}

// ShardEntry describes one shard's files.
type ShardEntry struct {
	Tokens  int64                `json:"tokens"` // separators included
	Docs    int64                `json:"docs"`
	PtrSize int                  `json:"ptr_size"`
	Files   map[string]FileEntry `json:"files"`
}

// FileEntry is a file's size and CRC-32C (Castagnoli).
type FileEntry struct {
	Bytes  int64  `json:"bytes"`
	CRC32C uint32 `json:"crc32c"`
}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// PtrSize returns Infini-gram's suffix-array pointer width for a token file of dsBytes bytes:
// ceil(log2(dsBytes)/8), at least 1.
func PtrSize(dsBytes int64) int {
	if dsBytes <= 1 {
		return 1
	}
	p := int(math.Ceil(math.Log2(float64(dsBytes)) / 8))
	// Guard against floating-point edge cases: the width must hold dsBytes-1.
	for p < 8 && uint64(dsBytes-1)>>(8*uint(p)) != 0 {
		p++
	}
	return max(p, 1)
}

// BuildStats reports what a build did.
type BuildStats struct {
	Tokens, Docs int64
	Shards       int
	Elapsed      time.Duration
	DiskBytes    int64
}

// Summary is one line saying what the build of the index at dir made and how fast: documents, tokens,
// shards, seconds, million tokens per second and bytes per token on disk.
func (st BuildStats) Summary(dir string) string {
	return fmt.Sprintf("built %s: %d documents, %d tokens, %d shards, %.1f s (%.2fM tokens/s), %.2f bytes/token on disk",
		dir, st.Docs, st.Tokens, st.Shards, st.Elapsed.Seconds(), float64(st.Tokens)/st.Elapsed.Seconds()/1e6,
		float64(st.DiskBytes)/float64(st.Tokens))
}

// Build tokenizes the corpus at corpusPath and writes an index directory at outDir.
func Build(ctx context.Context, corpusPath, outDir string, opt BuildOptions) (BuildStats, error) {
	r, err := corpus.Open(corpusPath, opt.Format)
	if err != nil {
		return BuildStats{}, err
	}
	defer r.Close()
	return BuildFrom(ctx, r, outDir, opt)
}

// BuildFrom builds an index from a document stream. The index appears at outDir only when complete:
// it is written to a temporary sibling directory and renamed into place.
func BuildFrom(ctx context.Context, r corpus.Reader, outDir string, opt BuildOptions) (BuildStats, error) {
	start := time.Now()
	if opt.TokenWidth == 0 {
		opt.TokenWidth = 4
	}
	if opt.TokenWidth != 2 && opt.TokenWidth != 4 {
		return BuildStats{}, fmt.Errorf("build: token width %d: want 2 or 4", opt.TokenWidth)
	}
	if opt.ShardTokens == 0 {
		opt.ShardTokens = DefaultShardTokens
	}
	if opt.ShardTokens < 2 || opt.ShardTokens > maxShardTokens {
		return BuildStats{}, fmt.Errorf("build: shard size %d tokens: want 2..%d", opt.ShardTokens, maxShardTokens)
	}
	if opt.Workers <= 0 {
		opt.Workers = runtime.GOMAXPROCS(0)
	}
	outDir = filepath.Clean(outDir)
	ad, err := atomicdir.Begin(outDir, opt.Force)
	if err != nil {
		return BuildStats{}, fmt.Errorf("build: %w", err)
	}
	defer ad.Abort()
	tmp := ad.Path()

	b := &builder{opt: opt, dir: tmp, vocab: newVocabTable(), sep: sepID(opt.TokenWidth)}
	if err := b.run(ctx, r); err != nil {
		return BuildStats{}, err
	}
	if err := b.writeVocabAndManifest(); err != nil {
		return BuildStats{}, err
	}
	if err := syncDir(tmp); err != nil {
		return BuildStats{}, err
	}
	if err := ad.Commit(); err != nil {
		return BuildStats{}, fmt.Errorf("build: %w", err)
	}
	st := BuildStats{Tokens: b.man.Tokens, Docs: b.man.Docs, Shards: len(b.man.Shards), Elapsed: time.Since(start)}
	st.DiskBytes, _ = dirBytes(outDir)
	return st, nil
}

// sepID is the all-ones separator token of the given width.
func sepID(width int) int32 {
	if width == 2 {
		return 0xFFFF
	}
	return -1 // 0xFFFFFFFF
}

type builder struct {
	opt   BuildOptions
	dir   string
	vocab *vocabTable
	words []string
	sep   int32
	man   Manifest

	mu       sync.Mutex
	shards   []ShardEntry
	firstErr error
	done     int
}

type shardJob struct {
	id     int
	tokens []int32 // ids; the separator is sep; backed by buf
	docs   []uint64
	buf    *tokenBuffer
	vocab  int // ids are below this (the vocabulary size when the shard was cut)
}

func (b *builder) run(ctx context.Context, r corpus.Reader) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	jobs := make(chan shardJob)
	var wg sync.WaitGroup
	for w := 0; w < b.opt.Workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range jobs {
				if err := b.buildShard(ctx, j); err != nil {
					b.fail(err)
					cancel()
				}
			}
		}()
	}
	pctx, pcancel := context.WithCancel(ctx)
	free := make(chan *tokBatch, 4*runtime.GOMAXPROCS(0)+4)
	batches, tokDone := tokenizeBatches(pctx, r, runtime.GOMAXPROCS(0), b.opt.Title, b.opt.Lowercase, free)
	err := b.read(ctx, batches, free, jobs)
	pcancel()
	<-tokDone // the caller may close r once we return
	close(jobs)
	wg.Wait()
	if err != nil {
		return err
	}
	if b.firstErr != nil {
		return b.firstErr
	}
	b.man.Shards = b.shards
	return nil
}

func (b *builder) fail(err error) {
	b.mu.Lock()
	if b.firstErr == nil {
		b.firstErr = err
	}
	b.mu.Unlock()
}

// read tokenizes documents and cuts them into shards of whole documents.
func (b *builder) read(ctx context.Context, batches <-chan *tokBatch, free chan<- *tokBatch, jobs chan<- shardJob) error {
	limit := b.opt.ShardTokens
	var buf *tokenBuffer // the current shard's tokens
	defer func() { buf.release() }()
	curN := 0
	var docs []uint64
	id := 0
	var l2g []int32 // the current batch's local ids to global ids
	var ndocs, ntok int64
	last := time.Now()
	start := last
	maxID := int32(math.MaxInt32)
	if b.opt.TokenWidth == 2 {
		maxID = 0xFFFE
	}
	stopped := func(err error) error {
		if b.firstErr != nil {
			return b.firstErr
		}
		return err
	}
	send := func() error {
		if curN == 0 {
			return nil
		}
		select {
		case jobs <- shardJob{id: id, tokens: buf.tok, docs: docs, buf: buf, vocab: len(b.words)}:
			buf = nil // the worker releases it
		case <-ctx.Done():
			return stopped(ctx.Err())
		}
		id++
		curN, docs = 0, nil
		return nil
	}
	for bt := range batches {
		select {
		case <-bt.done:
		case <-ctx.Done():
			return stopped(ctx.Err())
		}
		l2g = l2g[:0]
		off := 0
		for di, d := range bt.docs {
			if err := ctx.Err(); err != nil {
				return stopped(err)
			}
			// Give global ids to the words first seen in this document, in order of first occurrence.
			for len(l2g) < len(bt.words) && int(bt.firstDoc[len(l2g)]) == di {
				w := bt.words[len(l2g)]
				gid, slot := b.vocab.find(w, b.words)
				if gid < 0 {
					if int64(len(b.words)) > int64(maxID) {
						return fmt.Errorf("build: document %s: vocabulary exceeds %d entries; use token width 4", d.ID, int64(maxID)+1)
					}
					w = strings.Clone(w)
					gid = int32(len(b.words))
					b.words = append(b.words, w)
					b.vocab.insert(slot, w, gid, b.words)
				}
				l2g = append(l2g, gid)
			}
			doc := bt.toks[off : off+int(bt.lens[di])]
			off += len(doc)
			need := len(doc) + 1
			if need > limit {
				return fmt.Errorf("build: document %s has %d tokens, more than a shard holds (%d with its separator); raise --shard-tokens", d.ID, len(doc), limit)
			}
			if curN+need > limit {
				if err := send(); err != nil {
					return err
				}
			}
			if buf == nil {
				// Room for a full shard and the SA-IS sentinel; only written pages use memory.
				var err error
				if buf, err = newTokenBuffer(limit + 1); err != nil {
					return err
				}
			}
			docs = append(docs, uint64(curN))
			buf.tok = append(buf.tok, b.sep)
			for _, t := range doc {
				buf.tok = append(buf.tok, l2g[t])
			}
			curN += need
			ndocs++
			ntok += int64(need)
		}
		if bt.err != nil {
			return fmt.Errorf("build: %w", bt.err)
		}
		bt.recycle()
		select {
		case free <- bt:
		default:
		}
		if b.opt.Progress != nil && time.Since(last) > time.Second {
			last = time.Now()
			b.mu.Lock()
			done := b.done
			b.mu.Unlock()
			fmt.Fprintf(b.opt.Progress, "\rngram build: %d docs, %d tokens read (%.1fM tok/s), %d shards built   ",
				ndocs, ntok, float64(ntok)/time.Since(start).Seconds()/1e6, done)
		}
	}
	if err := ctx.Err(); err != nil {
		return stopped(err)
	}
	if ndocs == 0 {
		return errors.New("build: the corpus is empty (no documents)")
	}
	if err := send(); err != nil {
		return err
	}
	b.man.Docs, b.man.Tokens = ndocs, ntok
	if b.opt.Progress != nil {
		fmt.Fprintf(b.opt.Progress, "\rngram build: %d docs, %d tokens read and tokenized in %.1f s; building suffix arrays...            \n", ndocs, ntok, time.Since(start).Seconds())
	}
	return nil
}

// buildShard writes tokenized.N, offset.N and table.N for one shard. The token ids are first mapped, in
// place, to byte-order ranks; then SA-IS sorts the ranks while another goroutine writes tokenized.N
// (mapping the ranks back to ids) and offset.N, so that writing and syncing them is off the critical
// path (SA-IS only reads the text).
func (b *builder) buildShard(ctx context.Context, j shardJob) error {
	defer j.buf.release()
	t0 := time.Now()
	w := b.opt.TokenWidth
	n := len(j.tokens)
	dsBytes := int64(n) * int64(w)
	ptr := PtrSize(dsBytes)
	entry := ShardEntry{Tokens: int64(n), Docs: int64(len(j.docs)), PtrSize: ptr, Files: map[string]FileEntry{}}

	s, k, ids := byteOrderRanks(j.tokens, w, j.vocab)
	j.tokens = nil
	tRanks := time.Since(t0)

	type written struct {
		name string
		fe   FileEntry
		err  error
	}
	files := make(chan written, 2)
	go func() {
		// tokenized.N: little-endian token ids (rank r is ids[r-1]; the last rank is the separator).
		name := fmt.Sprintf("tokenized.%d", j.id)
		fe, err := writeFile(filepath.Join(b.dir, name), func(bw *bufio.Writer) error {
			buf := make([]byte, 0, 1<<16*w)
			sep := uint32(b.sep)
			toks := s[:n] // without the sentinel
			for i, r := range toks {
				id := sep
				if int(r) <= len(ids) {
					id = uint32(ids[r-1])
				}
				if w == 2 {
					buf = binary.LittleEndian.AppendUint16(buf, uint16(id))
				} else {
					buf = binary.LittleEndian.AppendUint32(buf, id)
				}
				if len(buf) == cap(buf) || i == len(toks)-1 {
					if _, err := bw.Write(buf); err != nil {
						return err
					}
					buf = buf[:0]
					if ctx.Err() != nil {
						return ctx.Err()
					}
				}
			}
			return nil
		})
		files <- written{name, fe, err}
		// offset.N: u64 byte offset of each document's separator.
		name = fmt.Sprintf("offset.%d", j.id)
		fe, err = writeFile(filepath.Join(b.dir, name), func(bw *bufio.Writer) error {
			var buf [8]byte
			for _, d := range j.docs {
				binary.LittleEndian.PutUint64(buf[:], d*uint64(w))
				if _, err := bw.Write(buf[:]); err != nil {
					return err
				}
			}
			return nil
		})
		files <- written{name, fe, err}
	}()
	collect := func() error {
		var first error
		for range 2 {
			f := <-files
			if f.err != nil && first == nil {
				first = f.err
			}
			entry.Files[f.name] = f.fe
		}
		return first
	}

	// table.N: the suffix array in the byte order of tokenized.N.
	saBuf, err := newTokenBuffer(len(s))
	if err != nil {
		collect()
		return err
	}
	defer saBuf.release()
	sa := saBuf.tok[:len(s)]
	t1 := time.Now()
	saisText(s, sa, k)
	tSA := time.Since(t1)
	if err := collect(); err != nil { // the writer reads s until it is done
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	s = nil
	j.buf.release() // the tokens are no longer needed
	debug.FreeOSMemory()
	t2 := time.Now()
	fe, err := writeFile(filepath.Join(b.dir, fmt.Sprintf("table.%d", j.id)), func(bw *bufio.Writer) error {
		buf := make([]byte, (1<<16)*ptr+8)
		for i := 1; i < len(sa); i += 1 << 16 { // sa[0] is the sentinel
			chunk := sa[i:min(i+1<<16, len(sa))]
			o := 0
			for _, p := range chunk {
				// Write 8 bytes and advance by the pointer width: the extra bytes are overwritten next.
				binary.LittleEndian.PutUint64(buf[o:], uint64(p)*uint64(w))
				o += ptr
			}
			if _, err := bw.Write(buf[:o]); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	entry.Files[fmt.Sprintf("table.%d", j.id)] = fe
	if b.opt.Progress != nil {
		fmt.Fprintf(b.opt.Progress, "\rngram build: shard %d: %d tokens; ranks %.1f s, suffix array %.1f s (tokenized.%d and offset.%d written meanwhile), table.%d %.1f s; %.1f s in all\n",
			j.id, n, tRanks.Seconds(), tSA.Seconds(), j.id, j.id, j.id, time.Since(t2).Seconds(), time.Since(t0).Seconds())
	}

	b.mu.Lock()
	for len(b.shards) <= j.id {
		b.shards = append(b.shards, ShardEntry{})
	}
	b.shards[j.id] = entry
	b.done++
	b.mu.Unlock()
	return nil
}

// byteOrderRanks maps token ids, in place, to ranks 1..K such that comparing ranks compares the
// little-endian byte encodings of the ids (Infini-gram's suffix order), and appends the sentinel 0.
// Ids are below vocab, except the separator (all ones), which gets rank K+1. It returns the text, its
// alphabet size K+2, and the id of each rank r in 1..K at ids[r-1]. The passes over the tokens run on
// up to GOMAXPROCS goroutines.
func byteOrderRanks(tokens []int32, width int, vocab int) ([]int32, int, []int32) {
	key := func(id int32) uint32 {
		if width == 2 {
			return uint32(bits.ReverseBytes16(uint16(id)))
		}
		return bits.ReverseBytes32(uint32(id))
	}
	isSep := func(t int32) bool { return t < 0 || (width == 2 && t == 0xFFFF) }
	// Which ids occur: one bit set per goroutine, then merged.
	words := (vocab + 63) / 64
	parts := parallelParts(len(tokens))
	present := make([][]uint64, parts)
	parallelFor(len(tokens), parts, func(part, lo, hi int) {
		p := make([]uint64, words)
		for _, t := range tokens[lo:hi] {
			if !isSep(t) {
				p[t>>6] |= 1 << (uint(t) & 63)
			}
		}
		present[part] = p
	})
	all := present[0]
	for _, p := range present[1:] {
		for i, x := range p {
			all[i] |= x
		}
	}
	var ids []int32
	for i, x := range all {
		for x != 0 {
			ids = append(ids, int32(i*64+bits.TrailingZeros64(x)))
			x &= x - 1
		}
	}
	slices.SortFunc(ids, func(a, b int32) int {
		ka, kb := key(a), key(b)
		if ka < kb {
			return -1
		}
		if ka > kb {
			return 1
		}
		return 0
	})
	rank := make([]int32, vocab)
	for r, id := range ids {
		rank[id] = int32(r + 1)
	}
	sepRank := int32(len(ids) + 1) // all-ones bytes sort after every id
	parallelFor(len(tokens), parts, func(_, lo, hi int) {
		for i, t := range tokens[lo:hi] {
			if isSep(t) {
				tokens[lo+i] = sepRank
			} else {
				tokens[lo+i] = rank[t]
			}
		}
	})
	return append(tokens, 0), len(ids) + 2, ids
}

// writeFile writes path through a buffered writer, syncs it and returns its size and CRC-32C.
func writeFile(path string, fill func(*bufio.Writer) error) (FileEntry, error) {
	f, err := os.Create(path)
	if err != nil {
		return FileEntry{}, fmt.Errorf("build: %w", err)
	}
	defer f.Close()
	h := crc32.New(castagnoli)
	cw := &countWriter{w: io.MultiWriter(f, h)}
	bw := bufio.NewWriterSize(cw, 1<<20)
	if err := fill(bw); err != nil {
		return FileEntry{}, fmt.Errorf("build: write %s: %w", path, err)
	}
	if err := bw.Flush(); err != nil {
		return FileEntry{}, fmt.Errorf("build: write %s: %w", path, err)
	}
	if err := f.Sync(); err != nil {
		return FileEntry{}, fmt.Errorf("build: sync %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return FileEntry{}, fmt.Errorf("build: close %s: %w", path, err)
	}
	return FileEntry{Bytes: cw.n, CRC32C: h.(hash.Hash32).Sum32()}, nil
}

type countWriter struct {
	w io.Writer
	n int64
}

func (c *countWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

func (b *builder) writeVocabAndManifest() error {
	fe, err := writeFile(filepath.Join(b.dir, "vocab.txt"), func(bw *bufio.Writer) error {
		for _, w := range b.words {
			bw.WriteString(w)
			bw.WriteByte('\n')
		}
		return nil
	})
	if err != nil {
		return err
	}
	sep := "0xffffffff"
	if b.opt.TokenWidth == 2 {
		sep = "0xffff"
	}
	b.man.Format = ManifestFormat
	b.man.Layout = "infini-gram"
	b.man.Tokenizer = TokenizerName
	b.man.Lowercase = b.opt.Lowercase
	b.man.Title = b.opt.Title
	b.man.TokenWidth = b.opt.TokenWidth
	b.man.DocSep = sep
	b.man.VocabFile = "vocab.txt"
	b.man.VocabSize = len(b.words)
	b.man.VocabCRC = fe.CRC32C
	b.man.VocabBytes = fe.Bytes
	data, err := json.MarshalIndent(b.man, "", "  ")
	if err != nil {
		return fmt.Errorf("build: manifest: %w", err)
	}
	_, err = writeFile(filepath.Join(b.dir, "manifest.json"), func(bw *bufio.Writer) error {
		_, err := bw.Write(append(data, '\n'))
		return err
	})
	return err
}

func syncDir(dir string) error {
	f, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("build: %w", err)
	}
	defer f.Close()
	if err := f.Sync(); err != nil {
		return fmt.Errorf("build: sync %s: %w", dir, err)
	}
	return nil
}

func dirBytes(dir string) (int64, error) {
	var total int64
	ents, err := os.ReadDir(dir)
	if err != nil {
		return 0, err
	}
	for _, e := range ents {
		if info, err := e.Info(); err == nil && !e.IsDir() {
			total += info.Size()
		}
	}
	return total, nil
}
