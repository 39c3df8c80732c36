package datasets

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"testing"
)

// The importers must never panic: any input either imports or gives an error. Seed corpora are in
// testdata/fuzz/<FuzzName>/ (run with: go test ./datasets -run XXX -fuzz FuzzImportHotpotQA).

func fuzzImport(f *testing.F, format string) {
	f.Fuzz(func(t *testing.T, data []byte) {
		n, err := importTo(context.Background(), format, bytes.NewReader(data), "fuzz", io.Discard, ImportOptions{})
		if err == nil && n == 0 {
			t.Fatal("no error and no rows")
		}
	})
}

func FuzzImportHotpotQA(f *testing.F) { fuzzImport(f, FormatHotpotQA) }
func FuzzImport2Wiki(f *testing.F)    { fuzzImport(f, Format2Wiki) }
func FuzzImportNQOpen(f *testing.F)   { fuzzImport(f, FormatNQOpen) }
func FuzzImportPubMedQA(f *testing.F) { fuzzImport(f, FormatPubMedQA) }

// FuzzLoadParquet feeds arbitrary bytes to the parquet loader: it must return examples or an error,
// never panic. Seeds are small valid files of each layout (testdata/fuzz/FuzzLoadParquet).
func FuzzLoadParquet(f *testing.F) {
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, data []byte) {
		p := filepath.Join(dir, "in.parquet")
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		ds, err := Load(context.Background(), p, LoadOptions{})
		if err == nil && ds == nil {
			t.Fatal("no error and no dataset")
		}
	})
}
