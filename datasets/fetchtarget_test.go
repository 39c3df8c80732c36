package datasets

import (
	"errors"
	"path/filepath"
	"testing"
)

func TestFetchTarget(t *testing.T) {
	t.Setenv("RAGBENCH_CACHE", "/cache")
	known, rel, ok := HubSourceOf("nq_open")
	if !ok {
		t.Fatal("nq_open has a Hub source")
	}
	cases := []struct {
		name     string
		override HubSource
		out      string
		wantSrc  HubSource
		wantDest string
		bad      bool
		why      string
	}{
		{"nq_open", HubSource{Revision: "v2"}, "", HubSource{Repo: known.Repo, Dir: known.Dir, Split: known.Split, Revision: "v2"},
			filepath.Join("/cache", "data", filepath.FromSlash(rel)), false, "a known source with one field replaced goes to the cache"},
		{"nq_open", HubSource{Repo: "me/copy"}, "/tmp/x", HubSource{Repo: "me/copy", Dir: known.Dir, Split: known.Split, Revision: known.Revision},
			"/tmp/x", false, "an explicit destination wins"},
		{"2wikimultihopqa", HubSource{}, "", HubSource{}, "", true, "no built-in Hub source and no repository given"},
		{"2wikimultihopqa", HubSource{Repo: "me/2wiki", Split: "dev"}, "", HubSource{Repo: "me/2wiki", Split: "dev"}, "", false, "a known local name gets its cache directory"},
		{"nonesuch", HubSource{Repo: "a/b", Split: "s"}, "", HubSource{}, "", true, "an unknown name needs a destination"},
		{"nonesuch", HubSource{Repo: "a/b", Split: "s"}, "/o", HubSource{Repo: "a/b", Split: "s"}, "/o", false, "any Hub dataset with a destination"},
	}
	for _, c := range cases {
		src, dest, err := FetchTarget(c.name, c.override, c.out)
		if c.bad {
			if !errors.Is(err, ErrFetchTarget) {
				t.Errorf("%s: err %v, want ErrFetchTarget (%s)", c.name, err, c.why)
			}
			continue
		}
		if err != nil || src != c.wantSrc || (c.wantDest != "" && dest != c.wantDest) || dest == "" {
			t.Errorf("%s: got %+v %q %v, want %+v %q (%s)", c.name, src, dest, err, c.wantSrc, c.wantDest, c.why)
		}
	}
}
