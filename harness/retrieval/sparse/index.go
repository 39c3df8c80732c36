package sparse

import (
	"bufio"
	"container/heap"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"

	"github.com/ragbench/ragbench/harness/corpus"
	"github.com/ragbench/ragbench/harness/retrieval"
)

// Format is the meta.json format name of a sparse index.
const Format = "ragbench-sparse"

// Index files.
const (
	fileMeta    = "meta.json"
	fileDocs    = "docs.jsonl"
	fileVectors = "vectors.bin"
)

// Meta is a sparse index's meta.json.
type Meta struct {
	Format string `json:"format"`
	// Count is the number of documents; Vocab the vocabulary size; Postings the number of entries.
	Count    int   `json:"count"`
	Vocab    int   `json:"vocab"`
	Postings int64 `json:"postings"`
	// Encoder describes the encoder the documents were encoded with (Describe), with no secret.
	Encoder map[string]string `json:"encoder"`
	// VectorsCRC is the CRC-32C of vectors.bin.
	VectorsCRC uint32 `json:"vectors_crc32c"`
}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// maxVocab bounds a declared vocabulary (the largest word-piece vocabularies hold a few 100,000).
const maxVocab = 1 << 24

// Describer is implemented by encoders that can say what they are (TEI).
type Describer interface{ Describe() map[string]string }

// buildBatch is the number of documents encoded per Encode call.
const buildBatch = 256

// Build encodes every document of docs with enc and writes an index to dir: meta.json, docs.jsonl
// (id, title, text per line, in order) and vectors.bin (per document: entry count uint32, then index
// uint32 and value float32 per entry, little-endian).
func Build(ctx context.Context, docs corpus.Reader, enc Encoder, dir string, progress io.Writer) error {
	if progress == nil {
		progress = io.Discard
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	df, err := os.Create(filepath.Join(dir, fileDocs))
	if err != nil {
		return err
	}
	defer df.Close()
	vf, err := os.Create(filepath.Join(dir, fileVectors))
	if err != nil {
		return err
	}
	defer vf.Close()
	dw, vw := bufio.NewWriter(df), bufio.NewWriter(vf)
	crc := crc32.New(castagnoli)
	vout := io.MultiWriter(vw, crc)
	m := Meta{Format: Format, Vocab: enc.Vocab(), Encoder: map[string]string{}}
	if d, ok := enc.(Describer); ok {
		m.Encoder = d.Describe()
	}
	var batch []corpus.Document
	flush := func() error {
		if len(batch) == 0 {
			return nil
		}
		texts := make([]string, len(batch))
		for i, d := range batch {
			texts[i] = passageText(d)
		}
		vs, err := enc.Encode(ctx, texts)
		if err != nil {
			return err
		}
		if len(vs) != len(batch) {
			return fmt.Errorf("sparse build: the encoder returned %d vectors for %d documents", len(vs), len(batch))
		}
		var b [8]byte
		for i, d := range batch {
			v, err := Check(vs[i], m.Vocab, fmt.Sprintf("sparse build: document %q", d.ID))
			if err != nil {
				return err
			}
			line, _ := json.Marshal(d)
			dw.Write(line)
			dw.WriteByte('\n')
			binary.LittleEndian.PutUint32(b[:4], uint32(len(v)))
			vout.Write(b[:4])
			for _, e := range v {
				binary.LittleEndian.PutUint32(b[:4], e.Index)
				binary.LittleEndian.PutUint32(b[4:], math.Float32bits(e.Value))
				vout.Write(b[:])
			}
			m.Postings += int64(len(v))
			m.Count++
		}
		fmt.Fprintf(progress, "sparse: %d documents encoded\n", m.Count)
		batch = batch[:0]
		return nil
	}
	for {
		d, err := docs.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return err
		}
		batch = append(batch, d)
		if len(batch) == buildBatch {
			if err := flush(); err != nil {
				return err
			}
		}
	}
	if err := flush(); err != nil {
		return err
	}
	if err := dw.Flush(); err != nil {
		return err
	}
	if err := vw.Flush(); err != nil {
		return err
	}
	m.VectorsCRC = crc.Sum32()
	b, _ := json.MarshalIndent(m, "", "  ")
	return os.WriteFile(filepath.Join(dir, fileMeta), append(b, '\n'), 0o644)
}

// passageText is the text a document is encoded from: its title and text, as the dense expert
// embeds them.
func passageText(d corpus.Document) string {
	if d.Title == "" {
		return d.Text
	}
	return d.Title + "\n" + d.Text
}

// Index is an opened sparse index, held in memory: the documents' vectors (forward, for scoring
// given documents) and one posting list per vocabulary entry (inverted, for the whole index).
type Index struct {
	dir  string
	meta Meta
	enc  Encoder
	docs []corpus.Document
	// Forward vectors: entries of document i are ent[fwd[i]:fwd[i+1]].
	fwd []int64
	ent []Entry
	// Postings of term t: post[off[t]:off[t+1]].
	off  []int64
	post []posting
}

type posting struct {
	doc    uint32
	impact float32
}

// Open reads the index in dir; enc encodes queries (nil: a TEI client for the server recorded in
// meta.json). A vocabulary index outside the declared vocabulary or a damaged vectors.bin is an error.
func Open(dir string, enc Encoder) (*Index, error) {
	b, err := os.ReadFile(filepath.Join(dir, fileMeta))
	if err != nil {
		return nil, fmt.Errorf("sparse index %s: %w", dir, err)
	}
	var m Meta
	if err := json.Unmarshal(b, &m); err != nil || m.Format != Format {
		return nil, fmt.Errorf("sparse index %s: meta.json is not a %s index (%v)", dir, Format, err)
	}
	if m.Vocab < 1 || m.Vocab > maxVocab || m.Count < 0 {
		return nil, fmt.Errorf("sparse index %s: meta.json declares %d documents over a vocabulary of %d: rebuild the index", dir, m.Count, m.Vocab)
	}
	if enc == nil {
		if m.Encoder["kind"] != "tei" {
			return nil, fmt.Errorf("sparse index %s: no encoder given and none recorded", dir)
		}
		t, err := NewTEI(Config{BaseURL: m.Encoder["base_url"], Model: m.Encoder["model"], Vocab: m.Vocab})
		if err != nil {
			return nil, fmt.Errorf("sparse index %s: %w", dir, err)
		}
		enc = t
	}
	if enc.Vocab() != m.Vocab {
		return nil, fmt.Errorf("sparse index %s: built over a vocabulary of %d, the encoder declares %d", dir, m.Vocab, enc.Vocab())
	}
	ix := &Index{dir: dir, meta: m, enc: enc}
	if err := ix.readDocs(); err != nil {
		return nil, err
	}
	if err := ix.readVectors(); err != nil {
		return nil, err
	}
	return ix, nil
}

func (ix *Index) readDocs() error {
	f, err := os.Open(filepath.Join(ix.dir, fileDocs))
	if err != nil {
		return fmt.Errorf("sparse index %s: %w", ix.dir, err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		var d corpus.Document
		if err := json.Unmarshal(sc.Bytes(), &d); err != nil {
			return fmt.Errorf("sparse index %s: %s line %d: %w", ix.dir, fileDocs, len(ix.docs)+1, err)
		}
		ix.docs = append(ix.docs, d)
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("sparse index %s: %w", ix.dir, err)
	}
	if len(ix.docs) != ix.meta.Count {
		return fmt.Errorf("sparse index %s: %s holds %d documents, meta.json %d: rebuild the index", ix.dir, fileDocs, len(ix.docs), ix.meta.Count)
	}
	return nil
}

func (ix *Index) readVectors() error {
	b, err := os.ReadFile(filepath.Join(ix.dir, fileVectors))
	if err != nil {
		return fmt.Errorf("sparse index %s: %w", ix.dir, err)
	}
	if crc32.Checksum(b, castagnoli) != ix.meta.VectorsCRC {
		return fmt.Errorf("sparse index %s: %s does not match its checksum: the index is corrupt; rebuild it", ix.dir, fileVectors)
	}
	bad := fmt.Errorf("sparse index %s: %s is truncated: rebuild the index", ix.dir, fileVectors)
	ix.fwd = make([]int64, 0, ix.meta.Count+1)
	ix.ent = make([]Entry, 0, min(ix.meta.Postings, int64(len(b)/8)))
	df := make([]int64, ix.meta.Vocab+1)
	p := 0
	for i := 0; i < ix.meta.Count; i++ {
		ix.fwd = append(ix.fwd, int64(len(ix.ent)))
		if p+4 > len(b) {
			return bad
		}
		n := int(binary.LittleEndian.Uint32(b[p:]))
		p += 4
		if p+8*n > len(b) {
			return bad
		}
		for j := 0; j < n; j++ {
			e := Entry{Index: binary.LittleEndian.Uint32(b[p:]), Value: math.Float32frombits(binary.LittleEndian.Uint32(b[p+4:]))}
			p += 8
			if int(e.Index) >= ix.meta.Vocab {
				return fmt.Errorf("sparse index %s: document %d: %w: index %d, the vocabulary has %d entries", ix.dir, i, ErrVocab, e.Index, ix.meta.Vocab)
			}
			ix.ent = append(ix.ent, e)
			df[e.Index+1]++
		}
	}
	ix.fwd = append(ix.fwd, int64(len(ix.ent)))
	if p != len(b) {
		return fmt.Errorf("sparse index %s: %s has %d bytes after the last document: rebuild the index", ix.dir, fileVectors, len(b)-p)
	}
	for t := 1; t < len(df); t++ {
		df[t] += df[t-1]
	}
	ix.off = df
	ix.post = make([]posting, len(ix.ent))
	next := append([]int64(nil), df[:ix.meta.Vocab]...)
	for d := 0; d < ix.meta.Count; d++ {
		for _, e := range ix.ent[ix.fwd[d]:ix.fwd[d+1]] {
			ix.post[next[e.Index]] = posting{doc: uint32(d), impact: e.Value}
			next[e.Index]++
		}
	}
	return nil
}

// Len is the number of documents.
func (ix *Index) Len() int { return len(ix.docs) }

// Meta returns the index's metadata.
func (ix *Index) Meta() Meta { return ix.meta }

// Doc returns document i.
func (ix *Index) Doc(i int) (corpus.Document, error) {
	if i < 0 || i >= len(ix.docs) {
		return corpus.Document{}, fmt.Errorf("sparse index %s: no document %d", ix.dir, i)
	}
	return ix.docs[i], nil
}

// Vector returns document i's vector.
func (ix *Index) Vector(i int) Vector { return Vector(ix.ent[ix.fwd[i]:ix.fwd[i+1]]) }

// Close releases nothing (the index is in memory); it closes a TEI client Open made.
func (ix *Index) Close() error {
	if c, ok := ix.enc.(io.Closer); ok {
		return c.Close()
	}
	return nil
}

// Result is a scored document ordinal.
type Result struct {
	Row   int
	Score float64
}

// Encode encodes a query with the index's encoder, checked against its vocabulary.
func (ix *Index) Encode(ctx context.Context, query string) (Vector, error) {
	vs, err := ix.enc.Encode(ctx, []string{query})
	if err != nil {
		return nil, err
	}
	if len(vs) != 1 {
		return nil, fmt.Errorf("sparse index %s: the encoder returned %d vectors for 1 query", ix.dir, len(vs))
	}
	return Check(vs[0], ix.meta.Vocab, "sparse query")
}

// Search scores every document sharing a term with q (the dot product of impacts, exactly) and
// returns the top k, best first, ties to the lower row. Documents with score 0 are not returned.
func (ix *Index) Search(q Vector, k int) []Result {
	if k <= 0 || len(q) == 0 {
		return nil
	}
	acc := make([]float64, len(ix.docs))
	seen := make([]bool, len(ix.docs))
	var touched []uint32
	for _, e := range q {
		if int(e.Index) >= ix.meta.Vocab || e.Value == 0 {
			continue
		}
		w := float64(e.Value)
		for _, p := range ix.post[ix.off[e.Index]:ix.off[e.Index+1]] {
			if !seen[p.doc] {
				seen[p.doc] = true
				touched = append(touched, p.doc)
			}
			acc[p.doc] += w * float64(p.impact)
		}
	}
	h := &resultHeap{}
	for _, d := range touched {
		h.offer(Result{Row: int(d), Score: acc[d]}, k)
	}
	return h.best()
}

// SearchRows scores only the given rows (the document scope), exactly as Search does.
func (ix *Index) SearchRows(q Vector, k int, rows []int32) []Result {
	h := &resultHeap{}
	for _, d := range rows {
		h.offer(Result{Row: int(d), Score: q.Dot(ix.Vector(int(d)))}, k)
	}
	return h.best()
}

// BruteForce scores every document by a dot product with q: the peer of Search in tests.
func (ix *Index) BruteForce(q Vector, k int) []Result {
	rows := make([]int32, len(ix.docs))
	for i := range rows {
		rows[i] = int32(i)
	}
	return ix.SearchRows(q, k, rows)
}

// Retrieve implements retrieval.Retriever: the query encoded, then Search.
func (ix *Index) Retrieve(ctx context.Context, query string, k int) ([]retrieval.Hit, error) {
	if strings.TrimSpace(query) == "" {
		return []retrieval.Hit{}, nil
	}
	q, err := ix.Encode(ctx, query)
	if err != nil {
		return nil, fmt.Errorf("sparse search %s: %w", ix.dir, err)
	}
	res := ix.Search(q, k)
	hits := make([]retrieval.Hit, len(res))
	for i, r := range res {
		d := ix.docs[r.Row]
		hits[i] = retrieval.Hit{ID: d.ID, Title: d.Title, Text: d.Text, Score: r.Score, Rank: i + 1}
	}
	return hits, nil
}

// better: a higher score, then a lower row.
func better(a, b Result) bool {
	if a.Score != b.Score {
		return a.Score > b.Score
	}
	return a.Row < b.Row
}

// resultHeap is a min-heap of the kept results: the root is the worst.
type resultHeap []Result

// offer keeps r among the k best seen so far; a score of 0 or less is never kept.
func (h *resultHeap) offer(r Result, k int) {
	if r.Score <= 0 || k <= 0 {
		return
	}
	if h.Len() < k {
		heap.Push(h, r)
	} else if better(r, (*h)[0]) {
		(*h)[0] = r
		heap.Fix(h, 0)
	}
}

// best empties the heap into a slice, best first.
func (h *resultHeap) best() []Result {
	out := make([]Result, h.Len())
	for i := len(out) - 1; i >= 0; i-- {
		out[i] = heap.Pop(h).(Result)
	}
	return out
}

func (h resultHeap) Len() int           { return len(h) }
func (h resultHeap) Less(i, j int) bool { return better(h[j], h[i]) }
func (h resultHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *resultHeap) Push(x any)        { *h = append(*h, x.(Result)) }
func (h *resultHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

func crc32c(b []byte) uint32 { return crc32.Checksum(b, castagnoli) }
