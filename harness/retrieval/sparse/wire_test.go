package sparse

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestTEIRequestBytes pins the exact bytes, path and headers of an /embed_sparse request: TEI sees
// these bytes.
func TestTEIRequestBytes(t *testing.T) {
	for _, tc := range []struct {
		why        string
		noTruncate bool
		body       string
	}{
		{"truncating (the default)", false, `{"inputs":["a \u003cb\u003e \u0026 \"c\"","d\n"],"truncate":true}`},
		{"refusing long inputs", true, `{"inputs":["a \u003cb\u003e \u0026 \"c\"","d\n"],"truncate":false}`},
	} {
		t.Run(tc.why, func(t *testing.T) {
			var body []byte
			var path string
			var hdr http.Header
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				body, _ = io.ReadAll(r.Body)
				path, hdr = r.URL.Path, r.Header
				io.WriteString(w, `[[{"index":3,"value":0.5}],[]]`)
			}))
			defer srv.Close()
			c, err := NewTEI(Config{BaseURL: srv.URL + "/", Vocab: 10, NoTruncate: tc.noTruncate})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := c.Encode(context.Background(), []string{"a <b> & \"c\"", "d\n"}); err != nil {
				t.Fatal(err)
			}
			if path != "/embed_sparse" || string(body) != tc.body {
				t.Errorf("path %s body\n %s\nwant\n %s", path, body, tc.body)
			}
			if hdr.Get("Content-Type") != "application/json" || hdr.Get("Authorization") != "" {
				t.Errorf("headers %v", hdr)
			}
		})
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
	b, _ := os.ReadFile(filepath.Join(dir, "767a56ac70c1df16.json"))
	ents, _ := os.ReadDir(dir)
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	got := strings.Join(names, " ") + "\n" + string(b)
	want := "767a56ac70c1df16.emb 767a56ac70c1df16.json\n" + `{
  "base_url": "http://127.0.0.1:8080",
  "kind": "sparse",
  "model": "naver/splade-v3"
}
`
	if got != want {
		t.Errorf("cache files\n%s\nwant\n%s", got, want)
	}
}
