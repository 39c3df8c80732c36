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
	"sort"
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
	// MemoryBudget bounds the in-memory postings buffer in bytes; a full buffer is spilled to a sorted run
	// file and the runs are merged at the end (default 1 GiB). The term dictionary is held in memory in
	// addition, about 100 bytes per distinct term.
	MemoryBudget int64
	// Workers analyze documents in parallel (default GOMAXPROCS).
	Workers int
	// Progress, when set, receives a progress line now and then.
	Progress io.Writer
	// TempDir holds the run files (default a folder inside the output directory, removed at the end).
	TempDir string
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

// batch is a run of consecutive documents, handed from the reader to a worker and on to the accumulator.
type batch struct {
	seq    int
	first  uint32 // ordinal of the first document
	worker int
	docs   []corpus.Document
	// Filled by the worker: per document its length and its distinct local term ids with frequencies.
	lens   []uint32
	ends   []int32 // end of each document's entries in ids/tfs
	ids    []int32
	tfs    []uint32
	newTok []string // stems of the worker's local ids first used in this batch, in id order
}

// worker analyzes documents. Its local ids name distinct terms (after stemming): tok caches each
// lowercased token's local id, and stems gives a term's local id the first time another token stems to
// it. The accumulator translates local ids to global term ids in document order, so the index does not
// depend on scheduling.
type worker struct {
	an     Analyzer
	fields Fields
	tok    *tokTable        // lowercased token -> local term id, or -1 for a stopword
	stems  map[string]int32 // term -> local term id
	nLocal int32
	stamp  []int32 // per local id: index+1 of the document that last saw it, within the batch
	slot   []int32 // per local id: its entry index in the current document
}

func (w *worker) process(b *batch) {
	b.lens = b.lens[:0]
	b.ends = b.ends[:0]
	b.ids = b.ids[:0]
	b.tfs = b.tfs[:0]
	b.newTok = b.newTok[:0]
	possessive := w.an == AnalyzerEnglish
	for di := range b.docs {
		d := &b.docs[di]
		mark := int32(di + 1)
		var n uint32
		add := func(tok []byte) {
			id, ok := w.tok.get(tok)
			if !ok {
				t, keep := termOf(w.an, tok)
				if !keep {
					id = -1
				} else if sid, seen := w.stems[t]; seen {
					id = sid // another token with the same stem
				} else {
					id = w.nLocal
					w.nLocal++
					w.stems[t] = id
					b.newTok = append(b.newTok, t)
					w.stamp = append(w.stamp, 0)
					w.slot = append(w.slot, 0)
				}
				w.tok.put(tok, id)
			}
			if id < 0 {
				return
			}
			n++
			if w.stamp[id] == mark {
				b.tfs[w.slot[id]]++
				return
			}
			w.stamp[id] = mark
			w.slot[id] = int32(len(b.ids))
			b.ids = append(b.ids, id)
			b.tfs = append(b.tfs, 1)
		}
		if w.fields != FieldsText {
			eachToken(d.Title, possessive, add)
		}
		if w.fields != FieldsTitle {
			eachToken(d.Text, possessive, add)
		}
		b.lens = append(b.lens, n)
		b.ends = append(b.ends, int32(len(b.ids)))
	}
	// Reset stamps so that the next batch's marks (1..) do not collide.
	for _, id := range b.ids {
		w.stamp[id] = 0
	}
}

// posting is one (term, document, frequency) triple of an in-memory run.
type posting struct{ term, doc, tf uint32 }

type builder struct {
	opt    Options
	dir    string
	runDir string
	start  time.Time

	// Accumulator state (one goroutine).
	terms    map[string]uint32
	termList []string
	trans    [][]int32 // per worker: local id -> global id
	lens     []uint32
	buf      chunks    // the in-memory run
	maxBuf   int       // spill when buf would exceed this many postings
	sorted   []posting // the spill's scratch copy
	runBuf   []byte    // the spill's encoding buffer
	runs     []string
	meta     Meta
	nextSeq  int
	pending  map[int]*batch
	lastShow time.Time
}

func (b *builder) run(ctx context.Context, r corpus.Reader) (*Meta, error) {
	opt := b.opt
	b.meta = Meta{Format: formatName, Version: formatVersion, Analyzer: opt.Analyzer, Fields: opt.Fields, K1: opt.K1, B: opt.B, Files: map[string]FileSum{}}
	b.terms = map[string]uint32{}
	b.trans = make([][]int32, opt.Workers)
	b.pending = map[int]*batch{}
	capPostings := opt.MemoryBudget / int64(2*12) // the buffer and the sort's scatter copy
	if capPostings < 1024 {
		capPostings = 1024
	}
	b.maxBuf = int(capPostings)

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	work := make(chan *batch, 2*opt.Workers)
	done := make(chan *batch, 2*opt.Workers)
	free := make(chan *batch, 4*opt.Workers)
	var wg sync.WaitGroup
	for i := 0; i < opt.Workers; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			w := &worker{an: opt.Analyzer, fields: opt.Fields, tok: newTokTable(), stems: map[string]int32{}}
			for bt := range work {
				bt.worker = i
				w.process(bt)
				done <- bt
			}
		}(i)
	}
	// The accumulator runs on its own goroutine; the reader runs on this one.
	accErr := make(chan error, 1)
	go func() {
		var err error
		for bt := range done {
			if err != nil {
				continue // drain
			}
			if err = b.accept(bt, free); err != nil {
				cancel()
			}
		}
		accErr <- err
	}()

	readErr := b.read(ctx, r, work, free)
	close(work)
	wg.Wait()
	close(done)
	aerr := <-accErr
	if aerr != nil {
		return nil, aerr
	}
	if readErr != nil {
		return nil, readErr
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if b.buf.n > 0 || len(b.runs) == 0 {
		if err := b.spill(); err != nil {
			return nil, err
		}
	}
	b.buf, b.sorted = chunks{}, nil
	if err := b.finish(ctx); err != nil {
		return nil, err
	}
	return &b.meta, nil
}

// read streams documents, writes the document store, checks ids and hands batches to the workers.
func (b *builder) read(ctx context.Context, r corpus.Reader, work, free chan *batch) error {
	docs, err := createSum(b.dir, fileDocs)
	if err != nil {
		return err
	}
	offs, err := createSum(b.dir, fileDocOff)
	if err != nil {
		docs.abort()
		return err
	}
	fail := func(err error) error { docs.abort(); offs.abort(); return err }
	seed := maphash.MakeSeed()
	seen := map[uint64]uint32{}   // hash of id -> ordinal
	collided := map[string]bool{} // ids whose hash matched a different id
	var pos int64
	var ord uint32
	var hdr [3 * binary.MaxVarintLen64]byte
	var u8 [8]byte
	seq := 0
	cur := &batch{}
	send := func() error {
		if len(cur.docs) == 0 {
			return nil
		}
		cur.seq = seq
		seq++
		select {
		case work <- cur:
		case <-ctx.Done():
			return ctx.Err()
		}
		select {
		case cur = <-free:
		default:
			cur = &batch{}
		}
		cur.first = ord
		return nil
	}
	for {
		if err := ctx.Err(); err != nil {
			return fail(err)
		}
		d, err := r.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return fail(fmt.Errorf("bm25: read corpus: %w", err))
		}
		if d.ID == "" {
			return fail(fmt.Errorf("bm25: document %d has an empty id", ord))
		}
		for _, f := range [...]struct{ name, s string }{{"id", d.ID}, {"title", d.Title}, {"text", d.Text}} {
			if !utf8.ValidString(f.s) {
				return fail(fmt.Errorf("bm25: document %q: field %s is not valid UTF-8", d.ID, f.name))
			}
		}
		if ord == math.MaxUint32 {
			return fail(fmt.Errorf("bm25: more than %d documents", uint32(math.MaxUint32)))
		}
		h := maphash.String(seed, d.ID)
		if prev, ok := seen[h]; ok {
			if collided[d.ID] {
				return fail(fmt.Errorf("bm25: duplicate document id %q (document %d)", d.ID, ord))
			}
			prevID, err := b.readID(docs, prev)
			if err != nil {
				return fail(err)
			}
			if prevID == d.ID {
				return fail(fmt.Errorf("bm25: duplicate document id %q (documents %d and %d)", d.ID, prev, ord))
			}
			collided[d.ID] = true
		} else {
			seen[h] = ord
		}
		binary.LittleEndian.PutUint64(u8[:], uint64(pos))
		offs.Write(u8[:])
		n := binary.PutUvarint(hdr[:], uint64(len(d.ID)))
		n += binary.PutUvarint(hdr[n:], uint64(len(d.Title)))
		n += binary.PutUvarint(hdr[n:], uint64(len(d.Text)))
		docs.Write(hdr[:n])
		io.WriteString(docs, d.ID)
		io.WriteString(docs, d.Title)
		io.WriteString(docs, d.Text)
		pos += int64(n + len(d.ID) + len(d.Title) + len(d.Text))
		if len(cur.docs) == 0 {
			cur.first = ord
		}
		cur.docs = append(cur.docs, d)
		ord++
		if len(cur.docs) == batchDocs {
			if err := send(); err != nil {
				return fail(err)
			}
		}
	}
	if err := send(); err != nil {
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

// readID reads back the id of an already written document (only on a hash match of two ids).
func (b *builder) readID(w *sumWriter, ord uint32) (string, error) {
	if err := w.w.Flush(); err != nil {
		return "", fmt.Errorf("bm25: %w", err)
	}
	// The offsets file is still buffered; find the record by scanning is too slow, so the offsets are
	// recomputed from the doc store on this rare path.
	f, err := os.Open(w.f.Name())
	if err != nil {
		return "", fmt.Errorf("bm25: %w", err)
	}
	defer f.Close()
	br := bufio.NewReader(f)
	for i := uint32(0); ; i++ {
		var l [3]uint64
		for j := range l {
			if l[j], err = binary.ReadUvarint(br); err != nil {
				return "", fmt.Errorf("bm25: re-read %s: %w", w.f.Name(), err)
			}
		}
		if i == ord {
			id := make([]byte, l[0])
			if _, err := io.ReadFull(br, id); err != nil {
				return "", fmt.Errorf("bm25: re-read %s: %w", w.f.Name(), err)
			}
			return string(id), nil
		}
		if _, err := br.Discard(int(l[0] + l[1] + l[2])); err != nil {
			return "", fmt.Errorf("bm25: re-read %s: %w", w.f.Name(), err)
		}
	}
}

// accept takes analyzed batches in any order and applies them in document order.
func (b *builder) accept(bt *batch, free chan *batch) error {
	b.pending[bt.seq] = bt
	for {
		next, ok := b.pending[b.nextSeq]
		if !ok {
			return nil
		}
		delete(b.pending, b.nextSeq)
		b.nextSeq++
		if err := b.apply(next); err != nil {
			return err
		}
		// Recycle the batch once applied.
		clear(next.docs)
		next.docs = next.docs[:0]
		select {
		case free <- next:
		default:
		}
	}
}

func (b *builder) apply(bt *batch) error {
	tr := b.trans[bt.worker]
	for _, t := range bt.newTok {
		id, ok := b.terms[t]
		if !ok {
			id = uint32(len(b.termList))
			b.terms[t] = id
			b.termList = append(b.termList, t)
		}
		tr = append(tr, int32(id))
	}
	b.trans[bt.worker] = tr
	start := int32(0)
	for i, end := range bt.ends {
		doc := bt.first + uint32(i)
		n := bt.lens[i]
		b.lens = append(b.lens, n)
		if n == 0 {
			b.meta.Empty++
		} else {
			b.meta.DocCount++
			b.meta.SumTotalTermFreq += int64(n)
		}
		if b.buf.n > 0 && b.buf.n+int(end-start) > b.maxBuf {
			if err := b.spill(); err != nil {
				return err
			}
		}
		for j := start; j < end; j++ {
			b.buf.add(posting{term: uint32(tr[bt.ids[j]]), doc: doc, tf: bt.tfs[j]})
		}
		b.meta.Postings += int64(end - start)
		start = end
	}
	if b.opt.Progress != nil && time.Since(b.lastShow) > 2*time.Second {
		b.lastShow = time.Now()
		el := time.Since(b.start).Seconds()
		fmt.Fprintf(b.opt.Progress, "bm25: %d documents, %d terms, %d runs, %.0f docs/s\n",
			len(b.lens), len(b.termList), len(b.runs), float64(len(b.lens))/el)
	}
	return nil
}

// spill sorts the buffered postings by term (stably, so documents stay in order) and writes a run file:
// per term, uvarint term-id gap, uvarint count, then per posting uvarint doc gap and uvarint tf.
func (b *builder) spill() error {
	name := filepath.Join(b.runDir, fmt.Sprintf("run-%05d", len(b.runs)))
	f, err := os.Create(name)
	if err != nil {
		return fmt.Errorf("bm25: %w", err)
	}
	w := bufio.NewWriterSize(f, 4<<20)
	n := b.buf.n
	// A two-pass LSD radix sort by term id, stable so that documents stay in order: first by the low
	// digit from the chunks into sorted, then by the high digit from sorted back into the chunks. Each
	// pass scatters into at most a few thousand buckets, which keeps its writes in cache; a one-pass
	// counting sort over a million terms missed the cache on nearly every posting.
	lowBits := max(1, (bits.Len(uint(len(b.termList)))+1)/2)
	lowMask := uint32(1)<<lowBits - 1
	if cap(b.sorted) < n {
		b.sorted = make([]posting, n)
	}
	sorted := b.sorted[:n]
	counts := make([]int, int(lowMask)+2)
	for _, c := range b.buf.c[:b.buf.used] {
		for _, p := range c {
			counts[p.term&lowMask+1]++
		}
	}
	for i := 1; i < len(counts); i++ {
		counts[i] += counts[i-1]
	}
	for _, c := range b.buf.c[:b.buf.used] {
		for _, p := range c {
			k := p.term & lowMask
			sorted[counts[k]] = p
			counts[k]++
		}
	}
	counts = make([]int, len(b.termList)>>lowBits+2)
	for _, p := range sorted {
		counts[p.term>>lowBits+1]++
	}
	for i := 1; i < len(counts); i++ {
		counts[i] += counts[i-1]
	}
	out := b.buf.c[:b.buf.used] // full chunks except the last, so position k is out[k/chunkLen][k%chunkLen]
	for _, p := range sorted {
		k := p.term >> lowBits
		i := counts[k]
		out[i/chunkLen][i%chunkLen] = p
		counts[k]++
	}
	at := func(i int) *posting { return &out[i/chunkLen][i%chunkLen] }
	var enc []byte
	if cap(b.runBuf) > 0 {
		enc = b.runBuf[:0]
	}
	prevTerm := uint32(0)
	for i := 0; i < n; {
		t := at(i).term
		j := i
		for j < n && at(j).term == t {
			j++
		}
		enc = binary.AppendUvarint(enc, uint64(t-prevTerm))
		enc = binary.AppendUvarint(enc, uint64(j-i))
		prevTerm = t
		prevDoc := uint32(0)
		for x := i; x < j; x++ {
			p := at(x)
			enc = binary.AppendUvarint(enc, uint64(p.doc-prevDoc))
			enc = binary.AppendUvarint(enc, uint64(p.tf))
			prevDoc = p.doc
		}
		if len(enc) >= 1<<20 {
			w.Write(enc)
			enc = enc[:0]
		}
		i = j
	}
	w.Write(enc)
	b.runBuf = enc[:0]
	if err := w.Flush(); err != nil {
		f.Close()
		return fmt.Errorf("bm25: write run: %w", err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("bm25: write run: %w", err)
	}
	b.runs = append(b.runs, name)
	b.buf.reset()
	if b.opt.Progress != nil {
		fmt.Fprintf(b.opt.Progress, "bm25: spilled run %d (%d postings)\n", len(b.runs), n)
	}
	return nil
}

// chunks is a growable postings buffer that never copies: fixed-size chunks, reused after a spill.
type chunks struct {
	c    [][]posting
	n    int
	used int // chunks in use
}

const chunkLen = 1 << 16

func (c *chunks) add(p posting) {
	if c.used == 0 || len(c.c[c.used-1]) == chunkLen {
		if c.used == len(c.c) {
			c.c = append(c.c, make([]posting, 0, chunkLen))
		}
		c.used++
	}
	last := &c.c[c.used-1]
	*last = append(*last, p)
	c.n++
}

func (c *chunks) reset() {
	for i := range c.c {
		c.c[i] = c.c[i][:0]
	}
	c.used, c.n = 0, 0
}

// runReader reads one run file term by term.
type runReader struct {
	f    *os.File
	r    *bufio.Reader
	term uint32 // current term; valid when !eof
	n    int    // postings of the current term
	eof  bool
	name string
}

func (rr *runReader) advance() error {
	gap, err := binary.ReadUvarint(rr.r)
	if errors.Is(err, io.EOF) {
		rr.eof = true
		return nil
	}
	if err != nil {
		return fmt.Errorf("bm25: read run %s: %w", rr.name, err)
	}
	n, err := binary.ReadUvarint(rr.r)
	if err != nil {
		return fmt.Errorf("bm25: read run %s: %w", rr.name, err)
	}
	rr.term += uint32(gap)
	rr.n = int(n)
	return nil
}

// termRec is what the merge learns about each term, indexed by global term id.
type termRec struct {
	off    uint64
	df     uint32
	maxTf  uint32
	bound  float32
	minNrm uint8
}

// finish merges the runs into postings.bin, then writes the norms, lengths and the sorted dictionary.
func (b *builder) finish(ctx context.Context) error {
	meta := &b.meta
	meta.Terms = int64(len(b.termList))
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

	// The default parameters' norm table gives each term's exact score bound.
	K := normTable(meta.K1, meta.B, meta.AvgDL())

	readers := make([]*runReader, len(b.runs))
	for i, name := range b.runs {
		f, err := os.Open(name)
		if err != nil {
			return fmt.Errorf("bm25: %w", err)
		}
		defer f.Close()
		readers[i] = &runReader{f: f, r: bufio.NewReaderSize(f, 1<<20), name: name}
		if err := readers[i].advance(); err != nil {
			return err
		}
	}
	post, err := createSum(b.dir, filePostings)
	if err != nil {
		return err
	}
	recs := make([]termRec, len(b.termList))
	var docs, tfs []uint32
	var data, skips []byte
	var tmp [binary.MaxVarintLen64]byte
	var off uint64
	for t := range b.termList {
		if t%(1<<20) == 0 {
			if err := ctx.Err(); err != nil {
				post.abort()
				return err
			}
		}
		docs, tfs = docs[:0], tfs[:0]
		for _, rr := range readers {
			if rr.eof || rr.term != uint32(t) {
				continue
			}
			prev := uint32(0)
			for k := 0; k < rr.n; k++ {
				g, err1 := binary.ReadUvarint(rr.r)
				tf, err2 := binary.ReadUvarint(rr.r)
				if err1 != nil || err2 != nil {
					post.abort()
					return fmt.Errorf("bm25: read run %s: truncated", rr.name)
				}
				prev += uint32(g)
				docs = append(docs, prev)
				tfs = append(tfs, uint32(tf))
			}
			if err := rr.advance(); err != nil {
				post.abort()
				return err
			}
		}
		if len(docs) == 0 {
			post.abort()
			return fmt.Errorf("bm25: internal error: term %q has no postings", b.termList[t])
		}
		var rec termRec
		rec, data, skips = encodeTerm(docs, tfs, norms, &K, data[:0], skips[:0])
		rec.off = off
		if len(data) > math.MaxUint32 {
			post.abort()
			return fmt.Errorf("bm25: term %q: postings exceed 4 GiB", b.termList[t])
		}
		post.Write(skips)
		post.Write(data)
		off += uint64(len(skips) + len(data))
		recs[t] = rec
	}
	ps, err := post.close()
	if err != nil {
		return err
	}
	meta.Files[filePostings] = ps

	// The dictionary, sorted by term bytes.
	order := make([]uint32, len(b.termList))
	for i := range order {
		order[i] = uint32(i)
	}
	sort.Slice(order, func(i, j int) bool { return b.termList[order[i]] < b.termList[order[j]] })
	tw, err := createSum(b.dir, fileTerms)
	if err != nil {
		return err
	}
	ow, err := createSum(b.dir, fileTermOff)
	if err != nil {
		tw.abort()
		return err
	}
	iw, err := createSum(b.dir, fileTermInfo)
	if err != nil {
		tw.abort()
		ow.abort()
		return err
	}
	var toff uint64
	var rec [termInfoSize]byte
	for _, id := range order {
		t := b.termList[id]
		ow.Write(binary.LittleEndian.AppendUint64(tmp[:0], toff))
		io.WriteString(tw, t)
		toff += uint64(len(t))
		r := recs[id]
		binary.LittleEndian.PutUint64(rec[0:], r.off)
		binary.LittleEndian.PutUint32(rec[8:], r.df)
		binary.LittleEndian.PutUint32(rec[12:], r.maxTf)
		binary.LittleEndian.PutUint32(rec[16:], math.Float32bits(r.bound))
		rec[20] = r.minNrm
		iw.Write(rec[:])
	}
	ow.Write(binary.LittleEndian.AppendUint64(tmp[:0], toff))
	for _, x := range []struct {
		name string
		w    *sumWriter
	}{{fileTerms, tw}, {fileTermOff, ow}, {fileTermInfo, iw}} {
		s, err := x.w.close()
		if err != nil {
			return err
		}
		meta.Files[x.name] = s
	}
	if b.opt.Progress != nil {
		fmt.Fprintf(b.opt.Progress, "bm25: indexed %d documents (%d empty), %d terms, %d postings in %.1fs\n",
			meta.Docs, meta.Empty, meta.Terms, meta.Postings, time.Since(b.start).Seconds())
	}
	return writeMeta(b.dir, meta)
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
