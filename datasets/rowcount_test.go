package datasets

import (
	"context"
	"os"
	"path/filepath"
	"testing"
)

func TestRowCountMatchesLoad(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "validation-00000-of-00001.parquet")
	writeParquet(t, path, []nqRow{{"q1", []string{"a"}}, {"q2", []string{"b"}}, {"q3", []string{"c"}}})
	ds, err := Load(context.Background(), path, LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	n, err := RowCount(ds.Files)
	if err != nil || n != ds.Total {
		t.Fatalf("RowCount %d, %v; Load read %d rows", n, err, ds.Total)
	}
	bad := filepath.Join(dir, "bad.parquet")
	if err := os.WriteFile(bad, []byte("not parquet"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := RowCount([]string{bad}); err == nil {
		t.Fatal("a file that is not parquet must be an error")
	}
}
