package datasets

import (
	"errors"
	"fmt"
	"path/filepath"
)

// ErrFetchTarget marks a fetch that FetchTarget cannot place: no repository or split, or no
// destination. It is the caller's input that is incomplete.
var ErrFetchTarget = errors.New("incomplete fetch target")

// FetchTarget resolves an explicit fetch of name: the Hub source is the known one of name (if any) with
// each non-empty field of override replacing its own, and the destination is out or, when out is empty,
// the cache directory of the known dataset name (CacheDir()/data/<its directory>). A result without a
// repository or split, or without a destination, is an error wrapping ErrFetchTarget.
func FetchTarget(name string, override HubSource, out string) (HubSource, string, error) {
	src, rel, ok := HubSourceOf(name)
	if !ok {
		_, rel, _ = LocalDirOf(name)
	}
	for _, f := range []struct {
		dst *string
		v   string
	}{{&src.Repo, override.Repo}, {&src.Dir, override.Dir}, {&src.Split, override.Split}, {&src.Revision, override.Revision}} {
		if f.v != "" {
			*f.dst = f.v
		}
	}
	if src.Repo == "" || src.Split == "" {
		return src, "", fmt.Errorf("fetch %s: give a repository, folder and split (no built-in Hub source): %w", name, ErrFetchTarget)
	}
	if out != "" {
		return src, out, nil
	}
	if rel == "" {
		return src, "", fmt.Errorf("fetch %s: not a known dataset; give a destination: %w", name, ErrFetchTarget)
	}
	cache, err := CacheDir()
	if err != nil {
		return src, "", err
	}
	return src, filepath.Join(cache, "data", filepath.FromSlash(rel)), nil
}
