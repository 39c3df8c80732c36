package datasets

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/parquet-go/parquet-go"
)

// This file reads parquet files column by column. A leaf column is addressed by its logical path (for
// example "context.sentences"); the wrapper groups of the LIST encodings ("list"/"element", "item",
// "array", ...) are skipped, so the same path finds the column whether the file stores a "sequence of
// structs" as a struct of lists (DuckDB, the Hugging Face datasets library) or as a list of structs.
// Each row of a leaf column is assembled from the definition and repetition levels into a cell tree whose
// depth is the number of repeated fields on the path.

// table is an opened parquet file.
type table struct {
	path string
	f    *os.File
	pf   *parquet.File
	rows int
	size int64
}

// openTable opens a parquet file. Errors (and panics of the parquet library on corrupt input) name the file.
func openTable(path string) (t *table, err error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%s: corrupt parquet file: %v", path, r)
		}
		if err != nil {
			f.Close()
		}
	}()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if st.IsDir() {
		return nil, fmt.Errorf("%s: is a directory", path)
	}
	if st.Size() < 12 {
		return nil, fmt.Errorf("%s: not a parquet file (%d bytes; truncated or empty)", path, st.Size())
	}
	// Check the magic bytes and the footer length before parquet-go sees the file: a corrupt length
	// would make it allocate that many bytes.
	var head, tail [8]byte
	if _, err := f.ReadAt(head[:4], 0); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if _, err := f.ReadAt(tail[:], st.Size()-8); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if string(head[:4]) != "PAR1" || string(tail[4:]) != "PAR1" {
		return nil, fmt.Errorf("%s: not a readable parquet file (no PAR1 magic at the start and end: truncated, or not parquet)", path)
	}
	n := int64(binary.LittleEndian.Uint32(tail[:4]))
	if n <= 0 || n > st.Size()-12 {
		return nil, fmt.Errorf("%s: not a readable parquet file (footer length %d in a file of %d bytes: corrupt)", path, n, st.Size())
	}
	if err := checkFooter(f, st.Size(), n); err != nil {
		return nil, fmt.Errorf("%s: not a readable parquet file: %w", path, err)
	}
	pf, err := parquet.OpenFile(f, st.Size(), parquet.SkipPageIndex(true), parquet.SkipBloomFilters(true))
	if err != nil {
		return nil, fmt.Errorf("%s: not a readable parquet file (missing footer: truncated or corrupt?): %w", path, err)
	}
	rows := pf.NumRows()
	if rows < 0 || rows > 1<<31 {
		return nil, fmt.Errorf("%s: corrupt parquet footer: %d rows", path, rows)
	}
	return &table{path: path, f: f, pf: pf, rows: int(rows), size: st.Size()}, nil
}

// Close closes the file.
func (t *table) Close() error { return t.f.Close() }

// columns lists the logical leaf column paths of the file (list wrappers removed), in schema order.
func (t *table) columns() []string {
	var out []string
	var walk func(c *parquet.Column, prefix []string)
	walk = func(c *parquet.Column, prefix []string) {
		if c.Leaf() {
			out = append(out, strings.Join(prefix, "."))
			return
		}
		kids := c.Columns()
		if len(kids) == 1 && isWrapper(c, kids[0]) {
			walk(kids[0], prefix)
			return
		}
		for _, k := range kids {
			walk(k, append(append([]string(nil), prefix...), k.Name()))
		}
	}
	for _, k := range t.pf.Root().Columns() {
		walk(k, []string{k.Name()})
	}
	return out
}

// topLevel lists the names of the top-level fields.
func (t *table) topLevel() map[string]bool {
	m := map[string]bool{}
	for _, k := range t.pf.Root().Columns() {
		m[k.Name()] = true
	}
	return m
}

// isWrapper reports whether child is a LIST wrapper level below c (a single child that is repeated, or
// the element below a repeated group).
func isWrapper(c, child *parquet.Column) bool {
	return child.Repeated() || c.Repeated()
}

// column is one leaf column with the levels needed to assemble its rows.
type column struct {
	name   string // logical path, for messages
	leaf   *parquet.Column
	repDef []int // repDef[k] (k >= 1): definition level at which an element of the k-th list exists
	maxDef int
	depth  int // number of repeated levels
}

// find locates a leaf column by its dot-separated logical path. It returns nil when it is absent.
func (t *table) find(path string) (*column, error) {
	node := t.pf.Root()
	chain := []*parquet.Column{}
	for _, step := range strings.Split(path, ".") {
		for {
			if next := node.Column(step); next != nil {
				node = next
				chain = append(chain, node)
				break
			}
			kids := node.Columns()
			if node.Leaf() || len(kids) != 1 || !isWrapper(node, kids[0]) {
				return nil, nil
			}
			node = kids[0]
			chain = append(chain, node)
		}
	}
	for !node.Leaf() {
		kids := node.Columns()
		if len(kids) != 1 {
			return nil, fmt.Errorf("%s: column %s is a group of %d fields, not a value or a list of values", t.path, path, len(kids))
		}
		node = kids[0]
		chain = append(chain, node)
	}
	c := &column{name: path, leaf: node, repDef: []int{0}}
	def := 0
	for _, n := range chain {
		switch {
		case n.Optional():
			def++
		case n.Repeated():
			def++
			c.repDef = append(c.repDef, def)
			c.depth++
		}
	}
	c.maxDef = def
	return c, nil
}

// cellKind says what a leaf cell holds.
type cellKind uint8

const (
	kindNull cellKind = iota
	kindString
	kindInt
	kindFloat
	kindBool
	kindList
)

// cell is one assembled value: a leaf (string, integer, ...), a list, or null.
type cell struct {
	kind cellKind
	str  string
	num  int64
	flt  float64
	list []cell
}

// read assembles every row of the column. The result has one cell per row.
func (t *table) read(c *column) (rows []cell, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%s: column %s: corrupt data: %v", t.path, c.name, r)
		}
	}()
	if err := checkPages(t.f, t.size, t.pf, c.leaf); err != nil {
		return nil, fmt.Errorf("%s: column %s: corrupt file: %w", t.path, c.name, err)
	}
	rows = make([]cell, 0, t.rows)
	pages := c.leaf.Pages()
	defer pages.Close()
	buf := make([]parquet.Value, 512)
	for {
		p, err := pages.ReadPage()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("%s: column %s: row %d: %w", t.path, c.name, len(rows), err)
		}
		vr := p.Values()
		for {
			n, err := vr.ReadValues(buf)
			for _, v := range buf[:n] {
				rows, err = c.add(rows, v)
				if err != nil {
					parquet.Release(p)
					return nil, fmt.Errorf("%s: column %s: row %d: %w", t.path, c.name, len(rows), err)
				}
			}
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				parquet.Release(p)
				return nil, fmt.Errorf("%s: column %s: row %d: %w", t.path, c.name, len(rows), err)
			}
		}
		parquet.Release(p)
	}
	if len(rows) != t.rows {
		return nil, fmt.Errorf("%s: column %s has %d rows, the footer says %d (truncated or corrupt file)", t.path, c.name, len(rows), t.rows)
	}
	return rows, nil
}

// add places one value into the rows assembled so far.
func (c *column) add(rows []cell, v parquet.Value) ([]cell, error) {
	r, d := v.RepetitionLevel(), v.DefinitionLevel()
	if d > c.maxDef || r > c.depth {
		return rows, fmt.Errorf("bad levels (repetition %d, definition %d)", r, d)
	}
	if r == 0 {
		return append(rows, c.build(0, d, v)), nil
	}
	if len(rows) == 0 {
		return rows, fmt.Errorf("value continues a list before any row started")
	}
	node := &rows[len(rows)-1]
	for i := 1; i < r; i++ {
		if node.kind != kindList || len(node.list) == 0 {
			return rows, fmt.Errorf("bad repetition level %d", r)
		}
		node = &node.list[len(node.list)-1]
	}
	if node.kind != kindList {
		return rows, fmt.Errorf("bad repetition level %d", r)
	}
	node.list = append(node.list, c.build(r, d, v))
	return rows, nil
}

// build makes the element at list level k (0 = the row itself) for a value with definition level d.
func (c *column) build(k, d int, v parquet.Value) cell {
	if k == c.depth {
		if d < c.maxDef || v.IsNull() {
			return cell{}
		}
		switch v.Kind() {
		case parquet.ByteArray, parquet.FixedLenByteArray:
			return cell{kind: kindString, str: string(v.ByteArray())}
		case parquet.Int32, parquet.Int64:
			return cell{kind: kindInt, num: v.Int64()}
		case parquet.Float, parquet.Double:
			return cell{kind: kindFloat, flt: v.Double()}
		case parquet.Boolean:
			b := int64(0)
			if v.Boolean() {
				b = 1
			}
			return cell{kind: kindBool, num: b}
		default:
			return cell{kind: kindString, str: v.String()}
		}
	}
	if d < c.repDef[k+1]-1 {
		return cell{}
	}
	if d < c.repDef[k+1] {
		return cell{kind: kindList}
	}
	return cell{kind: kindList, list: []cell{c.build(k+1, d, v)}}
}

// leafKind names the physical type of the column's values, for messages.
func (c *column) leafKind() string { return c.leaf.Type().Kind().String() }

// isStringLeaf reports whether the leaf holds byte arrays.
func (c *column) isStringLeaf() bool {
	k := c.leaf.Type().Kind()
	return k == parquet.ByteArray || k == parquet.FixedLenByteArray
}

// isIntLeaf reports whether the leaf holds integers.
func (c *column) isIntLeaf() bool {
	k := c.leaf.Type().Kind()
	return k == parquet.Int32 || k == parquet.Int64
}

// describe tells the shape of the column, for messages: "string", "list of int32", ...
func (c *column) describe() string {
	s := strings.ToLower(c.leafKind())
	if c.isStringLeaf() {
		s = "string"
	}
	for i := 0; i < c.depth; i++ {
		s = "list of " + s
	}
	return s
}

// text returns a leaf cell as text: strings as they are, numbers in decimal.
func (x cell) text() string {
	switch x.kind {
	case kindString:
		return x.str
	case kindInt, kindBool:
		return strconv.FormatInt(x.num, 10)
	case kindFloat:
		return strconv.FormatFloat(x.flt, 'g', -1, 64)
	}
	return ""
}
