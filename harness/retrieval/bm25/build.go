package bm25

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/maphash"
	"io"
	"math"
	"math/bits"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/ragbench/ragbench/harness/corpus"
)

// Options configure an index build.
type Options struct {
	// Analyzer is the text analysis (default AnalyzerEnglish).
	Analyzer Analyzer
	// Fields selects what is indexed (default FieldsTitleText).
	Fields Fields
	// K1 and B are stored as the index's default BM25 parameters (defaults 0.9 and 0.4, as Pyserini).
	// Set NoDefaults to keep zero values.
	K1, B float64
	// MemoryBudget bounds the memory of buffered and sorting postings in bytes (default 1 GiB): postings
	// are cut into runs (at most 8M postings each, fewer when the budget requires), which are sorted and
	// spilled while the next fills (kept in memory while the budget leaves room beside the buffers, else
	// written to run files) and merged at the end. The term dictionaries are held in memory in addition,
	// about 100 bytes per distinct term, and 13 bytes per document.
	MemoryBudget int64
	// Workers analyze documents in parallel (default GOMAXPROCS).
	Workers int
	// Progress, when set, receives a progress line now and then.
	Progress io.Writer
	// TempDir holds the run files (default a folder inside the output directory, removed at the end).
	TempDir string

	// memRuns, when positive, replaces the bytes of encoded runs that may be kept in memory instead of
	// files (tests use it to mix both kinds; see memRunLimit).
	memRuns int64
}

func (o *Options) fill() error {
	if o.Analyzer == "" {
		o.Analyzer = AnalyzerEnglish
	}
	if o.Fields == "" {
		o.Fields = FieldsTitleText
	}
	if o.K1 == 0 && o.B == 0 {
		o.K1, o.B = 0.9, 0.4
	}
	if o.MemoryBudget <= 0 {
		o.MemoryBudget = 1 << 30
	}
	if o.Workers <= 0 {
		o.Workers = runtime.GOMAXPROCS(0)
	}
	if err := o.Analyzer.Validate(); err != nil {
		return err
	}
	if err := o.Fields.Validate(); err != nil {
		return err
	}
	if o.K1 < 0 || o.B < 0 || o.B > 1 || math.IsNaN(o.K1) || math.IsNaN(o.B) {
		return fmt.Errorf("bm25: k1=%g b=%g: want k1 >= 0 and 0 <= b <= 1", o.K1, o.B)
	}
	return nil
}

// Build indexes every document of r into dir (created if needed; existing index files are replaced).
// Documents must have unique, non-empty ids and valid UTF-8; a violation stops the build with an error
// naming the document. Documents without indexable terms are kept (they count in Meta.Empty) but can
// never be retrieved.
func Build(ctx context.Context, r corpus.Reader, dir string, opt Options) (*Meta, error) {
	if err := opt.fill(); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("bm25: %w", err)
	}
	os.Remove(filepath.Join(dir, fileMeta)) // an interrupted build must not look complete
	tmp := opt.TempDir
	if tmp == "" {
		tmp = filepath.Join(dir, "tmp")
	}
	if err := os.MkdirAll(tmp, 0o755); err != nil {
		return nil, fmt.Errorf("bm25: %w", err)
	}
	runDir, err := os.MkdirTemp(tmp, "runs-")
	if err != nil {
		return nil, fmt.Errorf("bm25: %w", err)
	}
	defer func() {
		os.RemoveAll(runDir)
		if opt.TempDir == "" {
			os.Remove(tmp)
		}
	}()
	b := &builder{opt: opt, dir: dir, runDir: runDir, start: time.Now()}
	return b.run(ctx, r)
}

// BuildDocs indexes a slice of documents; see Build.
func BuildDocs(ctx context.Context, docs []corpus.Document, dir string, opt Options) (*Meta, error) {
	return Build(ctx, corpus.NewSliceReader(docs), dir, opt)
}

const batchDocs = 256

// batch is a run of consecutive documents. The reader fills docs; the store goroutine checks and stores
// them; a worker analyzes them (and drops the text); the accumulator assigns global term ids and hands
// the batch, which from then on holds only its postings, to a spill.
type batch struct {
	seq   int
	first uint32 // ordinal of the first document
	docs  []corpus.Document
	// Filled by the worker: per document its length and its distinct term ids with frequencies.
	lens []uint32
	ends []int32 // end of each document's entries in ids/tfs
	ids  []int32 // vocabulary ids; the accumulator rewrites them to global ids in place
	tfs  []uint32
	slab slab // where ids and tfs started (from the pool; returned by the spill)
}

// worker analyzes documents into vocabulary ids (see vocab), which all workers share.
type worker struct {
	an     Analyzer
	fields Fields
	voc    *vocab
	pool   *postPool
	view   *tokView // voc.tok with this worker's hot cache
	// seen holds per vocabulary id the index+1 of the document that last saw it, within the batch, and
	// its entry index in that document (side by side: one cache line per lookup).
	seen []seenRec
	dd   [ddSize]ddSlot // per document: see ddBits
	long [][2]int       // the batch's documents counted in seen: their ranges of b.ids
	// Capacity hints for the next batch's postings (batches are kept until their run is spilled, so each
	// gets fresh arrays).
	hintIDs int
	// Per document: the lowercased tokens, their spans and their looked-up ids.
	buf  []byte
	toks []tokRef
	vals []int32
	rs   resolveScratch
}

type seenRec struct{ mark, slot int32 }

// ddSlot is an entry of the per-document table: vocabulary id + 1 (0: empty) and slot in the batch.
type ddSlot struct{ id, slot int32 }

// The per-document table of process: ddSize slots of (vocabulary id + 1, slot in the batch), for
// documents of at most ddMaxTokens tokens, so that it is never more than a quarter full.
const (
	ddBits      = 10
	ddSize      = 1 << ddBits
	ddMaxTokens = ddSize / 4
)

// ddHash is the first slot of vocabulary id in the per-document table.
func ddHash(id int32) uint32 { return uint32(id) * 0x9E3779B1 >> (32 - ddBits) }

func newWorker(an Analyzer, fields Fields, voc *vocab, pool *postPool) *worker {
	return &worker{an: an, fields: fields, voc: voc, pool: pool, view: newTokView(voc.tok)}
}

func (w *worker) process(b *batch) {
	if cap(b.ids) == 0 && w.hintIDs > 0 {
		if w.pool != nil {
			b.slab = w.pool.get(w.hintIDs + w.hintIDs/8)
			b.ids, b.tfs = b.slab.ids, b.slab.tfs
		} else {
			b.ids = make([]int32, 0, w.hintIDs+w.hintIDs/8)
			b.tfs = make([]uint32, 0, w.hintIDs+w.hintIDs/8)
		}
	}
	b.lens = b.lens[:0]
	b.ends = b.ends[:0]
	b.ids = b.ids[:0]
	b.tfs = b.tfs[:0]
	possessive := w.an == AnalyzerEnglish
	for di := range b.docs {
		d := &b.docs[di]
		mark := int32(di + 1)
		// Collect the document's tokens, look them all up, then resolve new ones in order.
		w.buf, w.toks = w.buf[:0], w.toks[:0]
		if w.fields != FieldsText {
			w.buf, w.toks = appendTokens(w.buf, w.toks, d.Title, possessive)
		}
		if w.fields != FieldsTitle {
			w.buf, w.toks = appendTokens(w.buf, w.toks, d.Text, possessive)
		}
		var unknown int
		w.vals, unknown = w.view.lookupAll(w.buf, w.toks, w.vals[:0])
		if unknown > 0 {
			w.voc.resolve(w.buf, w.toks, w.vals, &w.rs)
		}
		var n uint32
		if len(w.vals) <= ddMaxTokens {
			// A short document: its distinct terms are counted in a small table that stays in the L1
			// cache, instead of in seen, which is indexed by vocabulary id and misses the cache for
			// every rare term.
			start := len(b.ids)
			for _, id := range w.vals {
				if id < 0 {
					continue
				}
				n++
				h := ddHash(id)
				for {
					e := &w.dd[h]
					if e.id == 0 {
						e.id, e.slot = id+1, int32(len(b.ids))
						b.ids = append(b.ids, id)
						b.tfs = append(b.tfs, 1)
						break
					}
					if e.id == id+1 {
						b.tfs[e.slot]++
						break
					}
					h = (h + 1) & (ddSize - 1)
				}
			}
			for _, id := range b.ids[start:] { // empty the table again
				h := ddHash(id)
				for w.dd[h].id != 0 {
					w.dd[h].id = 0
					h = (h + 1) & (ddSize - 1)
				}
			}
			b.lens = append(b.lens, n)
			b.ends = append(b.ends, int32(len(b.ids)))
			continue
		}
		w.long = append(w.long, [2]int{len(b.ids), 0})
		for _, id := range w.vals {
			if id < 0 {
				continue
			}
			n++
			if int(id) >= len(w.seen) {
				w.seen = growTo(w.seen, int(id)+1)
			}
			sr := &w.seen[id]
			if sr.mark == mark {
				b.tfs[sr.slot]++
				continue
			}
			sr.mark = mark
			sr.slot = int32(len(b.ids))
			b.ids = append(b.ids, id)
			b.tfs = append(b.tfs, 1)
		}
		w.long[len(w.long)-1][1] = len(b.ids)
		b.lens = append(b.lens, n)
		b.ends = append(b.ends, int32(len(b.ids)))
	}
	// Reset the marks of the long documents so that the next batch's marks (1..) do not collide.
	for _, r := range w.long {
		for _, id := range b.ids[r[0]:r[1]] {
			w.seen[id].mark = 0
		}
	}
	w.long = w.long[:0]
	w.hintIDs = len(b.ids)
}

// growTo returns s with length at least n (new entries zero), doubling its capacity when it must grow
// (append grows large slices by only about 1.25x, copying them many times over).
func growTo[T any](s []T, n int) []T {
	if n <= len(s) {
		return s
	}
	if n > cap(s) {
		ns := make([]T, len(s), max(2*cap(s), n, 256))
		copy(ns, s)
		s = ns
	}
	return s[:n]
}

// posting is one (term, document, frequency) triple of a run being sorted.
type posting struct{ term, doc, tf uint32 }

// runJob is a run to spill: consecutive batches (a contiguous range of documents) whose postings are
// sorted by global term id and written to run file idx.
type runJob struct {
	idx     int
	batches []*batch
	n       int // postings
	nTerms  int // global terms known when the job was cut
}

// run is a spilled run: per term (increasing global id) uvarint term id, uvarint count, then per
// posting uvarint doc gap (from 0 for the term's first) and uvarint tf. starts[g] is the offset of the
// first term of granule g (granFirst); granules past the end of starts start at size. It is kept in
// memory (data) while the memory budget allows (see memRunLimit), else written to file name.
type run struct {
	name   string
	size   int64
	starts []int64
	data   []byte
	free   func() // releases data when it is not on the Go heap
}

// Granules of term ids are where the parallel merge can start reading a run: each of the first
// granHead terms (the most frequent ones, since ids follow first occurrence) is a granule of its own, so
// that no merge task is much larger than the largest posting list; after them a granule is 64 terms.
const (
	granHead = 4096
	granBits = 6
)

// granOf returns the granule of term t.
func granOf(t int) int {
	if t < granHead {
		return t
	}
	return granHead + (t-granHead)>>granBits
}

// granFirst returns the first term of granule g.
func granFirst(g int) int {
	if g < granHead {
		return g
	}
	return granHead + (g-granHead)<<granBits
}

// granCount returns the number of granules of n terms.
func granCount(n int) int {
	if n <= granHead {
		return n
	}
	return granOf(n-1) + 1
}

func (r *run) start(g int) int64 {
	if g < len(r.starts) {
		return r.starts[g]
	}
	return r.size
}

type builder struct {
	opt    Options
	dir    string
	runDir string
	start  time.Time

	voc  *vocab
	pool postPool // the batches' postings arrays
	// Accumulator state (one goroutine). Global term ids follow the terms' first occurrence in document
	// order; termList is filled from voc and global at the end, while the postings are merged.
	trans    []int32  // vocabulary id -> global id + 1 (0: not seen yet)
	global   []uint32 // global id -> vocabulary id
	termList []string
	lens     []uint32
	runCap   int // postings per run
	cur      *runJob
	nJobs    int
	meta     Meta
	nextSeq  int
	pending  map[int]*batch
	lastShow time.Time
	spillCh  chan *runJob

	progMu sync.Mutex // serializes writes to opt.Progress, which several goroutines make

	recsFree func() // releases merge's term records (off the Go heap)

	scratchMu sync.Mutex
	scratch   []*spillScratch // the spillers' sort memory not in use

	runsMu  sync.Mutex
	runs    []run // by job index
	memLeft int64 // bytes of runs that may still be kept in memory (under runsMu)
}

// memRunLimit is how many bytes of encoded runs a build keeps in memory instead of writing run files:
// what the memory budget leaves once the postings buffers and sort arrays of runCap postings are
// counted (see runCapFor), which is nothing unless runs are cut at their 8M-posting maximum. Runs held
// in memory spare their file's write and read and count against the budget like the buffers.
func memRunLimit(budget int64, workers, runCap int) int64 {
	return max(0, budget-int64(runCap)*int64(8*(workers+2)+24*workers))
}

// runCapFor is the number of postings per run for a memory budget: while one run fills, up to
// opt.Workers others are being sorted (8 bytes per buffered posting, 24 more counted for the sort's
// scratch, which needs at most that) and one more may wait in the queue. Runs are kept small (at most 8M postings) so that the last spill, which nothing overlaps, is
// short.
func runCapFor(budget int64, workers int) int {
	c := budget / int64(8*(workers+2)+24*workers)
	return int(max(1024, min(c, 8<<20)))
}

func (b *builder) run(ctx context.Context, r corpus.Reader) (*Meta, error) {
	opt := b.opt
	b.meta = Meta{Format: formatName, Version: formatVersion, Analyzer: opt.Analyzer, Fields: opt.Fields, K1: opt.K1, B: opt.B, Files: map[string]FileSum{}}
	b.voc = newVocab(opt.Analyzer)
	defer b.voc.release()
	defer b.pool.release() // after every pipeline goroutine has ended: run waits for them all
	defer func() {
		if b.recsFree != nil {
			b.recsFree()
		}
	}()
	defer func() {
		for _, r := range b.runs {
			if r.free != nil {
				r.free()
			}
		}
	}()
	b.pending = map[int]*batch{}
	b.runCap = runCapFor(opt.MemoryBudget, opt.Workers)
	b.memLeft = memRunLimit(opt.MemoryBudget, opt.Workers, b.runCap)
	if opt.memRuns > 0 {
		b.memLeft = opt.memRuns
	}

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	toStore := make(chan *batch, 4)
	work := make(chan *batch, 2*opt.Workers)
	done := make(chan *batch, 2*opt.Workers)
	b.spillCh = make(chan *runJob)

	// Spillers sort and write runs while the next run fills.
	var spillWG sync.WaitGroup
	spillErrs := make([]error, opt.Workers)
	for i := 0; i < opt.Workers; i++ {
		spillWG.Add(1)
		go func(i int) {
			defer spillWG.Done()
			for job := range b.spillCh {
				if spillErrs[i] != nil || ctx.Err() != nil {
					continue // drain
				}
				sc := b.getScratch()
				err := b.spill(job, sc)
				b.putScratch(sc)
				if err != nil {
					spillErrs[i] = err
					cancel()
				}
			}
		}(i)
	}
	defer func() {
		for _, sc := range b.scratch {
			sc.release()
		}
	}()
	var wg sync.WaitGroup
	for i := 0; i < opt.Workers; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			w := newWorker(opt.Analyzer, opt.Fields, b.voc, &b.pool)
			for bt := range work {
				w.process(bt)
				bt.docs = nil
				done <- bt
			}
		}()
	}
	// The store goroutine checks documents and writes the document store, in order.
	storeErr := make(chan error, 1)
	go func() {
		err := b.store(ctx, toStore, work)
		if err != nil {
			cancel()
		}
		close(work)
		storeErr <- err
	}()
	// The accumulator runs on its own goroutine; the reader runs on this one.
	accErr := make(chan error, 1)
	go func() {
		var err error
		for bt := range done {
			if err != nil {
				continue // drain
			}
			if err = b.accept(ctx, bt); err != nil {
				cancel()
			}
		}
		if err == nil && ctx.Err() == nil && (b.cur != nil || b.nJobs == 0) {
			if b.cur == nil {
				b.cur = &runJob{}
			}
			err = b.submitLast(ctx)
		}
		close(b.spillCh)
		accErr <- err
	}()

	readErr := b.read(ctx, r, toStore)
	close(toStore)
	serr := <-storeErr
	wg.Wait()
	close(done)
	aerr := <-accErr
	spillWG.Wait()
	// The first error in pipeline order, except that a stage stopped by another stage's failure (its
	// error is the cancellation) gives way to the failure itself.
	errs := append([]error{serr, readErr, aerr}, spillErrs...)
	for _, err := range errs {
		if err != nil && !errors.Is(err, context.Canceled) {
			return nil, err
		}
	}
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	b.note("all runs spilled")
	// The workers are done: their tables go (the term strings stay, named through global), so that
	// the merge's memory can reuse theirs.
	b.trans = nil
	b.voc.release()
	if err := b.finish(ctx); err != nil {
		return nil, err
	}
	return &b.meta, nil
}

// read streams documents into batches for the store goroutine.
func (b *builder) read(ctx context.Context, r corpus.Reader, toStore chan<- *batch) error {
	var ord uint32
	seq := 0
	cur := &batch{docs: make([]corpus.Document, 0, batchDocs)}
	send := func() error {
		if len(cur.docs) == 0 {
			return nil
		}
		cur.seq = seq
		seq++
		select {
		case toStore <- cur:
		case <-ctx.Done():
			return ctx.Err()
		}
		cur = &batch{first: ord, docs: make([]corpus.Document, 0, batchDocs)}
		return nil
	}
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		d, err := r.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return fmt.Errorf("bm25: read corpus: %w", err)
		}
		if ord == math.MaxUint32 {
			return fmt.Errorf("bm25: more than %d documents", uint32(math.MaxUint32))
		}
		cur.docs = append(cur.docs, d)
		ord++
		if len(cur.docs) == batchDocs {
			if err := send(); err != nil {
				return err
			}
		}
	}
	return send()
}

// store checks each document (non-empty unique id, valid UTF-8), writes the document store and passes
// the batches on to the workers. It stops at the first bad document. Ids are checked for uniqueness at
// the end (or at the failure), by sorting their hashes: that is cheaper than a map probed at random,
// and it reports the same first duplicate (see dupCheck).
func (b *builder) store(ctx context.Context, in <-chan *batch, work chan<- *batch) error {
	docs, err := createSum(b.dir, fileDocs)
	if err != nil {
		return err
	}
	offs, err := createSum(b.dir, fileDocOff)
	if err != nil {
		docs.abort()
		return err
	}
	seed := maphash.MakeSeed()
	var hashes []uint64 // hash of each stored document's id, by ordinal
	// fail reports a duplicate id among the documents stored so far, which comes first, or else err.
	fail := func(err error) error {
		if derr := dupCheck(docs, seed, hashes); derr != nil {
			err = derr
		}
		docs.abort()
		offs.abort()
		return err
	}
	var pos int64
	var ord uint32
	var hdr [3 * binary.MaxVarintLen64]byte
	var u8 [8]byte
	for bt := range in {
		for i := range bt.docs {
			d := &bt.docs[i]
			ord = bt.first + uint32(i)
			if d.ID == "" {
				return fail(fmt.Errorf("bm25: document %d has an empty id", ord))
			}
			for _, f := range [...]struct{ name, s string }{{"id", d.ID}, {"title", d.Title}, {"text", d.Text}} {
				if !utf8.ValidString(f.s) {
					return fail(fmt.Errorf("bm25: document %q: field %s is not valid UTF-8", d.ID, f.name))
				}
			}
			if int64(len(d.Title))+int64(len(d.Text)) > math.MaxUint32 {
				// The workers address a document's tokens with 32-bit offsets.
				return fail(fmt.Errorf("bm25: document %q is larger than 4 GiB", d.ID))
			}
			hashes = appendDoubling(hashes, maphash.String(seed, d.ID))
			binary.LittleEndian.PutUint64(u8[:], uint64(pos))
			offs.Write(u8[:])
			n := binary.PutUvarint(hdr[:], uint64(len(d.ID)))
			n += binary.PutUvarint(hdr[n:], uint64(len(d.Title)))
			n += binary.PutUvarint(hdr[n:], uint64(len(d.Text)))
			docs.Write(hdr[:n])
			docs.WriteString(d.ID)
			docs.WriteString(d.Title)
			docs.WriteString(d.Text)
			pos += int64(n + len(d.ID) + len(d.Title) + len(d.Text))
		}
		ord = bt.first + uint32(len(bt.docs))
		select {
		case work <- bt:
		case <-ctx.Done():
			return fail(ctx.Err())
		}
	}
	if err := dupCheck(docs, seed, hashes); err != nil {
		return fail(err)
	}
	binary.LittleEndian.PutUint64(u8[:], uint64(pos))
	offs.Write(u8[:])
	ds, err := docs.close()
	if err != nil {
		offs.abort()
		return err
	}
	osum, err := offs.close()
	if err != nil {
		return err
	}
	b.meta.Files[fileDocs] = ds
	b.meta.Files[fileDocOff] = osum
	b.meta.Docs = int64(ord)
	return nil
}

// dupCheck returns an error naming the first duplicate id among the documents whose id hashes are
// hashes (by ordinal; w is the document store they were written to), or nil. The first duplicate is the
// one whose second occurrence comes first, named with its first occurrence, as a check at each document
// would report it. It sorts hashes in place; only when two hashes are equal does it read the ids back
// from the store.
func dupCheck(w *sumWriter, seed maphash.Seed, hashes []uint64) error {
	slices.Sort(hashes)
	var same map[uint64]bool
	for i := 1; i < len(hashes); i++ {
		if hashes[i] == hashes[i-1] {
			if same == nil {
				same = map[uint64]bool{}
			}
			same[hashes[i]] = true
		}
	}
	if same == nil {
		return nil
	}
	// Rare: read the ids back and find, among the ids with a shared hash, the first repeated one.
	first := map[string]uint32{}
	var dupID string
	var dupA, dupB uint32
	found := false
	err := eachStoredID(w, func(ord uint32, id string) bool {
		if !same[maphash.String(seed, id)] {
			return true
		}
		if prev, ok := first[id]; ok {
			dupID, dupA, dupB, found = id, prev, ord, true
			return false
		}
		first[id] = ord
		return true
	})
	if err != nil {
		return err
	}
	if !found {
		return nil // hash collisions of distinct ids
	}
	return fmt.Errorf("bm25: duplicate document id %q (documents %d and %d)", dupID, dupA, dupB)
}

// eachStoredID calls fn with the ordinal and id of every document written to the document store w so far,
// in order, until fn returns false.
func eachStoredID(w *sumWriter, fn func(ord uint32, id string) bool) error {
	if err := w.w.Flush(); err != nil {
		return fmt.Errorf("bm25: %w", err)
	}
	f, err := os.Open(w.f.Name())
	if err != nil {
		return fmt.Errorf("bm25: %w", err)
	}
	defer f.Close()
	br := bufio.NewReaderSize(f, 1<<20)
	for i := uint32(0); ; i++ {
		var l [3]uint64
		for j := range l {
			if l[j], err = binary.ReadUvarint(br); err != nil {
				if j == 0 && errors.Is(err, io.EOF) {
					return nil
				}
				return fmt.Errorf("bm25: re-read %s: %w", w.f.Name(), err)
			}
		}
		id := make([]byte, l[0])
		if _, err := io.ReadFull(br, id); err != nil {
			return fmt.Errorf("bm25: re-read %s: %w", w.f.Name(), err)
		}
		if !fn(i, string(id)) {
			return nil
		}
		if _, err := br.Discard(int(l[1] + l[2])); err != nil {
			return fmt.Errorf("bm25: re-read %s: %w", w.f.Name(), err)
		}
	}
}

// accept takes analyzed batches in any order and applies them in document order.
func (b *builder) accept(ctx context.Context, bt *batch) error {
	b.pending[bt.seq] = bt
	for {
		next, ok := b.pending[b.nextSeq]
		if !ok {
			return nil
		}
		delete(b.pending, b.nextSeq)
		b.nextSeq++
		if err := b.apply(ctx, next); err != nil {
			return err
		}
	}
}

// apply gives the batch's new terms their global ids (in document order, so that ids do not depend on
// scheduling), records the document lengths and adds the batch to the run being filled.
func (b *builder) apply(ctx context.Context, bt *batch) error {
	tr, global := b.trans, b.global
	for j, id := range bt.ids {
		if int(id) >= len(tr) {
			tr = growTo(tr, int(id)+1)
		}
		g := tr[id]
		if g == 0 {
			global = appendDoubling(global, uint32(id))
			g = int32(len(global))
			tr[id] = g
		}
		bt.ids[j] = g - 1
	}
	b.trans, b.global = tr, global
	for _, n := range bt.lens {
		if n == 0 {
			b.meta.Empty++
		} else {
			b.meta.DocCount++
			b.meta.SumTotalTermFreq += int64(n)
		}
	}
	// Grown by doubling: append's 1.25x would copy 4 MB per million documents many times over.
	nl := len(b.lens)
	b.lens = growTo(b.lens, nl+len(bt.lens))
	copy(b.lens[nl:], bt.lens)
	bt.lens = nil
	b.meta.Postings += int64(len(bt.ids))
	if b.cur == nil {
		b.cur = &runJob{}
	}
	b.cur.batches = append(b.cur.batches, bt)
	b.cur.n += len(bt.ids)
	if b.cur.n >= b.runCap {
		if err := b.submit(ctx); err != nil {
			return err
		}
	}
	if b.opt.Progress != nil && time.Since(b.lastShow) > 2*time.Second {
		b.lastShow = time.Now()
		el := time.Since(b.start).Seconds()
		b.progressf("bm25: %d documents, %d terms, %d runs, %.0f docs/s\n",
			len(b.lens), len(b.global), b.nJobs, float64(len(b.lens))/el)
	}
	return nil
}

// submit hands the run being filled to a spiller.
func (b *builder) submit(ctx context.Context) error {
	job := b.cur
	b.cur = nil
	job.idx = b.nJobs
	b.nJobs++
	job.nTerms = len(b.global)
	b.runsMu.Lock()
	b.runs = append(b.runs, run{})
	b.runsMu.Unlock()
	select {
	case b.spillCh <- job:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// getScratch returns sort memory for a spill: the last one returned by putScratch, else a new one. Spills
// seldom overlap, so the spillers usually share one, and its memory is touched once per build.
func (b *builder) getScratch() *spillScratch {
	b.scratchMu.Lock()
	defer b.scratchMu.Unlock()
	if n := len(b.scratch); n > 0 {
		sc := b.scratch[n-1]
		b.scratch = b.scratch[:n-1]
		return sc
	}
	return &spillScratch{}
}

// putScratch takes back the memory of getScratch.
func (b *builder) putScratch(sc *spillScratch) {
	b.scratchMu.Lock()
	b.scratch = append(b.scratch, sc)
	b.scratchMu.Unlock()
}

// lastSplitMin is the size in postings from which the last run is cut into one run per spiller.
const lastSplitMin = 1 << 20

// submitLast hands the last run to the spillers, cut into up to opt.Workers runs of about equal size when
// it is large: nothing else is left to do then, so the spillers sort the pieces in parallel. (Where runs
// are cut does not change the index.)
func (b *builder) submitLast(ctx context.Context) error {
	job := b.cur
	parts := min(b.opt.Workers, len(job.batches))
	if job.n < lastSplitMin {
		parts = 1
	}
	rest, restN := job.batches, job.n
	for k := 0; k < parts-1 && len(rest) > 1; k++ {
		piece := &runJob{}
		for len(rest) > 1 && piece.n < job.n/parts {
			piece.batches = append(piece.batches, rest[0])
			piece.n += len(rest[0].ids)
			rest = rest[1:]
		}
		restN -= piece.n
		b.cur = piece
		if err := b.submit(ctx); err != nil {
			return err
		}
	}
	b.cur = &runJob{batches: rest, n: restN}
	return b.submit(ctx)
}

// spillScratch is a spill's reusable memory.
type spillScratch struct {
	a      []posting
	aFree  func()
	sub    []posting // one tail bucket sorted by term
	counts []int
	// subCounts counts a tail bucket's postings by term.
	subCounts []int
	enc       []byte
	encFree   func()
}

func (sc *spillScratch) release() {
	for _, f := range []func(){sc.aFree, sc.encFree} {
		if f != nil {
			f()
		}
	}
	*sc = spillScratch{}
}

// The spill's sort puts each of the first spillHead term ids (the most frequent terms, since ids follow
// first occurrence) in a bucket of its own and the others in at most 2^spillTailBits buckets of 2^shift
// consecutive ids; see spillBuckets.
const (
	spillHead     = 4096
	spillTailBits = 11
)

// spillBuckets returns, for a run of nTerms terms, how many of them have a bucket of their own (head),
// the shift that groups the others, and the number of buckets.
func spillBuckets(nTerms int) (head, shift, nb int) {
	head = min(nTerms, spillHead)
	tail := nTerms - head
	shift = max(0, bits.Len(uint(tail))-spillTailBits)
	return head, shift, head + (tail+1<<shift-1)>>shift
}

// spillBucket returns the bucket of term g: g itself in the head, else head + (g-head)>>shift (without
// a branch: which side of head a term lies on is not predictable).
func spillBucket(g uint32, head uint32, shift uint) uint32 {
	hi := max(g, head)
	return min(g, head) + (hi-head)>>shift
}

// spill sorts a run's postings by global term id (stably, so documents stay in order) and encodes the
// run (kept in memory or written to a file). The sort scatters the postings from the batches into one
// array by bucket (spillBuckets: a head term is its bucket, so its postings are then in order; a tail
// bucket holds a few thousand postings of up to 2^shift terms), and sorts each tail bucket by term into
// a small array as it is encoded. Scattering into a few thousand places keeps the writes in cache, and
// only one array of the run's size is needed (the sort's memory is touched once per build and shared by
// the spillers, see getScratch: fresh memory is expensive here, see hugeAlloc).
func (b *builder) spill(job *runJob, sc *spillScratch) error {
	n := job.n
	head, shift, nb := spillBuckets(job.nTerms)
	h, sh := uint32(head), uint(shift)
	if cap(sc.a) < n {
		if sc.aFree != nil {
			sc.aFree()
		}
		sc.a, sc.aFree = hugeAlloc[posting](n + n/8)
	}
	a := sc.a[:n]
	counts := growTo(sc.counts[:0], nb+1)
	clear(counts)
	for _, bt := range job.batches {
		for _, g := range bt.ids {
			counts[spillBucket(uint32(g), h, sh)+1]++
		}
	}
	for i := 1; i < len(counts); i++ {
		counts[i] += counts[i-1]
	}
	for _, bt := range job.batches {
		start := int32(0)
		for i, end := range bt.ends {
			doc := bt.first + uint32(i)
			for j := start; j < end; j++ {
				g := uint32(bt.ids[j])
				k := spillBucket(g, h, sh)
				a[counts[k]] = posting{term: g, doc: doc, tf: bt.tfs[j]}
				counts[k]++
			}
			start = end
		}
	}
	for _, bt := range job.batches {
		b.pool.put(bt.slab) // the postings are in a
		bt.ids, bt.tfs, bt.slab = nil, nil, slab{}
	}
	job.batches = nil
	// counts[k] is now the end of bucket k.
	// Reserve the run's likely size (about 2.2 bytes per posting on text) at once: growing by append
	// copies the buffer many times over.
	enc := sc.enc[:0]
	if est := 3*n + 1<<20; cap(enc) < est {
		if sc.encFree != nil {
			sc.encFree()
		}
		// Off the Go heap, on huge pages: first touches of 4 KiB pages cost more than the encoding.
		enc, sc.encFree = hugeAlloc[byte](est)
		enc = enc[:0]
	}
	starts := make([]int64, 0, granCount(job.nTerms))
	sc.subCounts = growTo(sc.subCounts[:0], 1<<shift+1)
	lo := 0
	for k := 0; k < nb; k++ {
		hi := counts[k]
		ps := a[lo:hi]
		lo = hi
		if len(ps) == 0 {
			continue
		}
		if k >= head && shift > 0 {
			// Sort the bucket by term (stably) into sc.sub.
			mask := uint32(1)<<shift - 1
			sc2 := sc.subCounts[:1<<shift+1]
			clear(sc2)
			for _, p := range ps {
				sc2[p.term&mask+1]++
			}
			for i := 1; i < len(sc2); i++ {
				sc2[i] += sc2[i-1]
			}
			sc.sub = growTo(sc.sub[:0], len(ps))
			out := sc.sub[:len(ps)]
			for _, p := range ps {
				j := p.term & mask
				out[sc2[j]] = p
				sc2[j]++
			}
			ps = out
		}
		for i := 0; i < len(ps); {
			t := ps[i].term
			j := i + 1
			for j < len(ps) && ps[j].term == t {
				j++
			}
			for len(starts) <= granOf(int(t)) {
				starts = append(starts, int64(len(enc)))
			}
			enc = binary.AppendUvarint(enc, uint64(t))
			enc = binary.AppendUvarint(enc, uint64(j-i))
			prevDoc := uint32(0)
			for _, p := range ps[i:j] {
				enc = appendUvarint(enc, p.doc-prevDoc)
				enc = appendUvarint(enc, p.tf)
				prevDoc = p.doc
			}
			i = j
		}
	}
	sc.counts = counts
	b.runsMu.Lock()
	inMem := int64(cap(enc)) <= b.memLeft
	if inMem {
		b.memLeft -= int64(cap(enc))
	}
	b.runsMu.Unlock()
	r := run{size: int64(len(enc)), starts: starts}
	where := "in memory"
	if inMem {
		r.name = fmt.Sprintf("run %d (in memory)", job.idx+1)
		r.data, r.free = enc, sc.encFree
		sc.enc, sc.encFree = nil, nil // the run keeps the buffer
	} else {
		sc.enc = enc[:0]
		r.name = filepath.Join(b.runDir, fmt.Sprintf("run-%05d", job.idx))
		if err := os.WriteFile(r.name, enc, 0o644); err != nil {
			return fmt.Errorf("bm25: write run: %w", err)
		}
		where = "to file"
	}
	b.runsMu.Lock()
	b.runs[job.idx] = r
	b.runsMu.Unlock()
	if b.opt.Progress != nil {
		b.progressf("bm25: spilled run %d (%d postings, %s)\n", job.idx+1, n, where)
	}
	return nil
}

// appendUvarint appends v as a uvarint, with a fast path for one byte.
func appendUvarint(dst []byte, v uint32) []byte {
	if v < 0x80 {
		return append(dst, byte(v))
	}
	return binary.AppendUvarint(dst, uint64(v))
}

// termRec is what the merge learns about each term, indexed by global term id.
type termRec struct {
	off    uint64
	df     uint32
	maxTf  uint32
	bound  float32
	minNrm uint8
}

// mergeTask is a range of granules [g0, g1) merged and encoded by one goroutine into out, with recs
// (offsets relative to out) for its terms: the task's part of the merge's array of all terms' records.
type mergeTask struct {
	g0, g1 int
	out    []byte
	recs   []termRec
	err    error
	done   chan struct{}
}

// finish merges the runs into postings.bin, then writes the norms, lengths and the sorted dictionary.
func (b *builder) finish(ctx context.Context) error {
	meta := &b.meta
	meta.Terms = int64(len(b.global))
	// Norms and lengths.
	norms := make([]uint8, len(b.lens))
	for i, n := range b.lens {
		norms[i] = lengthToNorm(n)
	}
	if err := b.writeFile(fileNorms, norms); err != nil {
		return err
	}
	lb := make([]byte, 4*len(b.lens))
	for i, n := range b.lens {
		binary.LittleEndian.PutUint32(lb[4*i:], n)
	}
	if err := b.writeFile(fileLens, lb); err != nil {
		return err
	}
	lb = nil
	b.lens = nil

	// The dictionary order is computed, and the term strings and their offsets (terms.bin, termoff.bin)
	// written, while the postings are merged; the term records (terminfo.bin) need the merge.
	var order []uint32
	var termsSum, offSum FileSum
	var dictErr error
	sorted := make(chan struct{})
	go func() {
		defer close(sorted)
		b.termList = make([]string, len(b.global))
		for g, v := range b.global {
			b.termList[g] = b.voc.terms.at(v)
		}
		order = sortTerms(b.termList)
		termsSum, offSum, dictErr = b.writeTerms(order)
	}()
	b.note("norms written")
	recs, err := b.merge(ctx, norms)
	b.note("postings merged")
	<-sorted
	b.note("dictionary sorted and terms written")
	if err != nil {
		return err
	}
	if dictErr != nil {
		return dictErr
	}
	meta.Files[fileTerms], meta.Files[fileTermOff] = termsSum, offSum
	iw, err := createSum(b.dir, fileTermInfo)
	if err != nil {
		return err
	}
	var rec [termInfoSize]byte
	for _, id := range order {
		r := recs[id]
		binary.LittleEndian.PutUint64(rec[0:], r.off)
		binary.LittleEndian.PutUint32(rec[8:], r.df)
		binary.LittleEndian.PutUint32(rec[12:], r.maxTf)
		binary.LittleEndian.PutUint32(rec[16:], math.Float32bits(r.bound))
		rec[20] = r.minNrm
		iw.Write(rec[:])
	}
	is, err := iw.close()
	if err != nil {
		return err
	}
	meta.Files[fileTermInfo] = is
	b.note("dictionary written")
	if b.opt.Progress != nil {
		b.progressf("bm25: indexed %d documents (%d empty), %d terms, %d postings in %.1fs\n",
			meta.Docs, meta.Empty, meta.Terms, meta.Postings, time.Since(b.start).Seconds())
	}
	return writeMeta(b.dir, meta)
}

// writeTerms writes the term strings in dictionary order (terms.bin) and their offsets (termoff.bin).
func (b *builder) writeTerms(order []uint32) (terms, offs FileSum, err error) {
	tw, err := createSum(b.dir, fileTerms)
	if err != nil {
		return terms, offs, err
	}
	ow, err := createSum(b.dir, fileTermOff)
	if err != nil {
		tw.abort()
		return terms, offs, err
	}
	var tmp [8]byte
	var toff uint64
	for _, id := range order {
		t := b.termList[id]
		ow.Write(binary.LittleEndian.AppendUint64(tmp[:0], toff))
		tw.WriteString(t)
		toff += uint64(len(t))
	}
	ow.Write(binary.LittleEndian.AppendUint64(tmp[:0], toff))
	if terms, err = tw.close(); err != nil {
		ow.abort()
		return terms, offs, err
	}
	offs, err = ow.close()
	return terms, offs, err
}

// merge writes postings.bin: the term range is cut into tasks of about equal run bytes, which
// opt.Workers goroutines merge and encode into memory; this goroutine writes them in term order. It
// returns every term's record.
func (b *builder) merge(ctx context.Context, norms []uint8) ([]termRec, error) {
	nTerms := len(b.global)
	nGran := granCount(nTerms)
	files := make([]*os.File, len(b.runs)) // nil for the runs in memory
	for i, r := range b.runs {
		if r.data != nil {
			continue
		}
		f, err := os.Open(r.name)
		if err != nil {
			return nil, fmt.Errorf("bm25: %w", err)
		}
		defer f.Close()
		files[i] = f
	}
	// Cut tasks by run bytes.
	var total int64
	for _, r := range b.runs {
		total += r.size
	}
	target := min(max(total/int64(16*b.opt.Workers), 256<<10), 16<<20)
	var tasks []*mergeTask
	for g := 0; g < nGran; {
		t := &mergeTask{g0: g, done: make(chan struct{})}
		var sz int64
		for g < nGran && (sz < target || g == t.g0) {
			for _, r := range b.runs {
				sz += r.start(g+1) - r.start(g)
			}
			g++
		}
		t.g1 = g
		tasks = append(tasks, t)
	}
	K := normTable(b.meta.K1, b.meta.B, b.meta.AvgDL())
	recs, recsFree := hugeAlloc[termRec](nTerms) // filled by the tasks, each its own range
	b.recsFree = recsFree
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	// At most 2*Workers tasks are held in memory at once.
	slots := make(chan struct{}, 2*b.opt.Workers)
	taskCh := make(chan *mergeTask)
	go func() {
		defer close(taskCh)
		for _, t := range tasks {
			select {
			case slots <- struct{}{}:
			case <-ctx.Done():
				return
			}
			select {
			case taskCh <- t:
			case <-ctx.Done():
				return
			}
		}
	}()
	// Task output buffers are reused once written: there are at most len(slots) of them at a time.
	outs := make(chan []byte, cap(slots))
	var mem mergeMem
	// The merge goroutines are waited for before the memory they use (run data, records, output
	// buffers) is released, also when the merge stops early.
	var mergers sync.WaitGroup
	defer func() {
		cancel()
		mergers.Wait()
		mem.release()
	}()
	for i := 0; i < b.opt.Workers; i++ {
		mergers.Add(1)
		go func() {
			defer mergers.Done()
			m := merger{outs: outs, mem: &mem}
			for t := range taskCh {
				if ctx.Err() == nil {
					t.err = m.mergeTask(b, files, t, recs, norms, &K)
				}
				close(t.done)
			}
		}()
	}
	post, err := createSum(b.dir, filePostings)
	if err != nil {
		return nil, err
	}
	var off uint64
	for _, t := range tasks {
		select {
		case <-t.done:
		case <-ctx.Done():
			post.abort()
			return nil, ctx.Err()
		}
		if t.err == nil {
			t.err = ctx.Err()
		}
		if t.err != nil {
			post.abort()
			return nil, t.err
		}
		for i := range t.recs {
			t.recs[i].off += off
		}
		post.Write(t.out)
		off += uint64(len(t.out))
		select {
		case outs <- t.out[:0]:
		default:
		}
		t.out, t.recs = nil, nil
		<-slots
	}
	ps, err := post.close()
	if err != nil {
		return nil, err
	}
	b.meta.Files[filePostings] = ps
	return recs, nil
}

// mergeMem allocates the merge tasks' output buffers off the Go heap (on huge pages, likely the ones the
// vocabulary's tables gave back; see hugeAlloc) and frees them when the merge ends.
type mergeMem struct {
	mu    sync.Mutex
	frees []func()
}

// alloc returns an empty buffer of capacity at least n: at least mergeOutMin, so that buffers fit the
// next tasks too (only the pages written are touched).
func (mm *mergeMem) alloc(n int) []byte {
	buf, free := hugeAlloc[byte](max(n, mergeOutMin))
	if free != nil {
		mm.mu.Lock()
		mm.frees = append(mm.frees, free)
		mm.mu.Unlock()
	}
	return buf[:0]
}

func (mm *mergeMem) release() {
	mm.mu.Lock()
	defer mm.mu.Unlock()
	for _, f := range mm.frees {
		f()
	}
	mm.frees = nil
}

const mergeOutMin = 32 << 20

// merger holds one merge goroutine's reusable buffers.
type merger struct {
	outs       chan []byte // output buffers to reuse
	mem        *mergeMem
	sec        [][]byte
	buf        []byte
	docs, tfs  []uint32
	data, skip []byte
}

// runCursor walks the terms of one run's section.
type runCursor struct {
	b    []byte
	term uint32
	n    int
	eof  bool
}

func (c *runCursor) advance() bool {
	if len(c.b) == 0 {
		c.eof = true
		return true
	}
	t, k := binary.Uvarint(c.b)
	if k <= 0 {
		return false
	}
	c.b = c.b[k:]
	n, k := binary.Uvarint(c.b)
	if k <= 0 {
		return false
	}
	c.b = c.b[k:]
	c.term, c.n = uint32(t), int(n)
	return true
}

func (m *merger) mergeTask(b *builder, files []*os.File, t *mergeTask, recs []termRec, norms []uint8, K *[256]float64) error {
	t0 := granFirst(t.g0)
	t1 := min(granFirst(t.g1), len(b.global))
	// Read each file run's section of the task into one buffer; a run in memory is read in place.
	var need int64
	for _, r := range b.runs {
		if r.data == nil {
			need += r.start(t.g1) - r.start(t.g0)
		}
	}
	if int64(cap(m.buf)) < need {
		m.buf = make([]byte, need)
	}
	buf := m.buf[:need]
	cur := make([]runCursor, len(b.runs))
	var at int64
	for i, r := range b.runs {
		s, e := r.start(t.g0), r.start(t.g1)
		var sec []byte
		if r.data != nil {
			sec = r.data[s:e]
		} else {
			sec = buf[at : at+e-s]
			at += e - s
			if _, err := files[i].ReadAt(sec, s); err != nil {
				return fmt.Errorf("bm25: read run %s: %w", r.name, err)
			}
		}
		cur[i].b = sec
		if !cur[i].advance() {
			return fmt.Errorf("bm25: read run %s: corrupt", r.name)
		}
	}
	t.recs = recs[t0:t1]
	var secs int64
	for _, c := range cur {
		secs += int64(len(c.b))
	}
	var out []byte
	select {
	case out = <-m.outs:
	default:
	}
	if int64(cap(out)) < secs+secs/4 {
		out = m.mem.alloc(int(secs + secs/4))
	}
	docs, tfs := m.docs, m.tfs
	for term := t0; term < t1; term++ {
		docs, tfs = docs[:0], tfs[:0]
		for i := range cur {
			c := &cur[i]
			if c.eof || c.term != uint32(term) {
				continue
			}
			prev := uint32(0)
			p := c.b
			for k := 0; k < c.n; k++ {
				var g, tf uint64
				if len(p) >= 2 && p[0] < 0x80 && p[1] < 0x80 { // the common case: both one byte
					g, tf = uint64(p[0]), uint64(p[1])
					p = p[2:]
				} else {
					var n1, n2 int
					g, n1 = binary.Uvarint(p)
					if n1 <= 0 {
						return fmt.Errorf("bm25: read run %s: truncated", b.runs[i].name)
					}
					tf, n2 = binary.Uvarint(p[n1:])
					if n2 <= 0 {
						return fmt.Errorf("bm25: read run %s: truncated", b.runs[i].name)
					}
					p = p[n1+n2:]
				}
				prev += uint32(g)
				docs = append(docs, prev)
				tfs = append(tfs, uint32(tf))
			}
			c.b = p
			if !c.advance() {
				return fmt.Errorf("bm25: read run %s: corrupt", b.runs[i].name)
			}
		}
		if len(docs) == 0 {
			return fmt.Errorf("bm25: internal error: term %q has no postings", b.termName(term))
		}
		var rec termRec
		rec, m.data, m.skip = encodeTerm(docs, tfs, norms, K, m.data[:0], m.skip[:0])
		if len(m.data) > math.MaxUint32 {
			return fmt.Errorf("bm25: term %q: postings exceed 4 GiB", b.termName(term))
		}
		rec.off = uint64(len(out))
		out = append(out, m.skip...)
		out = append(out, m.data...)
		t.recs[term-t0] = rec
	}
	m.docs, m.tfs = docs, tfs
	t.out = out
	return nil
}

// termName returns the string of global term g.
func (b *builder) termName(g int) string { return b.voc.terms.at(b.global[g]) }

// sortTerms returns the term ids in the order of the terms' bytes. It sorts (8-byte big-endian prefix, id)
// pairs, comparing whole strings only when prefixes are equal: most comparisons are then of integers in
// one array instead of two strings elsewhere in memory. A prefix is zero-padded, so a string that is a
// prefix of another sorts first, and equal prefixes fall back to the full comparison: the order is that
// of the strings, which are distinct.
func sortTerms(terms []string) []uint32 {
	type key struct {
		prefix uint64
		id     uint32
	}
	keys, free := hugeAlloc[key](len(terms))
	if free != nil {
		defer free()
	}
	for i, t := range terms {
		var p [8]byte
		copy(p[:], t)
		keys[i] = key{binary.BigEndian.Uint64(p[:]), uint32(i)}
	}
	slices.SortFunc(keys, func(x, y key) int {
		if x.prefix != y.prefix {
			if x.prefix < y.prefix {
				return -1
			}
			return 1
		}
		return strings.Compare(terms[x.id], terms[y.id])
	})
	order := make([]uint32, len(terms))
	for i, k := range keys {
		order[i] = k.id
	}
	return order
}

// progressf writes a progress line to opt.Progress (which must be set), one goroutine at a time.
func (b *builder) progressf(format string, args ...any) {
	b.progMu.Lock()
	fmt.Fprintf(b.opt.Progress, format, args...)
	b.progMu.Unlock()
}

// note writes a timed progress line.
func (b *builder) note(what string) {
	if b.opt.Progress != nil {
		b.progressf("bm25: %s at %.1fs\n", what, time.Since(b.start).Seconds())
	}
}

func (b *builder) writeFile(name string, data []byte) error {
	w, err := createSum(b.dir, name)
	if err != nil {
		return err
	}
	w.Write(data)
	s, err := w.close()
	if err != nil {
		return err
	}
	b.meta.Files[name] = s
	return nil
}
