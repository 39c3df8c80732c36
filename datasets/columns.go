package datasets

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// frame reads the typed columns of one parquet file and records warnings against the file, row and
// column. Row numbers in messages are zero-based row indexes within the file.
type frame struct {
	t    *table
	warn func(Warning)
}

// lookup finds and reads a column. A missing column is an error when required, else (nil, nil).
func (fr *frame) lookup(path string, required bool) (*column, []cell, error) {
	c, err := fr.t.find(path)
	if err != nil {
		return nil, nil, err
	}
	if c == nil {
		if required {
			return nil, nil, fmt.Errorf("%s: missing column %q (columns: %s)", fr.t.path, path, strings.Join(fr.t.columns(), ", "))
		}
		return nil, nil, nil
	}
	rows, err := fr.t.read(c)
	if err != nil {
		return nil, nil, err
	}
	return c, rows, nil
}

// firstOf returns the first of the given column names present in the file, or "".
func (fr *frame) firstOf(names ...string) string {
	for _, n := range names {
		if c, _ := fr.t.find(n); c != nil {
			return n
		}
	}
	return ""
}

func (fr *frame) typeErr(c *column, want string) error {
	return fmt.Errorf("%s: column %s has type %s, want %s", fr.t.path, c.name, c.describe(), want)
}

// str checks and repairs one string value.
func (fr *frame) str(c *column, row int, s string) string {
	if !utf8.ValidString(s) {
		fr.warn(Warning{File: fr.t.path, Row: row, Column: c.name, Message: "invalid UTF-8 (replaced with U+FFFD)"})
		return strings.ToValidUTF8(s, "\uFFFD")
	}
	return s
}

// strings reads a column of scalar text (numbers are accepted when allowNum and given in decimal).
// nulls[i] reports a null value. A missing optional column gives nil slices.
func (fr *frame) strings(path string, required, allowNum bool) (vals []string, nulls []bool, err error) {
	c, rows, err := fr.lookup(path, required)
	if err != nil || c == nil {
		return nil, nil, err
	}
	if c.depth != 0 || !(c.isStringLeaf() || (allowNum && c.isIntLeaf())) {
		want := "string"
		if allowNum {
			want = "string or integer"
		}
		return nil, nil, fr.typeErr(c, want)
	}
	vals = make([]string, len(rows))
	nulls = make([]bool, len(rows))
	for i, x := range rows {
		if x.kind == kindNull {
			nulls[i] = true
			continue
		}
		vals[i] = fr.str(c, i, x.text())
	}
	return vals, nulls, nil
}

// stringLists reads a column of lists of text; a scalar text column is read as one-element lists when
// allowScalar. Null elements are dropped with a warning; a null list gives a nil list and nulls[i].
func (fr *frame) stringLists(path string, required, allowScalar bool) (vals [][]string, nulls []bool, err error) {
	c, rows, err := fr.lookup(path, required)
	if err != nil || c == nil {
		return nil, nil, err
	}
	if !c.isStringLeaf() || c.depth > 1 || (c.depth == 0 && !allowScalar) {
		return nil, nil, fr.typeErr(c, "list of string")
	}
	vals = make([][]string, len(rows))
	nulls = make([]bool, len(rows))
	for i, x := range rows {
		if x.kind == kindNull {
			nulls[i] = true
			continue
		}
		if c.depth == 0 {
			vals[i] = []string{fr.str(c, i, x.str)}
			continue
		}
		vals[i] = fr.list(c, i, x.list)
	}
	return vals, nulls, nil
}

func (fr *frame) list(c *column, row int, xs []cell) []string {
	out := make([]string, 0, len(xs))
	for j, y := range xs {
		if y.kind == kindNull {
			fr.warn(Warning{File: fr.t.path, Row: row, Column: c.name, Message: fmt.Sprintf("null element %d dropped", j)})
			continue
		}
		out = append(out, fr.str(c, row, y.text()))
	}
	return out
}

// stringListLists reads a column of lists of lists of text (HotpotQA's context.sentences).
func (fr *frame) stringListLists(path string, required bool) ([][][]string, error) {
	c, rows, err := fr.lookup(path, required)
	if err != nil || c == nil {
		return nil, err
	}
	if !c.isStringLeaf() || c.depth != 2 {
		return nil, fr.typeErr(c, "list of list of string")
	}
	vals := make([][][]string, len(rows))
	for i, x := range rows {
		if x.kind == kindNull {
			continue
		}
		vals[i] = make([][]string, len(x.list))
		for j, y := range x.list {
			vals[i][j] = fr.list(c, i, y.list)
		}
	}
	return vals, nil
}

// intLists reads a column of lists of integers (supporting_facts.sent_id).
func (fr *frame) intLists(path string, required bool) ([][]int, error) {
	c, rows, err := fr.lookup(path, required)
	if err != nil || c == nil {
		return nil, err
	}
	if !c.isIntLeaf() || c.depth != 1 {
		return nil, fr.typeErr(c, "list of int32")
	}
	vals := make([][]int, len(rows))
	for i, x := range rows {
		for j, y := range x.list {
			if y.kind == kindNull {
				fr.warn(Warning{File: fr.t.path, Row: i, Column: c.name, Message: fmt.Sprintf("null element %d dropped", j)})
				continue
			}
			vals[i] = append(vals[i], int(y.num))
		}
	}
	return vals, nil
}
