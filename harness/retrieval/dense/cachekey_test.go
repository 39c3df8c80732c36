package dense

import (
	"context"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// TestOpenAICacheFilesPinned pins the names and the description files of the embedding cache: the
// file name is a hash of the base URL (credentials, query, fragment and trailing slashes taken away),
// the model and the dimensions, so that a change of how the URL is cleaned would orphan every cache.
func TestOpenAICacheFilesPinned(t *testing.T) {
	for _, tc := range []struct {
		why, baseURL string
		dims         int
		want         string // file names, then the .json contents
	}{
		{"a plain local server", "http://127.0.0.1:8080/v1", 0, `d4142608d9a7beaa.emb d4142608d9a7beaa.json
{
  "base_url": "http://127.0.0.1:8080/v1",
  "dimensions": "0",
  "model": "m"
}
`},
		{"credentials, a query, a fragment and a trailing slash are not part of the key", "https://user:pw@host/v1/?api-key=zzz#f", 0, `747b0d43e1a281e3.emb 747b0d43e1a281e3.json
{
  "base_url": "https://host/v1",
  "dimensions": "0",
  "model": "m"
}
`},
		{"dimensions are", "https://host/v1", 256, `004de6b711339d48.emb 004de6b711339d48.json
{
  "base_url": "https://host/v1",
  "dimensions": "256",
  "model": "m"
}
`},
	} {
		t.Run(tc.why, func(t *testing.T) {
			t.Setenv("OPENAI_API_KEY", "")
			dir := t.TempDir()
			e, err := NewOpenAI(context.Background(), OpenAIConfig{BaseURL: tc.baseURL, Model: "m", Dim: 4, Dimensions: tc.dims, CacheDir: dir})
			if err != nil {
				t.Fatal(err)
			}
			e.Close()
			if got := dirListing(t, dir); got != tc.want {
				t.Errorf("cache files\n%s\nwant\n%s", got, tc.want)
			}
		})
	}
}

// dirListing returns the names of dir's files and the contents of its .json files.
func dirListing(t *testing.T, dir string) string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	sort.Strings(names)
	out := strings.Join(names, " ") + "\n"
	for _, n := range names {
		if strings.HasSuffix(n, ".json") {
			b, _ := os.ReadFile(filepath.Join(dir, n))
			out += string(b)
		}
	}
	return out
}
