package corpus

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"unicode/utf8"
)

// Document is one corpus document or passage.
type Document struct {
	ID    string `json:"id"`
	Title string `json:"title,omitempty"`
	Text  string `json:"text"`
}

// Reader streams documents. Next returns io.EOF after the last document.
type Reader interface {
	Next() (Document, error)
	Close() error
}

// Format names a corpus file format.
type Format string

// The supported formats.
const (
	FormatAuto  Format = ""
	FormatDPR   Format = "dpr"   // id \t text \t title, with a header line
	FormatJSONL Format = "jsonl" // BEIR {_id,title,text} or {id,contents}
	FormatDir   Format = "dir"   // a folder of .txt files, one document each
)

// maxLine bounds one line of a TSV or JSONL corpus (a 1M-token document fits).
const maxLine = 64 << 20

// Open opens the corpus at path. With FormatAuto the format follows the extension (.tsv, .jsonl, .json)
// or, for a directory, FormatDir. Other formats (parquet) are registered with RegisterOpener.
func Open(path string, format Format) (Reader, error) {
	if format == FormatAuto {
		f, err := Detect(path)
		if err != nil {
			return nil, err
		}
		format = f
	}
	switch format {
	case FormatDPR:
		return openDPR(path)
	case FormatJSONL:
		return openJSONL(path)
	case FormatDir:
		return openDir(path)
	}
	if op, ok := openers[format]; ok {
		return op(path)
	}
	return nil, fmt.Errorf("corpus %s: unknown format %q", path, format)
}

var openers = map[Format]func(path string) (Reader, error){}

// RegisterOpener adds a reader for another format (for example parquet) so that Open can use it.
func RegisterOpener(f Format, open func(path string) (Reader, error)) { openers[f] = open }

// Detect guesses a corpus format from the path.
func Detect(path string) (Format, error) {
	st, err := os.Stat(path)
	if err != nil {
		return "", fmt.Errorf("corpus: %w", err)
	}
	if st.IsDir() {
		return FormatDir, nil
	}
	switch ext := strings.ToLower(filepath.Ext(path)); ext {
	case ".tsv":
		return FormatDPR, nil
	case ".jsonl", ".json":
		return FormatJSONL, nil
	default:
		f := Format(strings.TrimPrefix(ext, "."))
		if _, ok := openers[f]; ok {
			return f, nil
		}
	}
	return "", fmt.Errorf("corpus %s: cannot tell the format from the name; give it explicitly (dpr, jsonl, dir)", path)
}

// lineReader reads lines of up to maxLine bytes and counts them.
type lineReader struct {
	path string
	f    *os.File
	sc   *bufio.Scanner
	line int
}

func newLineReader(path string) (*lineReader, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("corpus: %w", err)
	}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 1<<20), maxLine)
	return &lineReader{path: path, f: f, sc: sc}, nil
}

func (l *lineReader) next() ([]byte, error) {
	if !l.sc.Scan() {
		if err := l.sc.Err(); err != nil {
			return nil, fmt.Errorf("%s:%d: %w", l.path, l.line+1, err)
		}
		return nil, io.EOF
	}
	l.line++
	return l.sc.Bytes(), nil
}

func (l *lineReader) Close() error { return l.f.Close() }

type dprReader struct{ *lineReader }

func openDPR(path string) (Reader, error) {
	lr, err := newLineReader(path)
	if err != nil {
		return nil, err
	}
	return &dprReader{lr}, nil
}

// ParseDPRLine parses one line of a DPR psgs_w100 TSV, "id \t text \t title" (without its line end),
// undoing CSV quoting of a field the way Python's csv module (used by DPR's and DRAGIN's readers) does
// for a field that is a whole quoted string. The error names the field at fault but not the position;
// callers add file and line.
func ParseDPRLine(line string) (Document, error) {
	parts := strings.Split(line, "\t")
	if len(parts) != 3 {
		return Document{}, fmt.Errorf("want 3 tab-separated fields (id, text, title), got %d", len(parts))
	}
	if parts[0] == "" {
		return Document{}, errors.New("field id is empty")
	}
	if !utf8.ValidString(line) {
		return Document{}, errors.New("field text or title is not valid UTF-8")
	}
	return Document{ID: parts[0], Text: unquoteCSV(parts[1]), Title: unquoteCSV(parts[2])}, nil
}

// unquoteCSV undoes CSV quoting of a field ("a ""b""" -> a "b") when the field is a valid quoted CSV
// field; other fields, including text that merely starts with a quote, are returned unchanged.
func unquoteCSV(s string) string {
	if len(s) < 2 || s[0] != '"' || s[len(s)-1] != '"' {
		return s
	}
	inner := s[1 : len(s)-1]
	for i := 0; i < len(inner); i++ {
		if inner[i] == '"' {
			if i+1 < len(inner) && inner[i+1] == '"' {
				i++
				continue
			}
			return s
		}
	}
	return strings.ReplaceAll(inner, `""`, `"`)
}

func (r *dprReader) Next() (Document, error) {
	for {
		b, err := r.next()
		if err != nil {
			return Document{}, err
		}
		line := strings.TrimRight(string(b), "\r")
		if r.line == 1 && strings.HasPrefix(line, "id\t") {
			continue // header
		}
		if line == "" {
			continue
		}
		d, err := ParseDPRLine(line)
		if err != nil {
			return Document{}, fmt.Errorf("%s:%d: %w", r.path, r.line, err)
		}
		return d, nil
	}
}

type jsonlReader struct{ *lineReader }

func openJSONL(path string) (Reader, error) {
	lr, err := newLineReader(path)
	if err != nil {
		return nil, err
	}
	return &jsonlReader{lr}, nil
}

type jsonlRecord struct {
	BeirID   *string `json:"_id"`
	ID       any     `json:"id"`
	Title    string  `json:"title"`
	Text     *string `json:"text"`
	Contents *string `json:"contents"`
}

func (r *jsonlReader) Next() (Document, error) {
	for {
		b, err := r.next()
		if err != nil {
			return Document{}, err
		}
		if len(bytes.TrimSpace(b)) == 0 {
			continue
		}
		if !utf8.Valid(b) {
			return Document{}, fmt.Errorf("%s:%d: line is not valid UTF-8", r.path, r.line)
		}
		var rec jsonlRecord
		if err := json.Unmarshal(b, &rec); err != nil {
			return Document{}, fmt.Errorf("%s:%d: %w", r.path, r.line, err)
		}
		var d Document
		switch {
		case rec.BeirID != nil:
			d.ID = *rec.BeirID
		case rec.ID != nil:
			d.ID = fmt.Sprint(rec.ID)
		default:
			return Document{}, fmt.Errorf("%s:%d: field _id (or id) is missing", r.path, r.line)
		}
		d.Title = rec.Title
		switch {
		case rec.Text != nil:
			d.Text = *rec.Text
		case rec.Contents != nil:
			// Pyserini/FlashRAG layout: a quoted title on the first line, then the text.
			c := *rec.Contents
			if first, rest, ok := strings.Cut(c, "\n"); ok && d.Title == "" {
				d.Title = strings.Trim(first, `"`)
				c = rest
			}
			d.Text = c
		default:
			return Document{}, fmt.Errorf("%s:%d: field text (or contents) is missing", r.path, r.line)
		}
		return d, nil
	}
}

type dirReader struct {
	root  string
	files []string
	i     int
}

func openDir(root string) (Reader, error) {
	var files []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && strings.HasSuffix(strings.ToLower(d.Name()), ".txt") {
			files = append(files, p)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("corpus %s: %w", root, err)
	}
	sort.Strings(files)
	return &dirReader{root: root, files: files}, nil
}

func (r *dirReader) Next() (Document, error) {
	if r.i >= len(r.files) {
		return Document{}, io.EOF
	}
	p := r.files[r.i]
	r.i++
	b, err := os.ReadFile(p)
	if err != nil {
		return Document{}, fmt.Errorf("corpus: %w", err)
	}
	if !utf8.Valid(b) {
		return Document{}, fmt.Errorf("%s: file is not valid UTF-8", p)
	}
	rel, _ := filepath.Rel(r.root, p)
	return Document{ID: filepath.ToSlash(strings.TrimSuffix(rel, filepath.Ext(rel))), Text: string(b)}, nil
}

func (r *dirReader) Close() error { return nil }

// Each opens the corpus at path and calls fn for every document. It stops at the first error, including
// ctx's.
func Each(ctx context.Context, path string, format Format, fn func(Document) error) error {
	r, err := Open(path, format)
	if err != nil {
		return err
	}
	defer r.Close()
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		d, err := r.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		if err := fn(d); err != nil {
			return err
		}
	}
}

// SliceReader is a Reader over documents held in memory.
type SliceReader struct {
	docs []Document
	i    int
}

// NewSliceReader returns a Reader that yields docs in order.
func NewSliceReader(docs []Document) *SliceReader { return &SliceReader{docs: docs} }

// Next returns the next document, or io.EOF after the last.
func (s *SliceReader) Next() (Document, error) {
	if s.i >= len(s.docs) {
		return Document{}, io.EOF
	}
	s.i++
	return s.docs[s.i-1], nil
}

// Close does nothing.
func (s *SliceReader) Close() error { return nil }
