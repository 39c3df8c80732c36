package datasets

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ragbench/ragbench/internal/testenv"
)

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
		t.Fatal(err)
	}
	in, err := os.Open(from)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	out, err := os.Create(to)
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	if _, err := io.Copy(out, in); err != nil {
		t.Fatal(err)
	}
}

// TestFetchedCopyWins: a dataset fetched into the cache is what a bare name loads, the sample beside
// the checkout stays reachable as NAME@shared, and Locations lists both in that order.
func TestFetchedCopyWins(t *testing.T) {
	full := testenv.Data(t, "hotpotqa/fullwiki/validation-00000-of-00001.parquet") // 500 rows, same layout
	testenv.Data(t, "hotpotqa/distractor/validation-00000-of-00001.parquet")
	cache := t.TempDir()
	t.Setenv("RAGBENCH_CACHE", cache)
	t.Setenv("RAGBENCH_DATA", "")
	copyFile(t, full, filepath.Join(cache, "data", "hotpotqa", "distractor", "validation-00000-of-00001.parquet"))
	ctx := context.Background()
	cases := []struct {
		spec   string
		rows   int
		reason string
	}{
		{"hotpotqa", 500, "the fetched (cache) copy wins over the shared sample"},
		{"hotpotqa@cache", 500, "pinned to the cache"},
		{"hotpotqa@shared", 100, "pinned to the sample beside the checkout"},
	}
	for _, c := range cases {
		ds, err := Load(ctx, c.spec, LoadOptions{})
		if err != nil {
			t.Fatalf("%s: %v", c.spec, err)
		}
		if ds.Total != c.rows {
			t.Errorf("%s: %d rows, want %d (%s)", c.spec, ds.Total, c.rows, c.reason)
		}
	}
	if _, err := Load(ctx, "hotpotqa@data", LoadOptions{}); err == nil || !strings.Contains(err.Error(), "not set up") {
		t.Errorf("@data without RAGBENCH_DATA: %v", err)
	}
	if _, err := Load(ctx, "hotpotqa@nowhere", LoadOptions{}); err == nil || !strings.Contains(err.Error(), "unknown source") {
		t.Errorf("@nowhere: %v", err)
	}
	locs, err := Locations("hotpotqa")
	if err != nil || len(locs) != 2 || locs[0].Source != SourceCache || locs[1].Source != SourceShared {
		t.Errorf("Locations = %+v, %v", locs, err)
	}
}

// TestNoStraySharedFolder: a shared/data folder somewhere above the working directory (not beside a
// ragbench checkout) is never searched.
func TestNoStraySharedFolder(t *testing.T) {
	src := testenv.Data(t, "hotpotqa/distractor/validation-00000-of-00001.parquet")
	root := t.TempDir()
	copyFile(t, src, filepath.Join(root, "shared", "data", "hotpotqa", "distractor", "validation-00000-of-00001.parquet"))
	wd := filepath.Join(root, "a", "b")
	os.MkdirAll(wd, 0o755)
	t.Chdir(wd)
	t.Setenv("RAGBENCH_CACHE", t.TempDir())
	t.Setenv("RAGBENCH_DATA", "")
	for _, r := range Roots() {
		if r.Source == SourceShared {
			t.Errorf("a stray %s was taken as the shared data", r.Dir)
		}
	}
	if _, err := Load(context.Background(), "hotpotqa", LoadOptions{}); err == nil {
		t.Error("loaded hotpotqa from a stray shared folder")
	}
}
