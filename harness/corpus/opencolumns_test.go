package corpus

import (
	"os"
	"path/filepath"
	"testing"
)

func TestOpenColumns(t *testing.T) {
	p := filepath.Join(t.TempDir(), "psgs.tsv")
	if err := os.WriteFile(p, []byte("id\ttext\ttitle\n1\tsome text\tT\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r, err := OpenColumns(p, "", ParquetColumns{})
	if err != nil {
		t.Fatalf("no columns: %v, want the TSV opened by its name", err)
	}
	d, err := r.Next()
	r.Close()
	if err != nil || d.Text != "some text" {
		t.Errorf("first document %+v, %v", d, err)
	}
	if _, err := OpenColumns(p, "", ParquetColumns{Text: "text"}); err == nil {
		t.Error("columns given: the file is read as parquet, and a TSV is not parquet; want an error")
	}
}
