package datasets

import (
	"context"
	"fmt"
	"io"
	"os"
)

// FetchAs downloads name into the cache as FetchName does when override is only the revision "main"
// and out is empty; otherwise from the source and into the destination FetchTarget resolves (an
// incomplete target is an ErrFetchTarget error). It returns the destination
// directory and the files.
func FetchAs(ctx context.Context, f *Fetcher, name string, override HubSource, out string) (string, []FetchResult, error) {
	if override.Repo == "" && override.Dir == "" && override.Split == "" && out == "" && override.Revision == "main" {
		return FetchName(ctx, f, name)
	}
	src, dest, err := FetchTarget(name, override, out)
	if err != nil {
		return dest, nil, err
	}
	res, err := f.Fetch(ctx, src, dest)
	return dest, res, err
}

// WriteFetchResults writes one line per file: path, size and whether it was downloaded or already
// cached, tab-separated.
func WriteFetchResults(w io.Writer, res []FetchResult) {
	for _, r := range res {
		state := "downloaded"
		if r.Cached {
			state = "cached"
		}
		fmt.Fprintf(w, "%s\t%d bytes\t%s\n", r.Path, r.Size, state)
	}
}

// ImportFile imports the official file at in (see Import) into out.
func ImportFile(ctx context.Context, format, in, out string, opts ImportOptions) (int, error) {
	f, err := os.Open(in)
	if err != nil {
		return 0, fmt.Errorf("import: %w", err)
	}
	defer f.Close()
	return Import(ctx, format, f, in, out, opts)
}
