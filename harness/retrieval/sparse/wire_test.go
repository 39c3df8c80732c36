package sparse

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/ragbench/ragbench/internal/transport/transporttest"
)

// TestTEIRequestBytes pins the exact bytes, path and headers of an /embed_sparse request: TEI sees
// these bytes.
func TestTEIRequestBytes(t *testing.T) {
	srv := transporttest.New(t, `[[{"index":3,"value":0.5}],[]]`)
	// Truncating (the default), then refusing long inputs.
	for _, noTruncate := range []bool{false, true} {
		c, err := NewTEI(Config{BaseURL: srv.URL + "/", Vocab: 10, NoTruncate: noTruncate})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.Encode(context.Background(), []string{"a <b> & \"c\"", "d\n"}); err != nil {
			t.Fatal(err)
		}
		want := `{"inputs":["a \u003cb\u003e \u0026 \"c\"","d\n"],"truncate":` + strconv.FormatBool(!noTruncate) + `}`
		r := srv.Last()
		if r.Path != "/embed_sparse" || string(r.Body) != want {
			t.Errorf("no_truncate %v: path %s body\n %s\nwant\n %s", noTruncate, r.Path, r.Body, want)
		}
		if r.Header.Get("Content-Type") != "application/json" || r.Header.Get("Authorization") != "" {
			t.Errorf("headers %v", r.Header)
		}
	}
}

// TestTEICacheFilesPinned pins the cache file of a TEI encoder: its name hashes the base URL (trailing
// slash taken away), the model and the truncation, so that a change there would orphan every cache.
func TestTEICacheFilesPinned(t *testing.T) {
	dir := t.TempDir()
	c, err := NewTEI(Config{BaseURL: "http://127.0.0.1:8080/", CacheDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	c.Close()
	const name = "767a56ac70c1df16"
	if _, err := os.Stat(filepath.Join(dir, name+".emb")); err != nil {
		t.Error(err)
	}
	want := "{\n  \"base_url\": \"http://127.0.0.1:8080\",\n  \"kind\": \"sparse\",\n  \"model\": \"naver/splade-v3\"\n}\n"
	if b, err := os.ReadFile(filepath.Join(dir, name+".json")); err != nil || string(b) != want {
		t.Errorf("%s.json: %q (%v), want %q", name, b, err, want)
	}
}
