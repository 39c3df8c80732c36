package datasets

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ragbench/ragbench/internal/testenv"
)

func TestFetchAs(t *testing.T) {
	local := testenv.Data(t, "nq_open/validation-00000-of-00001.parquet")
	hub := newFakeHub(t, "tok", map[string]string{
		"google-research-datasets/nq_open/nq_open/validation-00000-of-00001.parquet": local,
	})
	cache := t.TempDir()
	t.Setenv("RAGBENCH_CACHE", cache)
	t.Setenv("RAGBENCH_DATA", "")
	t.Setenv("HF_ENDPOINT", hub.hub.URL)
	t.Setenv("HF_TOKEN", "tok")
	f := NewFetcher(io.Discard)
	ctx := context.Background()
	dir, res, err := FetchAs(ctx, f, "nq_open", HubSource{Revision: "main"}, "")
	if err != nil || dir != filepath.Join(cache, "data", "nq_open") || len(res) != 1 {
		t.Fatalf("no override: %s, %+v, %v; want FetchName's cache directory", dir, res, err)
	}
	out := t.TempDir()
	dir, res, err = FetchAs(ctx, f, "nq_open", HubSource{Revision: "main"}, out)
	if err != nil || dir != out || len(res) != 1 || res[0].Cached {
		t.Fatalf("--out: %s, %+v, %v; want a fresh download into %s", dir, res, err, out)
	}
	if _, _, err := FetchAs(ctx, f, "my-own", HubSource{Repo: "a/b"}, ""); !errors.Is(err, ErrFetchTarget) {
		t.Errorf("an incomplete target: %v, want ErrFetchTarget", err)
	}
	var b bytes.Buffer
	WriteFetchResults(&b, []FetchResult{{Path: "p", Size: 3}, {Path: "q", Size: 4, Cached: true}})
	if b.String() != "p\t3 bytes\tdownloaded\nq\t4 bytes\tcached\n" {
		t.Errorf("WriteFetchResults = %q", b.String())
	}
}

func TestImportFile(t *testing.T) {
	if _, err := ImportFile(context.Background(), FormatNQOpen, filepath.Join(t.TempDir(), "missing.jsonl"), filepath.Join(t.TempDir(), "o.parquet"), ImportOptions{}); err == nil || !strings.HasPrefix(err.Error(), "import: ") {
		t.Errorf("a missing input: %v, want an import error", err)
	}
	in := filepath.Join(t.TempDir(), "nq.jsonl")
	if err := os.WriteFile(in, []byte(`{"question": "who is x", "answer": ["y"]}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "o.parquet")
	n, err := ImportFile(context.Background(), FormatNQOpen, in, out, ImportOptions{})
	if err != nil || n != 1 {
		t.Fatalf("import one NQ-open row: %d, %v", n, err)
	}
	if ds, err := Load(context.Background(), out, LoadOptions{}); err != nil || ds.Total != 1 {
		t.Errorf("the imported file does not load back: %v", err)
	}
}
