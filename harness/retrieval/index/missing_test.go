package index

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/ragbench/ragbench/harness/retrieval/bm25"
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

func TestBuiltSummary(t *testing.T) {
	cases := []struct {
		b    Built
		want string
	}{
		{Built{Dir: "ix/g4", BM25: &bm25.Meta{Docs: 10, Empty: 1, Terms: 50, DocCount: 9, SumTotalTermFreq: 45}, Elapsed: 1500 * time.Millisecond},
			"ix/g4: bm25 index of 10 documents (1 empty), 50 terms, avgdl 5.0, in 1.5s"},
		{Built{Dir: "dn", Elapsed: 2 * time.Second}, "dn: dense index built in 2.0s"},
	}
	for _, c := range cases {
		if got := c.b.Summary(); got != c.want {
			t.Errorf("Summary = %q, want %q", got, c.want)
		}
	}
}
