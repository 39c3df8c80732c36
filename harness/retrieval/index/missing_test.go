package index

import (
	"os"
	"path/filepath"
	"testing"
)

func TestMissing(t *testing.T) {
	empty := t.TempDir()
	units := t.TempDir()
	for _, g := range []string{"g2", "g16", "other"} {
		if err := os.Mkdir(filepath.Join(units, g), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	cases := []struct {
		dir, want, why string
	}{
		{empty, "not an index directory (build one with 'ragbench index build --out DIR')", "no index: how to build one"},
		{filepath.Join(empty, "none"), "not an index directory (build one with 'ragbench index build --out DIR')", "a missing directory: the same"},
		{units, "not an index directory; for unit indexes pass OUT/gN (here: g16, g2)", "unit indexes are named, sorted, others not"},
	}
	for _, c := range cases {
		if got := Missing(c.dir); got != c.want {
			t.Errorf("%s: Missing = %q, want %q", c.why, got, c.want)
		}
	}
}
