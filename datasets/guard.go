package datasets

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/encoding/thrift"
	"github.com/parquet-go/parquet-go/format"
	"github.com/pierrec/lz4/v4"
)

// Guards against corrupt parquet files that would make the parquet library allocate without bound:
// it sizes buffers from lengths declared in the file (thrift list sizes and binary lengths in the footer,
// page sizes and value counts in page headers) before it checks them against the bytes present, and an
// allocation of many gigabytes ends the process, which no recover can catch. So the footer and every page
// header of a column are checked here first.

const (
	maxThriftDepth = 64
	// maxChunkValues bounds the values of one column chunk (page value counts size level buffers).
	maxChunkValues = 1 << 27
	// maxPageRatio bounds a page's uncompressed size relative to its compressed size.
	maxPageRatio = 1024
)

var errThrift = errors.New("corrupt thrift structure")

// thriftWalker walks a compact-protocol struct without allocating, checking that every declared length
// fits in the bytes that remain. It returns how many bytes the struct takes.
type thriftWalker struct {
	b   []byte
	off int
}

func (w *thriftWalker) byte1() (byte, error) {
	if w.off >= len(w.b) {
		return 0, errThrift
	}
	c := w.b[w.off]
	w.off++
	return c, nil
}

func (w *thriftWalker) uvarint() (uint64, error) {
	v, n := binary.Uvarint(w.b[w.off:])
	if n <= 0 {
		return 0, errThrift
	}
	w.off += n
	return v, nil
}

func (w *thriftWalker) skip(n uint64) error {
	if n > uint64(len(w.b)-w.off) {
		return errThrift
	}
	w.off += int(n)
	return nil
}

func (w *thriftWalker) value(typ byte, depth int) error {
	if depth > maxThriftDepth {
		return errThrift
	}
	switch typ {
	case 1, 2: // bool true/false (in a field header, the value is the type)
		return nil
	case 3: // byte
		return w.skip(1)
	case 4, 5, 6: // i16, i32, i64: zigzag varints
		_, err := w.uvarint()
		return err
	case 7: // double
		return w.skip(8)
	case 8: // binary
		n, err := w.uvarint()
		if err != nil {
			return err
		}
		return w.skip(n)
	case 9, 10: // list, set
		h, err := w.byte1()
		if err != nil {
			return err
		}
		size, et := uint64(h>>4), h&0x0f
		if size == 0x0f {
			if size, err = w.uvarint(); err != nil {
				return err
			}
		}
		// Every element takes at least one byte.
		if size > uint64(len(w.b)-w.off) {
			return errThrift
		}
		for i := uint64(0); i < size; i++ {
			if et == 1 || et == 2 { // bools in a list take one byte each
				if err := w.skip(1); err != nil {
					return err
				}
				continue
			}
			if err := w.value(et, depth+1); err != nil {
				return err
			}
		}
		return nil
	case 11: // map
		size, err := w.uvarint()
		if err != nil {
			return err
		}
		if size == 0 {
			return nil
		}
		if size > uint64(len(w.b)-w.off) {
			return errThrift
		}
		kv, err := w.byte1()
		if err != nil {
			return err
		}
		for i := uint64(0); i < size; i++ {
			if err := w.value(kv>>4, depth+1); err != nil {
				return err
			}
			if err := w.value(kv&0x0f, depth+1); err != nil {
				return err
			}
		}
		return nil
	case 12: // struct
		return w.structure(depth + 1)
	}
	return errThrift
}

func (w *thriftWalker) structure(depth int) error {
	if depth > maxThriftDepth {
		return errThrift
	}
	for {
		h, err := w.byte1()
		if err != nil {
			return err
		}
		if h == 0 { // stop
			return nil
		}
		if h>>4 == 0 { // long form: the field id follows as a zigzag varint
			if _, err := w.uvarint(); err != nil {
				return err
			}
		}
		if err := w.value(h&0x0f, depth); err != nil {
			return err
		}
	}
}

// checkThrift reports the length of the compact-protocol struct at the start of b, or an error when it
// is malformed or declares more than b holds.
func checkThrift(b []byte) (int, error) {
	w := &thriftWalker{b: b}
	if err := w.structure(0); err != nil {
		return 0, err
	}
	return w.off, nil
}

// checkFooter validates the file metadata of an open file before parquet-go decodes it.
func checkFooter(f *os.File, size int64, footerLen int64) error {
	b := make([]byte, footerLen)
	if _, err := f.ReadAt(b, size-8-footerLen); err != nil {
		return err
	}
	if _, err := checkThrift(b); err != nil {
		return fmt.Errorf("corrupt footer metadata")
	}
	return nil
}

// checkPages walks the page headers of one leaf column (all row groups) and checks their sizes.
func checkPages(f *os.File, fileSize int64, pf *parquet.File, leaf *parquet.Column) error {
	idx := leaf.Index()
	for rgi, rg := range pf.Metadata().RowGroups {
		if idx < 0 || idx >= len(rg.Columns) {
			return fmt.Errorf("row group %d has no column %d", rgi, idx)
		}
		md := rg.Columns[idx].MetaData
		start := md.DataPageOffset
		if md.DictionaryPageOffset > 0 && md.DictionaryPageOffset < start {
			start = md.DictionaryPageOffset
		}
		end := start + md.TotalCompressedSize
		if start < 4 || md.TotalCompressedSize < 0 || end > fileSize {
			return fmt.Errorf("row group %d: column chunk at %d+%d lies outside the file", rgi, start, md.TotalCompressedSize)
		}
		if md.NumValues < 0 || md.NumValues > maxChunkValues {
			return fmt.Errorf("row group %d: column chunk declares %d values", rgi, md.NumValues)
		}
		var seen int64
		for off := start; off < end; {
			n := min(end-off, 4096)
			var hlen int
			var buf []byte
			for {
				buf = make([]byte, n)
				if _, err := f.ReadAt(buf, off); err != nil && !errors.Is(err, io.EOF) {
					return err
				}
				var err error
				if hlen, err = checkThrift(buf); err == nil {
					break
				}
				if n == end-off || n >= 1<<24 {
					return fmt.Errorf("row group %d: corrupt page header at byte %d", rgi, off)
				}
				n = min(end-off, n*8)
			}
			var h format.PageHeader
			if err := thrift.Unmarshal(new(thrift.CompactProtocol), buf[:hlen], &h); err != nil {
				return fmt.Errorf("row group %d: corrupt page header at byte %d: %v", rgi, off, err)
			}
			c, u := int64(h.CompressedPageSize), int64(h.UncompressedPageSize)
			if c < 0 || u < 0 || off+int64(hlen)+c > end || u > maxPageRatio*c+(1<<20) {
				return fmt.Errorf("row group %d: page at byte %d declares %d compressed / %d uncompressed bytes", rgi, off, c, u)
			}
			if err := checkPayload(f, md.Codec, &h, off+int64(hlen), c, u); err != nil {
				return fmt.Errorf("row group %d: page at byte %d: %w", rgi, off, err)
			}
			var nv int64
			switch {
			case h.DataPageHeader.Valid:
				nv = int64(h.DataPageHeader.V.NumValues)
			case h.DataPageHeaderV2.Valid:
				nv = int64(h.DataPageHeaderV2.V.NumValues)
			case h.DictionaryPageHeader.Valid:
				if dv := int64(h.DictionaryPageHeader.V.NumValues); dv < 0 || dv > u+1 {
					return fmt.Errorf("row group %d: dictionary page declares %d values in %d bytes", rgi, dv, u)
				}
			}
			if nv < 0 || seen+nv > md.NumValues {
				return fmt.Errorf("row group %d: pages declare more values than the column chunk's %d", rgi, md.NumValues)
			}
			seen += nv
			off += int64(hlen) + c
		}
	}
	return nil
}

// checkPayload checks that the compressed payload of a page cannot make the codec allocate more than
// the page's uncompressed size: the length a snappy block declares, the content size a zstd frame
// declares, and, for LZ4_RAW (whose parquet-go decoder doubles its buffer without bound on corrupt
// input), a trial decompression.
func checkPayload(f *os.File, codec format.CompressionCodec, h *format.PageHeader, at, c, u int64) error {
	if h.DataPageHeaderV2.Valid {
		v := h.DataPageHeaderV2.V
		lv := int64(v.RepetitionLevelsByteLength) + int64(v.DefinitionLevelsByteLength)
		if lv < 0 || lv > c || lv > u {
			return fmt.Errorf("level bytes %d exceed the page", lv)
		}
		if v.IsCompressed.Valid && !v.IsCompressed.V {
			return nil
		}
		at, c, u = at+lv, c-lv, u-lv
	}
	switch codec {
	case format.Snappy:
		var b [binary.MaxVarintLen64]byte
		n, _ := f.ReadAt(b[:min(c, int64(len(b)))], at)
		v, k := binary.Uvarint(b[:n])
		if k <= 0 || v > uint64(u) {
			return fmt.Errorf("snappy block declares %d bytes, the page %d", v, u)
		}
	case format.Zstd:
		var b [18]byte
		n, _ := f.ReadAt(b[:min(c, int64(len(b)))], at)
		if fcs, ok := zstdContentSize(b[:n]); ok && fcs > uint64(u) {
			return fmt.Errorf("zstd frame declares %d bytes, the page %d", fcs, u)
		}
	case format.Lz4Raw:
		src := make([]byte, c)
		if _, err := f.ReadAt(src, at); err != nil {
			return err
		}
		if _, err := lz4.UncompressBlock(src, make([]byte, u)); err != nil && u > 0 {
			return fmt.Errorf("corrupt LZ4 block: %v", err)
		}
	}
	return nil
}

// zstdContentSize reads the frame content size from a zstd frame header, when it has one.
func zstdContentSize(b []byte) (uint64, bool) {
	if len(b) < 5 || binary.LittleEndian.Uint32(b) != 0xFD2FB528 {
		return 0, false
	}
	fhd := b[4]
	fcsFlag, single, dictFlag := fhd>>6, (fhd>>5)&1, fhd&3
	pos := 5
	if single == 0 {
		pos++ // window descriptor
	}
	pos += []int{0, 1, 2, 4}[dictFlag]
	size := []int{0, 2, 4, 8}[fcsFlag]
	if fcsFlag == 0 && single == 1 {
		size = 1
	}
	if size == 0 || pos+size > len(b) {
		return 0, false
	}
	switch size {
	case 1:
		return uint64(b[pos]), true
	case 2:
		return uint64(binary.LittleEndian.Uint16(b[pos:])) + 256, true
	case 4:
		return uint64(binary.LittleEndian.Uint32(b[pos:])), true
	}
	return binary.LittleEndian.Uint64(b[pos:]), true
}
