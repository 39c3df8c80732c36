package corpus

import (
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"

	"github.com/ragbench/ragbench/internal/testenv"
)

type pqRow struct {
	ID    int64  `parquet:"id"`
	Title string `parquet:"title"`
	Text  string `parquet:"text"`
}

type pqNoID struct {
	Contents string `parquet:"contents"`
}

func writeParquet[T any](t *testing.T, rows []T, opts ...parquet.WriterOption) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "c.parquet")
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	w := parquet.NewGenericWriter[T](f, opts...)
	// Several small row groups exercise the row-group change.
	for i := 0; i < len(rows); i += 3 {
		j := min(i+3, len(rows))
		if _, err := w.Write(rows[i:j]); err != nil {
			t.Fatal(err)
		}
		if err := w.Flush(); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	f.Close()
	return p
}

func TestParquetReader(t *testing.T) {
	var rows []pqRow
	for i := range 10 {
		rows = append(rows, pqRow{ID: int64(100 + i), Title: "T" + strings.Repeat("x", i), Text: "body " + strings.Repeat("y", i)})
	}
	p := writeParquet(t, rows, parquet.PageBufferSize(64))
	docs, err := readAll(t, p, FormatAuto)
	if err != nil {
		t.Fatal(err)
	}
	if len(docs) != len(rows) {
		t.Fatalf("got %d docs, want %d", len(docs), len(rows))
	}
	for i, d := range docs {
		want := Document{ID: strconv.FormatInt(rows[i].ID, 10), Title: rows[i].Title, Text: rows[i].Text}
		if d != want {
			t.Fatalf("doc %d = %+v, want %+v", i, d, want)
		}
	}

	// No id column: rows are numbered; contents is found as the text.
	p = writeParquet(t, []pqNoID{{"a"}, {"b"}, {"c"}, {"d"}})
	docs, err = readAll(t, p, FormatParquet)
	if err != nil || len(docs) != 4 || docs[3].ID != "3" || docs[3].Text != "d" {
		t.Fatalf("docs = %+v, err = %v", docs, err)
	}

	// A named column that does not exist is a clear error listing the columns.
	if _, err := OpenParquet(p, ParquetColumns{Text: "body"}); err == nil || !strings.Contains(err.Error(), "columns are contents") {
		t.Fatalf("err = %v", err)
	}
	// A file that is not parquet.
	bad := write(t, "bad.parquet", "not parquet at all")
	if _, err := Open(bad, FormatAuto); err == nil || !strings.Contains(err.Error(), "open parquet") {
		t.Fatalf("err = %v", err)
	}
}

func TestParquetRealNested(t *testing.T) {
	p := testenv.Data(t, "nq_longdoc/validation-00000-of-00001.parquet")
	r, err := OpenParquet(p, ParquetColumns{ID: "id", Title: "document.title", Text: "document.text"})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	n := 0
	for {
		d, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if d.Title == "" || len(d.Text) < 10000 {
			t.Fatalf("row %d: title %q, %d bytes of text", n, d.Title, len(d.Text))
		}
		n++
	}
	if n != 109 {
		t.Fatalf("read %d rows, want 109", n)
	}
	// A list column cannot be the text.
	p2 := testenv.Data(t, "hotpotqa/distractor/validation-00000-of-00001.parquet")
	if _, err := OpenParquet(p2, ParquetColumns{ID: "id", Text: "context.title.list.element"}); err == nil || !strings.Contains(err.Error(), "is a list") {
		t.Fatalf("err = %v", err)
	}
}
