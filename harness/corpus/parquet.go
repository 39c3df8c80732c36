package corpus

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/parquet-go/parquet-go"
)

// FormatParquet is a parquet file with named id, title and text columns (see ParquetColumns).
const FormatParquet Format = "parquet"

func init() {
	RegisterOpener(FormatParquet, func(path string) (Reader, error) { return OpenParquet(path, ParquetColumns{}) })
}

// ParquetColumns names the columns of a parquet corpus. A nested column is named by its dotted path
// ("document.title"). Each named column must be a top-level or struct field, not a list. Empty names
// are detected: ID from "id", "_id", "docid"; Title from "title"; Text from "text", "contents". A file
// without an id column numbers its rows from 0 in file order; one without a title column has empty
// titles; a text column is required.
type ParquetColumns struct {
	ID, Title, Text string
}

// ParseColumns reads "id,title,text" (three comma-separated column names, dotted paths for nested
// fields) into ParquetColumns.
func ParseColumns(s string) (*ParquetColumns, error) {
	parts := strings.Split(s, ",")
	if len(parts) != 3 {
		return nil, fmt.Errorf("%q: want id,title,text", s)
	}
	return &ParquetColumns{ID: parts[0], Title: parts[1], Text: parts[2]}, nil
}

var (
	parquetIDNames    = []string{"id", "_id", "docid"}
	parquetTitleNames = []string{"title"}
	parquetTextNames  = []string{"text", "contents"}
)

// OpenParquet opens a parquet corpus and streams its rows as documents, reading only the named columns
// one page at a time.
func OpenParquet(path string, cols ParquetColumns) (Reader, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("corpus: %w", err)
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("corpus: %w", err)
	}
	pf, err := parquet.OpenFile(f, st.Size(), parquet.SkipBloomFilters(true), parquet.SkipPageIndex(true))
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("corpus %s: open parquet: %w", path, err)
	}
	r := &parquetReader{path: path, f: f, pf: pf, idCol: -1, titleCol: -1, textCol: -1}
	schema := pf.Schema()
	find := func(field, name string, defaults []string, required bool) (int, error) {
		names := defaults
		if name != "" {
			names = []string{name}
		}
		for _, n := range names {
			leaf, ok := schema.Lookup(strings.Split(n, ".")...)
			if !ok {
				continue
			}
			if leaf.MaxRepetitionLevel != 0 {
				return -1, fmt.Errorf("corpus %s: %s column %q is a list; name a scalar column", path, field, n)
			}
			return leaf.ColumnIndex, nil
		}
		if required || name != "" {
			return -1, fmt.Errorf("corpus %s: no %s column (tried %s; columns are %s)", path, field,
				strings.Join(names, ", "), columnNames(schema))
		}
		return -1, nil
	}
	if r.idCol, err = find("id", cols.ID, parquetIDNames, false); err == nil {
		if r.titleCol, err = find("title", cols.Title, parquetTitleNames, false); err == nil {
			r.textCol, err = find("text", cols.Text, parquetTextNames, true)
		}
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return r, nil
}

func columnNames(s *parquet.Schema) string {
	var names []string
	for _, c := range s.Columns() {
		names = append(names, strings.Join(c, "."))
	}
	return strings.Join(names, ", ")
}

type parquetReader struct {
	path                     string
	f                        *os.File
	pf                       *parquet.File
	idCol, titleCol, textCol int

	rg      int // next row group to open
	row     int64
	cursors [3]*columnCursor // id, title, text (nil when the column is absent)
}

// columnCursor yields the values of one flat column of one row group in order.
type columnCursor struct {
	pages parquet.Pages
	vals  []parquet.Value
	buf   []parquet.Value
	page  parquet.ValueReader
}

func (c *columnCursor) next() (parquet.Value, error) {
	for len(c.vals) == 0 {
		if c.page != nil {
			n, err := c.page.ReadValues(c.buf[:cap(c.buf)])
			c.vals = c.buf[:n]
			if errors.Is(err, io.EOF) {
				c.page = nil
			} else if err != nil {
				return parquet.Value{}, err
			}
			continue
		}
		p, err := c.pages.ReadPage()
		if err != nil {
			return parquet.Value{}, err
		}
		c.page = p.Values()
	}
	v := c.vals[0]
	c.vals = c.vals[1:]
	return v, nil
}

func (r *parquetReader) openRowGroup() error {
	groups := r.pf.RowGroups()
	if r.rg >= len(groups) {
		return io.EOF
	}
	chunks := groups[r.rg].ColumnChunks()
	r.rg++
	r.closeCursors()
	for i, col := range [3]int{r.idCol, r.titleCol, r.textCol} {
		if col < 0 {
			continue
		}
		r.cursors[i] = &columnCursor{pages: chunks[col].Pages(), buf: make([]parquet.Value, 0, 256)}
	}
	return nil
}

func (r *parquetReader) closeCursors() {
	for i, c := range r.cursors {
		if c != nil {
			c.pages.Close()
			r.cursors[i] = nil
		}
	}
}

func (r *parquetReader) Next() (Document, error) {
	for {
		if r.cursors[2] == nil {
			if err := r.openRowGroup(); err != nil {
				return Document{}, err
			}
		}
		text, err := r.cursors[2].next()
		if errors.Is(err, io.EOF) {
			r.closeCursors()
			continue // next row group
		}
		if err != nil {
			return Document{}, fmt.Errorf("%s: row %d: column text: %w", r.path, r.row, err)
		}
		var d Document
		d.Text = valueString(text)
		if r.cursors[0] != nil {
			v, err := r.cursors[0].next()
			if err != nil {
				return Document{}, fmt.Errorf("%s: row %d: column id: %w", r.path, r.row, err)
			}
			if v.IsNull() {
				return Document{}, fmt.Errorf("%s: row %d: field id is null", r.path, r.row)
			}
			d.ID = valueString(v)
		} else {
			d.ID = strconv.FormatInt(r.row, 10)
		}
		if r.cursors[1] != nil {
			v, err := r.cursors[1].next()
			if err != nil {
				return Document{}, fmt.Errorf("%s: row %d: column title: %w", r.path, r.row, err)
			}
			d.Title = valueString(v)
		}
		if d.ID == "" {
			return Document{}, fmt.Errorf("%s: row %d: field id is empty", r.path, r.row)
		}
		for _, fv := range [...]struct{ name, s string }{{"id", d.ID}, {"title", d.Title}, {"text", d.Text}} {
			if !utf8.ValidString(fv.s) {
				return Document{}, fmt.Errorf("%s: row %d: field %s is not valid UTF-8", r.path, r.row, fv.name)
			}
		}
		r.row++
		return d, nil
	}
}

// valueString renders a parquet value as text, copying byte arrays out of the page buffer. Nulls are "".
func valueString(v parquet.Value) string {
	if v.IsNull() {
		return ""
	}
	switch v.Kind() {
	case parquet.ByteArray, parquet.FixedLenByteArray:
		return string(v.ByteArray())
	}
	return v.String()
}

func (r *parquetReader) Close() error {
	r.closeCursors()
	return r.f.Close()
}
