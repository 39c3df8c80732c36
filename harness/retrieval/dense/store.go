package dense

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
	"os"
	"path/filepath"
	"time"
	"unsafe"

	"github.com/ragbench/ragbench/internal/atomicfile"

	"github.com/ragbench/ragbench/harness/corpus"
)

// FormatVersion names the on-disk layout written by Build.
const FormatVersion = "ragbench-dense/1"

// File names inside an index directory.
const (
	metaFile    = "meta.json"
	vectorsFile = "vectors.f32"
	offsetsFile = "docs.off"
	docsFile    = "docs.dat"
	lsaFile     = "lsa.bin"
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// Meta is the content of meta.json.
type Meta struct {
	Format string `json:"format"`
	Count  int    `json:"count"`
	Dim    int    `json:"dim"`
	// Embedder describes the embedder used at build time (see Describer); queries must use the same.
	Embedder map[string]string `json:"embedder,omitempty"`
	// Empty counts documents with no text and no title, stored as zero vectors (they never match).
	Empty int `json:"empty"`
	// Zero counts non-empty documents whose embedding was all zero (for LSA: no known term).
	Zero int `json:"zero"`
	// Quantization is "int8" when the index also holds the int8 search form (vectors.u8, scales.f32).
	Quantization string              `json:"quantization,omitempty"`
	Files        map[string]FileInfo `json:"files"`
}

// FileInfo is the size and CRC-32C (Castagnoli) of one index file.
type FileInfo struct {
	Size  int64  `json:"size"`
	CRC32 uint32 `json:"crc32c"`
}

// Describer is implemented by embedders that can describe themselves for meta.json (model name, prefix,
// dimension). The description must never contain secrets.
type Describer interface {
	Describe() map[string]string
}

// saver is implemented by embedders whose state belongs in the index directory (the fitted LSA model).
type saver interface {
	save(path string) error
}

// BuildOptions tunes Build.
type BuildOptions struct {
	// BatchSize is the number of passages sent to the embedder at once (default 64).
	BatchSize int
	// ProgressEvery is the number of documents between progress lines (default 10000).
	ProgressEvery int
	// Int8 also writes the int8 search form (vectors.u8, scales.f32; about 1 byte per dimension), which
	// Open then searches, re-scoring the best candidates in float32.
	Int8 bool
}

// Build embeds every document of docs as a passage and writes the index to dir (created if needed).
// Documents are streamed in batches, so memory stays bounded by the batch, the id set and the
// embedder. An empty document is stored as a zero vector and counted; a duplicate id is an error.
// Progress goes to progress (nil for none).
func Build(ctx context.Context, docs corpus.Reader, emb Embedder, dir string, progress io.Writer) error {
	return BuildWith(ctx, docs, emb, dir, progress, BuildOptions{})
}

// passageText is what the embedder sees for a document: "title text", or the text alone.
func passageText(d corpus.Document) string {
	if d.Title == "" {
		return d.Text
	}
	if d.Text == "" {
		return d.Title
	}
	return d.Title + " " + d.Text
}

// countingWriter hashes and counts what passes through it.
type countingWriter struct {
	w *bufio.Writer
	h hash.Hash32
	n int64
}

func newCountingWriter(f *os.File) *countingWriter {
	return &countingWriter{w: bufio.NewWriterSize(f, 1<<20), h: crc32.New(castagnoli)}
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.h.Write(p[:n])
	c.n += int64(n)
	return n, err
}

func (c *countingWriter) info() FileInfo { return FileInfo{Size: c.n, CRC32: c.h.Sum32()} }

// BuildWith is Build with options.
func BuildWith(ctx context.Context, docs corpus.Reader, emb Embedder, dir string, progress io.Writer, opt BuildOptions) (err error) {
	if emb == nil {
		return errors.New("dense build: no embedder")
	}
	dim := emb.Dim()
	if dim <= 0 {
		return fmt.Errorf("dense build: embedder dimension %d", dim)
	}
	if opt.BatchSize <= 0 {
		opt.BatchSize = 64
	}
	if opt.ProgressEvery <= 0 {
		opt.ProgressEvery = 10000
	}
	if progress == nil {
		progress = io.Discard
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("dense build: %w", err)
	}
	// Remove a previous meta.json first, so that a half-written index is never mistaken for a whole one.
	if err := os.Remove(filepath.Join(dir, metaFile)); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("dense build: %w", err)
	}
	files := map[string]*os.File{}
	writers := map[string]*countingWriter{}
	names := []string{vectorsFile, offsetsFile, docsFile}
	if opt.Int8 {
		names = append(names, codesFile, scalesU8)
	}
	for _, name := range names {
		f, err := os.Create(filepath.Join(dir, name))
		if err != nil {
			return fmt.Errorf("dense build: %w", err)
		}
		defer f.Close()
		files[name] = f
		writers[name] = newCountingWriter(f)
	}
	vw, ow, dw := writers[vectorsFile], writers[offsetsFile], writers[docsFile]

	meta := Meta{Format: FormatVersion, Dim: dim, Files: map[string]FileInfo{}}
	var qw *quantWriter
	if opt.Int8 {
		meta.Quantization = QuantInt8
		qw = newQuantWriter(dim, writers[codesFile], writers[scalesU8])
	}
	if d, ok := emb.(Describer); ok {
		meta.Embedder = d.Describe()
	}
	seen := map[string]int{}
	var (
		batchDocs  []corpus.Document
		batchTexts []string
		batchIdx   []int
		buf        [binary.MaxVarintLen64]byte
		offset     uint64
		start      = time.Now()
		lastReport int
	)
	writeOffset := func(off uint64) {
		binary.LittleEndian.PutUint64(buf[:8], off)
		ow.Write(buf[:8])
	}
	writeOffset(0)
	flush := func() error {
		if len(batchDocs) == 0 {
			return nil
		}
		vecs := make([][]float32, len(batchDocs))
		if len(batchTexts) > 0 {
			got, err := emb.Embed(ctx, batchTexts, Passage)
			if err != nil {
				return fmt.Errorf("embed documents %d..%d: %w", meta.Count, meta.Count+len(batchDocs)-1, err)
			}
			if len(got) != len(batchTexts) {
				return fmt.Errorf("embed documents %d..%d: embedder returned %d vectors for %d texts", meta.Count, meta.Count+len(batchDocs)-1, len(got), len(batchTexts))
			}
			for j, i := range batchIdx {
				vecs[i] = got[j]
			}
		}
		zero := make([]float32, dim)
		for i, d := range batchDocs {
			v := vecs[i]
			if v == nil {
				v = zero
			} else {
				if len(v) != dim {
					return fmt.Errorf("document %q: %w: got %d, want %d", d.ID, ErrDim, len(v), dim)
				}
				v = append([]float32(nil), v...)
				nz, err := normalize(v)
				if err != nil {
					return fmt.Errorf("document %q: %w", d.ID, err)
				}
				if !nz {
					meta.Zero++
				}
			}
			if _, err := vw.Write(unsafe.Slice((*byte)(unsafe.Pointer(&v[0])), 4*dim)); err != nil {
				return err
			}
			if qw != nil {
				if err := qw.add(v); err != nil {
					return err
				}
			}
			rec := binary.AppendUvarint(nil, uint64(len(d.ID)))
			rec = append(rec, d.ID...)
			rec = binary.AppendUvarint(rec, uint64(len(d.Title)))
			rec = append(rec, d.Title...)
			rec = append(rec, d.Text...)
			if _, err := dw.Write(rec); err != nil {
				return err
			}
			offset += uint64(len(rec))
			writeOffset(offset)
			meta.Count++
		}
		batchDocs, batchTexts, batchIdx = batchDocs[:0], batchTexts[:0], batchIdx[:0]
		if meta.Count-lastReport >= opt.ProgressEvery {
			lastReport = meta.Count
			el := time.Since(start).Seconds()
			fmt.Fprintf(progress, "dense build: %d documents, %.0f docs/s\n", meta.Count, float64(meta.Count)/el)
		}
		return nil
	}
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		d, err := docs.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return fmt.Errorf("dense build: %w", err)
		}
		n := meta.Count + len(batchDocs)
		if prev, dup := seen[d.ID]; dup {
			return fmt.Errorf("dense build: duplicate document id %q (documents %d and %d)", d.ID, prev, n)
		}
		seen[d.ID] = n
		if t := passageText(d); t != "" {
			batchIdx = append(batchIdx, len(batchDocs))
			batchTexts = append(batchTexts, t)
		} else {
			meta.Empty++
		}
		batchDocs = append(batchDocs, d)
		if len(batchDocs) >= opt.BatchSize {
			if err := flush(); err != nil {
				return fmt.Errorf("dense build: %w", err)
			}
		}
	}
	if err := flush(); err != nil {
		return fmt.Errorf("dense build: %w", err)
	}
	if qw != nil {
		if err := qw.finish(); err != nil {
			return fmt.Errorf("dense build: write %s: %w", codesFile, err)
		}
	}
	for name, w := range writers {
		if err := w.w.Flush(); err != nil {
			return fmt.Errorf("dense build: write %s: %w", name, err)
		}
		if err := files[name].Close(); err != nil {
			return fmt.Errorf("dense build: close %s: %w", name, err)
		}
		meta.Files[name] = w.info()
	}
	if s, ok := emb.(saver); ok {
		p := filepath.Join(dir, lsaFile)
		if err := s.save(p); err != nil {
			return fmt.Errorf("dense build: %w", err)
		}
		fi, err := fileInfo(p)
		if err != nil {
			return fmt.Errorf("dense build: %w", err)
		}
		meta.Files[lsaFile] = fi
	}
	b, err := json.MarshalIndent(meta, "", "  ")
	if err != nil {
		return err
	}
	if err := atomicfile.WriteFile(filepath.Join(dir, metaFile), append(b, '\n'), 0o644); err != nil {
		return fmt.Errorf("dense build: %w", err)
	}
	fmt.Fprintf(progress, "dense build: done, %d documents (%d empty, %d zero vectors), dim %d, %.1fs\n",
		meta.Count, meta.Empty, meta.Zero, dim, time.Since(start).Seconds())
	return nil
}

// fileInfo computes the size and CRC-32C of a file.
func fileInfo(path string) (FileInfo, error) {
	f, err := os.Open(path)
	if err != nil {
		return FileInfo{}, err
	}
	defer f.Close()
	h := crc32.New(castagnoli)
	n, err := io.Copy(h, f)
	if err != nil {
		return FileInfo{}, fmt.Errorf("read %s: %w", path, err)
	}
	return FileInfo{Size: n, CRC32: h.Sum32()}, nil
}
