package bm25

import (
	"bufio"
	"encoding/json"
	"fmt"
	"hash"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"

	"github.com/ragbench/ragbench/internal/atomicfile"
)

// The index is a directory of flat little-endian files, each memory-mapped on open:
//
//	meta.json     Meta: parameters, statistics, and the size and CRC-32C of every other file
//	docs.bin      per document: uvarint lengths of id, title, text, then their bytes
//	docoff.bin    uint64 offset of each document in docs.bin, plus the end (n+1 values)
//	norms.bin     one Lucene norm byte per document (the field length, quantised)
//	lens.bin      uint32 exact field length per document (for the exact-length option)
//	terms.bin     the terms' bytes, sorted, concatenated
//	termoff.bin   uint64 offset of each term in terms.bin, plus the end (V+1 values)
//	terminfo.bin  per term (in sorted order) a termInfo record (termInfoSize bytes)
//	postings.bin  per term, at the offset its termInfo gives, a kind byte (see postings.go), then:
//	              kind 0 (blocks): ceil(df/blockSize) skip entries (uint32 last doc, uint32 end offset
//	              of the block in the list's block data, float32 the block's largest tf/(tf+K) under the
//	              default k1 and b), then the blocks; a block holds up to blockSize postings, bit-packed:
//	              a byte bg and a byte bt (each at most 32), then the postings' document gaps (from the
//	              previous block's last document, or from 0) at bg bits each, then their tf-1 at bt bits
//	              each (nothing when every tf is 1), each of the two bit streams least significant bit
//	              first and padded to a whole byte.
//	              kind 1 (dense: terms in at least 1/denseDiv of the documents): uint32 escape count e,
//	              uint32 h the postings with tf >= 2, the tf = 1 postings' smallest norm byte, float32
//	              their largest tf/(tf+K), and a form byte. Form 0 (h is at least 1/denseHiDiv of the
//	              documents): a bitmap of ceil(docs/64) uint64 words of the tf >= 2 documents, per
//	              denseWindow documents a directory entry (uint32 postings before the window, float32
//	              the window's largest tf/(tf+K), 0 when empty), the tfs in posting order, two per byte
//	              (low nibble first, 0 meaning tf > 15), then e escapes (uint32 posting number, uint32
//	              tf). Form 1 (e is 0): the tf >= 2 postings as a kind-0 list without its kind byte
//	              (nothing when h is 0). Both forms then end with the bitmap of the tf = 1 documents and
//	              per denseWindow documents a float32, the window's largest tf/(tf+K).
//	              The thresholds denseDiv and denseHiDiv (postings.go) are the encoder's alone: the
//	              reader follows the kind and form bytes, so changing them needs no version bump,
//	              and indexes built with other thresholds read as before.
const (
	formatName    = "ragbench-bm25"
	formatVersion = 4
	blockSize     = 128
	termInfoSize  = 24
	skipEntrySize = 12
)

const (
	fileMeta     = "meta.json"
	fileDocs     = "docs.bin"
	fileDocOff   = "docoff.bin"
	fileNorms    = "norms.bin"
	fileLens     = "lens.bin"
	fileTerms    = "terms.bin"
	fileTermOff  = "termoff.bin"
	fileTermInfo = "terminfo.bin"
	filePostings = "postings.bin"
)

var dataFiles = []string{fileDocs, fileDocOff, fileNorms, fileLens, fileTerms, fileTermOff, fileTermInfo, filePostings}

// Meta describes an index: how it was built and what it holds.
type Meta struct {
	// Format is "ragbench-bm25" and Version the layout version; Open refuses other values.
	Format  string `json:"format"`
	Version int    `json:"version"`
	// Analyzer and Fields are the analysis the index was built with; queries use the same.
	Analyzer Analyzer `json:"analyzer"`
	Fields   Fields   `json:"fields"`
	// K1 and B are the default BM25 parameters for searches of this index.
	K1 float64 `json:"k1"`
	B  float64 `json:"b"`
	// Docs counts all documents; DocCount those with at least one indexed term (Lucene's docCount,
	// the N of the idf). Empty counts documents without terms (indexed, never retrieved).
	Docs     int64 `json:"docs"`
	DocCount int64 `json:"doc_count"`
	Empty    int64 `json:"empty"`
	// SumTotalTermFreq is the total number of indexed tokens; avgdl = SumTotalTermFreq / DocCount.
	SumTotalTermFreq int64 `json:"sum_total_term_freq"`
	Terms            int64 `json:"terms"`
	Postings         int64 `json:"postings"`
	// Files gives every data file's size and CRC-32C (Castagnoli), checked on open.
	Files map[string]FileSum `json:"files"`
}

// FileSum is a file's size and checksum.
type FileSum struct {
	Size   int64  `json:"size"`
	CRC32C uint32 `json:"crc32c"`
}

// AvgDL is the average field length over documents that have terms.
func (m *Meta) AvgDL() float64 {
	if m.DocCount == 0 {
		return 0
	}
	return float64(m.SumTotalTermFreq) / float64(m.DocCount)
}

// Fields selects what is indexed of each document.
type Fields string

// The field choices.
const (
	// FieldsTitleText indexes the title and the text as one field (Pyserini's "contents").
	FieldsTitleText Fields = "title+text"
	// FieldsText indexes the text only.
	FieldsText Fields = "text"
	// FieldsTitle indexes the title only.
	FieldsTitle Fields = "title"
)

// Validate reports an unknown field choice.
func (f Fields) Validate() error {
	switch f {
	case FieldsTitleText, FieldsText, FieldsTitle:
		return nil
	}
	return fmt.Errorf("bm25: unknown fields %q (want title+text, text or title)", string(f))
}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// sumWriter is a buffered file writer that tracks the size and CRC-32C of what it writes.
type sumWriter struct {
	f   *os.File
	w   *bufio.Writer
	crc hash.Hash32
	n   int64
}

func createSum(dir, name string) (*sumWriter, error) {
	f, err := os.Create(filepath.Join(dir, name))
	if err != nil {
		return nil, fmt.Errorf("bm25: %w", err)
	}
	s := &sumWriter{f: f, crc: crc32.New(castagnoli)}
	s.w = bufio.NewWriterSize(io.MultiWriter(f, s.crc), 1<<20)
	return s, nil
}

func (s *sumWriter) Write(p []byte) (int, error) {
	n, err := s.w.Write(p)
	s.n += int64(n)
	return n, err
}

// WriteString writes str without converting it to a byte slice.
func (s *sumWriter) WriteString(str string) (int, error) {
	n, err := s.w.WriteString(str)
	s.n += int64(n)
	return n, err
}

func (s *sumWriter) close() (FileSum, error) {
	if err := s.w.Flush(); err != nil {
		s.f.Close()
		return FileSum{}, fmt.Errorf("bm25: write %s: %w", s.f.Name(), err)
	}
	if err := s.f.Close(); err != nil {
		return FileSum{}, fmt.Errorf("bm25: close %s: %w", s.f.Name(), err)
	}
	return FileSum{Size: s.n, CRC32C: s.crc.Sum32()}, nil
}

// abort closes the file after an error.
func (s *sumWriter) abort() { s.f.Close() }

func writeMeta(dir string, m *Meta) error {
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	if err := atomicfile.WriteFile(filepath.Join(dir, fileMeta), append(b, '\n'), 0o644); err != nil {
		return fmt.Errorf("bm25: %w", err)
	}
	return nil
}

// ReadMeta reads an index's meta.json.
func ReadMeta(dir string) (*Meta, error) {
	b, err := os.ReadFile(filepath.Join(dir, fileMeta))
	if err != nil {
		return nil, fmt.Errorf("bm25 index %s: %w", dir, err)
	}
	var m Meta
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("bm25 index %s: %s: %w", dir, fileMeta, err)
	}
	if m.Format != formatName {
		return nil, fmt.Errorf("bm25 index %s: %s: format %q is not %q", dir, fileMeta, m.Format, formatName)
	}
	if m.Version != formatVersion {
		return nil, fmt.Errorf("bm25 index %s: format version %d, this program reads %d; rebuild the index", dir, m.Version, formatVersion)
	}
	return &m, nil
}
