package dense

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"unsafe"

	"github.com/ragbench/ragbench/internal/mmap"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas32"

	"github.com/ragbench/ragbench/harness/corpus"
	"github.com/ragbench/ragbench/harness/retrieval"
)

// Index is an opened dense index: memory-mapped vectors and documents plus the query embedder.
// It is safe for concurrent use.
type Index struct {
	dir      string
	meta     Meta
	emb      Embedder
	vecs     []float32 // count × dim, memory-mapped
	offs     []byte    // (count+1) × uint64
	docs     []byte
	maps     [][]byte // the mapped files, released by Close
	maxRows  int      // rows of vectors scored per Sgemm call
	q8       *int8Index
	rescoreN int
}

// OpenOptions tunes OpenWith.
type OpenOptions struct {
	// Rescore is the number of candidates per query that an int8 index re-scores in float32 (default
	// DefaultRescore; at least k is always used). Indexes without the int8 form ignore it.
	Rescore int
}

// Open opens the index in dir, checking every file's size and CRC-32C against meta.json, so that a
// truncated or corrupt index is an error here rather than wrong results later. emb embeds queries; it
// must be the embedder the index was built with. With emb nil, Open loads the LSA model saved in the
// index or, for an index built through an OpenAI-compatible endpoint, reconnects to the endpoint recorded
// in meta.json (key from $OPENAI_API_KEY; $OPENAI_BASE_URL overrides the recorded URL).
func Open(dir string, emb Embedder) (*Index, error) {
	return OpenWith(dir, emb, OpenOptions{})
}

// OpenWith is Open with options.
func OpenWith(dir string, emb Embedder, opt OpenOptions) (*Index, error) {
	ix := &Index{dir: dir, rescoreN: opt.Rescore}
	if ix.rescoreN <= 0 {
		ix.rescoreN = DefaultRescore
	}
	b, err := os.ReadFile(filepath.Join(dir, metaFile))
	if err != nil {
		return nil, fmt.Errorf("open dense index: %w", err)
	}
	if err := json.Unmarshal(b, &ix.meta); err != nil {
		return nil, fmt.Errorf("open dense index %s: %s: %w", dir, metaFile, err)
	}
	m := &ix.meta
	if m.Format != FormatVersion {
		return nil, fmt.Errorf("open dense index %s: format %q, want %q", dir, m.Format, FormatVersion)
	}
	if m.Count < 0 || m.Dim <= 0 {
		return nil, fmt.Errorf("open dense index %s: bad count %d or dim %d in %s", dir, m.Count, m.Dim, metaFile)
	}
	if nativeBigEndian() {
		return nil, errors.New("open dense index: big-endian machines are not supported")
	}
	want := map[string]int64{
		vectorsFile: int64(m.Count) * int64(m.Dim) * 4,
		offsetsFile: int64(m.Count+1) * 8,
	}
	names := []string{vectorsFile, offsetsFile, docsFile}
	switch m.Quantization {
	case "":
	case QuantInt8:
		names = append(names, codesFile, scalesU8)
		want[codesFile] = codesSize(m.Count, m.Dim)
		want[scalesU8] = int64(m.Count) * 4
	default:
		return nil, fmt.Errorf("open dense index %s: %s: unknown quantization %q", dir, metaFile, m.Quantization)
	}
	var mapped = map[string][]byte{}
	for _, name := range names {
		fi, ok := m.Files[name]
		if !ok {
			ix.Close()
			return nil, fmt.Errorf("open dense index %s: %s lists no %s", dir, metaFile, name)
		}
		if w, ok := want[name]; ok && fi.Size != w {
			ix.Close()
			return nil, fmt.Errorf("open dense index %s: %s records size %d, want %d for %d × %d", dir, name, fi.Size, w, m.Count, m.Dim)
		}
		p := filepath.Join(dir, name)
		data, err := mmap.Map(p)
		if err != nil {
			ix.Close()
			return nil, fmt.Errorf("open dense index: %w", err)
		}
		ix.maps = append(ix.maps, data)
		if int64(len(data)) != fi.Size {
			ix.Close()
			return nil, fmt.Errorf("open dense index: %s is %d bytes, meta.json says %d (truncated or corrupt)", p, len(data), fi.Size)
		}
		if c := crc32.Checksum(data, castagnoli); c != fi.CRC32 {
			ix.Close()
			return nil, fmt.Errorf("open dense index: %s checksum %08x, meta.json says %08x (corrupt)", p, c, fi.CRC32)
		}
		mapped[name] = data
	}
	if v := mapped[vectorsFile]; len(v) > 0 {
		ix.vecs = unsafe.Slice((*float32)(unsafe.Pointer(&v[0])), len(v)/4)
	}
	ix.offs, ix.docs = mapped[offsetsFile], mapped[docsFile]
	if m.Quantization == QuantInt8 {
		ix.q8 = &int8Index{codes: mapped[codesFile], steps: padDim(m.Dim) / 4}
		if sc := mapped[scalesU8]; len(sc) > 0 {
			ix.q8.scales = unsafe.Slice((*float32)(unsafe.Pointer(&sc[0])), len(sc)/4)
		}
	}
	if last := ix.offset(m.Count); last != uint64(len(ix.docs)) {
		ix.Close()
		return nil, fmt.Errorf("open dense index %s: docs.off ends at %d, docs.dat has %d bytes (corrupt)", dir, last, len(ix.docs))
	}
	if emb == nil {
		p := filepath.Join(dir, lsaFile)
		if fi, ok := m.Files[lsaFile]; ok {
			l, err := LoadLSA(p)
			if err != nil {
				ix.Close()
				return nil, fmt.Errorf("open dense index: %w", err)
			}
			if got, err := fileInfo(p); err != nil || got != fi {
				ix.Close()
				return nil, fmt.Errorf("open dense index: %s does not match meta.json (corrupt)", p)
			}
			emb = l
		} else {
			e, err := embedderFromMeta(*m)
			if err != nil {
				ix.Close()
				return nil, fmt.Errorf("open dense index %s: %w", dir, err)
			}
			emb = e
		}
	}
	if emb.Dim() != m.Dim {
		ix.Close()
		return nil, fmt.Errorf("open dense index %s: embedder dimension %d, index dimension %d", dir, emb.Dim(), m.Dim)
	}
	if d, ok := emb.(Describer); ok && m.Embedder != nil {
		got := d.Describe()
		for _, key := range []string{"kind", "model"} {
			if got[key] != m.Embedder[key] {
				ix.Close()
				return nil, fmt.Errorf("open dense index %s: embedder %s %q, the index was built with %q", dir, key, got[key], m.Embedder[key])
			}
		}
	}
	ix.emb = emb
	ix.maxRows = 8192
	return ix, nil
}

func nativeBigEndian() bool {
	x := uint16(1)
	return *(*byte)(unsafe.Pointer(&x)) == 0
}

// Close unmaps the index files.
func (ix *Index) Close() error {
	err := mmap.UnmapAll(ix.maps)
	ix.maps, ix.vecs, ix.offs, ix.docs = nil, nil, nil, nil
	return err
}

// Len returns the number of documents.
func (ix *Index) Len() int { return ix.meta.Count }

// Dim returns the vector dimension.
func (ix *Index) Dim() int { return ix.meta.Dim }

// Meta returns the index metadata.
func (ix *Index) Meta() Meta { return ix.meta }

// Vector returns row i of the vectors (memory-mapped; do not modify).
func (ix *Index) Vector(i int) []float32 { return ix.vecs[i*ix.meta.Dim : (i+1)*ix.meta.Dim] }

func (ix *Index) offset(i int) uint64 { return binary.LittleEndian.Uint64(ix.offs[8*i:]) }

// Doc returns document row i.
func (ix *Index) Doc(i int) (corpus.Document, error) {
	if i < 0 || i >= ix.meta.Count {
		return corpus.Document{}, fmt.Errorf("dense: row %d out of range [0,%d)", i, ix.meta.Count)
	}
	lo, hi := ix.offset(i), ix.offset(i+1)
	if lo > hi || hi > uint64(len(ix.docs)) {
		return corpus.Document{}, fmt.Errorf("dense %s: docs.off row %d is corrupt", ix.dir, i)
	}
	rec := ix.docs[lo:hi]
	field := func() (string, error) {
		n, w := binary.Uvarint(rec)
		if w <= 0 || n > uint64(len(rec)-w) {
			return "", fmt.Errorf("dense %s: docs.dat row %d is corrupt", ix.dir, i)
		}
		s := string(rec[w : w+int(n)])
		rec = rec[w+int(n):]
		return s, nil
	}
	id, err := field()
	if err != nil {
		return corpus.Document{}, err
	}
	title, err := field()
	if err != nil {
		return corpus.Document{}, err
	}
	return corpus.Document{ID: id, Title: title, Text: string(rec)}, nil
}

// Retrieve embeds query and returns its top k documents by inner product, best first. A query whose
// embedding is all zero (for LSA: no known term) returns no hits.
func (ix *Index) Retrieve(ctx context.Context, query string, k int) ([]retrieval.Hit, error) {
	res, err := ix.SearchBatch(ctx, []string{query}, k)
	if err != nil {
		return nil, err
	}
	return res[0], nil
}

// SearchBatch embeds the queries in one call and scores them together (one Sgemm per block of
// vectors), returning the top k hits of each, best first.
func (ix *Index) SearchBatch(ctx context.Context, queries []string, k int) ([][]retrieval.Hit, error) {
	if len(queries) == 0 {
		return nil, nil
	}
	// Blank queries get no hits without reaching the embedder (OpenAI-compatible servers reject "").
	var live []string
	var pos []int
	for i, q := range queries {
		if strings.TrimSpace(q) != "" {
			live = append(live, q)
			pos = append(pos, i)
		}
	}
	out := make([][]retrieval.Hit, len(queries))
	for i := range out {
		out[i] = []retrieval.Hit{}
	}
	if len(live) == 0 {
		return out, nil
	}
	vecs, err := ix.emb.Embed(ctx, live, Query)
	if err != nil {
		return nil, fmt.Errorf("dense search: embed queries: %w", err)
	}
	if len(vecs) != len(live) {
		return nil, fmt.Errorf("dense search: embedder returned %d vectors for %d queries", len(vecs), len(live))
	}
	res, err := ix.SearchVectors(ctx, vecs, k)
	if err != nil {
		return nil, err
	}
	for j, rs := range res {
		q := pos[j]
		hits := make([]retrieval.Hit, len(rs))
		for i, r := range rs {
			d, err := ix.Doc(r.Row)
			if err != nil {
				return nil, err
			}
			hits[i] = retrieval.Hit{ID: d.ID, Title: d.Title, Text: d.Text, Score: float64(r.Score), Rank: i + 1}
		}
		out[q] = hits
	}
	return out, nil
}

// queryBatch is the number of queries scored in one Sgemm pass.
const queryBatch = 256

// SearchVectors scores query vectors (normalised here; the inputs are not modified) against every
// indexed vector and returns the top k rows of each, best first; ties go to the lower row. A zero query
// vector gets no results. On an index with the int8 form the candidates are the Rescore best int8
// scores, re-scored exactly in float32; otherwise every vector is scored in float32.
func (ix *Index) SearchVectors(ctx context.Context, queries [][]float32, k int) ([][]Result, error) {
	return ix.search(ctx, queries, k, ix.q8 != nil)
}

// SearchExact is SearchVectors scoring every vector in float32 (Sgemm), also on an index with the int8
// form: the reference that int8 search is measured against.
func (ix *Index) SearchExact(ctx context.Context, queries [][]float32, k int) ([][]Result, error) {
	return ix.search(ctx, queries, k, false)
}

// Int8 reports whether the index searches its int8 form, and with which kernel.
func (ix *Index) Int8() (bool, string) { return ix.q8 != nil, int8Kernel() }

func (ix *Index) search(ctx context.Context, queries [][]float32, k int, int8 bool) ([][]Result, error) {
	out := make([][]Result, len(queries))
	if k <= 0 || ix.meta.Count == 0 {
		return out, nil
	}
	if k > ix.meta.Count {
		k = ix.meta.Count
	}
	dim := ix.meta.Dim
	for start := 0; start < len(queries); start += queryBatch {
		end := min(start+queryBatch, len(queries))
		var (
			q    []float32
			live []int // query index of each row of q
		)
		for i := start; i < end; i++ {
			if len(queries[i]) != dim {
				return nil, fmt.Errorf("dense search: query %d: %w: got %d, want %d", i, ErrDim, len(queries[i]), dim)
			}
			v := append([]float32(nil), queries[i]...)
			nz, err := normalize(v)
			if err != nil {
				return nil, fmt.Errorf("dense search: query %d: %w", i, err)
			}
			if !nz {
				out[i] = []Result{}
				continue
			}
			q = append(q, v...)
			live = append(live, i)
		}
		if len(live) == 0 {
			continue
		}
		var tops []*topK
		var err error
		if int8 {
			tops, err = ix.scanInt8(ctx, q, len(live), min(max(k, ix.rescoreN), ix.meta.Count))
			if err == nil {
				tops = ix.rescore(q, tops, k)
			}
		} else {
			tops, err = ix.scan(ctx, q, len(live), k)
		}
		if err != nil {
			return nil, err
		}
		for j, i := range live {
			out[i] = tops[j].sorted()
		}
	}
	return out, nil
}

// scan scores nq normalised queries (row-major in q) against all vectors. The rows are split into one
// contiguous range per GOMAXPROCS; each range is scanned in blocks of maxRows rows, one Sgemm per block
// followed by the block's top-k selection, so that selection overlaps the other ranges' Sgemm. The
// per-range top k lists are then merged.
func (ix *Index) scan(ctx context.Context, q []float32, nq, k int) ([]*topK, error) {
	n := ix.meta.Count
	parts := scanParallelism()
	if min := 4 * ix.maxRows; n < parts*min {
		parts = max(1, n/min)
	}
	partial := make([][]*topK, parts)
	errs := make([]error, parts)
	var wg sync.WaitGroup
	for p := range parts {
		lo, hi := n*p/parts, n*(p+1)/parts
		wg.Add(1)
		go func() {
			defer wg.Done()
			partial[p], errs[p] = ix.scanRange(ctx, q, nq, k, lo, hi)
		}()
	}
	wg.Wait()
	return mergeTops(partial, errs)
}

// mergeTops merges per-range top lists (query by query) into the first range's, or returns the first
// range's error.
func mergeTops(partial [][]*topK, errs []error) ([]*topK, error) {
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	tops := partial[0]
	for _, more := range partial[1:] {
		for i, t := range more {
			for _, r := range t.h {
				tops[i].push(r)
			}
		}
	}
	return tops, nil
}

// scanRange scores the queries against rows [lo, hi) in blocks of maxRows rows through Sgemm.
func (ix *Index) scanRange(ctx context.Context, q []float32, nq, k, lo, hi int) ([]*topK, error) {
	dim := ix.meta.Dim
	rows := min(ix.maxRows, hi-lo)
	scores := make([]float32, nq*rows)
	tops := make([]*topK, nq)
	for i := range tops {
		tops[i] = newTopK(k)
	}
	Q := blas32.General{Rows: nq, Cols: dim, Stride: dim, Data: q}
	for b := lo; b < hi; b += rows {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		e := min(b+rows, hi)
		m := e - b
		V := blas32.General{Rows: m, Cols: dim, Stride: dim, Data: ix.vecs[b*dim : e*dim]}
		S := blas32.General{Rows: nq, Cols: m, Stride: m, Data: scores[:nq*m]}
		blas32.Gemm(blas.NoTrans, blas.Trans, 1, Q, V, 0, S)
		for i, t := range tops {
			t.pushRow(S.Data[i*m:(i+1)*m], b)
		}
	}
	return tops, nil
}

// SearchNaive is the brute-force peer of SearchVectors: a plain Go loop of dot products, one query at a
// time, with the same top-k selection. It exists for tests and benchmarks.
func (ix *Index) SearchNaive(queries [][]float32, k int) ([][]Result, error) {
	dim, n := ix.meta.Dim, ix.meta.Count
	out := make([][]Result, len(queries))
	if k > n {
		k = n
	}
	for qi, qv := range queries {
		if len(qv) != dim {
			return nil, fmt.Errorf("dense search: query %d: %w", qi, ErrDim)
		}
		v := append([]float32(nil), qv...)
		nz, err := normalize(v)
		if err != nil {
			return nil, err
		}
		if !nz || k <= 0 {
			out[qi] = []Result{}
			continue
		}
		t := newTopK(k)
		row := make([]float32, 1)
		for i := 0; i < n; i++ {
			x := ix.vecs[i*dim : (i+1)*dim]
			x = x[:len(v)] // lets the compiler drop the bounds check in the loop
			var s float32
			for j, a := range v {
				s += a * x[j]
			}
			row[0] = s
			t.pushRow(row, i)
		}
		out[qi] = t.sorted()
	}
	return out, nil
}
