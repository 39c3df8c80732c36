package index

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ragbench/ragbench/harness/corpus"
	"github.com/ragbench/ragbench/harness/retrieval/dense"
)

func TestBuildConfigValidate(t *testing.T) {
	ok := BuildConfig{Kind: KindBM25, Dir: "d"}
	for _, c := range []struct {
		mod   func(*BuildConfig)
		valid bool
		why   string
	}{
		{func(*BuildConfig) {}, true, "bm25 into a directory"},
		{func(c *BuildConfig) { c.Kind = "xyz" }, false, "unknown kind"},
		{func(c *BuildConfig) { c.Kind = KindElastic }, false, "Elasticsearch indexes are not built here"},
		{func(c *BuildConfig) { c.Dir = "" }, false, "no directory"},
		{func(c *BuildConfig) { c.Units = []int{2, 0} }, false, "a unit size below 1"},
		{func(c *BuildConfig) { c.Stride = -1 }, false, "negative stride"},
		{func(c *BuildConfig) { c.Kind, c.Dense.Kind = KindDense, dense.KindOpenAI }, false, "a server embedder without a model"},
		{func(c *BuildConfig) { c.Kind = KindDense }, true, "dense with LSA (the default embedder)"},
	} {
		cfg := ok
		c.mod(&cfg)
		if err := cfg.Validate(); (err == nil) != c.valid {
			t.Errorf("%s: err %v", c.why, err)
		}
	}
}

// sourceOf writes docs as a DPR TSV and opens it as a source.
func sourceOf(t *testing.T, docs []corpus.Document) *corpus.Source {
	t.Helper()
	var b strings.Builder
	b.WriteString("id\ttext\ttitle\n")
	for _, d := range docs {
		b.WriteString(d.ID + "\t" + d.Text + "\t" + d.Title + "\n")
	}
	path := filepath.Join(t.TempDir(), "c.tsv")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	src, err := corpus.OpenSource(context.Background(), corpus.SourceConfig{Path: path})
	if err != nil {
		t.Fatal(err)
	}
	return src
}

// TestBuildUnitsBM25 builds unit indexes of two sizes and checks each against one built by hand from the
// same units: the same sidecar, bytes for bytes, and the same hits.
func TestBuildUnitsBM25(t *testing.T) {
	docs := passages(t, 300)
	dir := t.TempDir()
	var built []Built
	err := Build(context.Background(), sourceOf(t, docs), BuildConfig{Kind: KindBM25, Dir: dir, Units: []int{2, 4}, ParentSize: 4},
		func(b Built) { built = append(built, b) })
	if err != nil {
		t.Fatal(err)
	}
	if len(built) != 2 || built[0].Units != 2 || built[1].Units != 4 || built[0].BM25 == nil || built[0].Dir != filepath.Join(dir, "g2") {
		t.Fatalf("built %+v", built)
	}
	for _, g := range []int{2, 4} {
		want := filepath.Join(t.TempDir(), "hand")
		units := buildUnits(t, docs, g, want)
		gdir := filepath.Join(dir, "g"+string(rune('0'+g)))
		a, _ := os.ReadFile(filepath.Join(gdir, corpus.UnitsFile))
		b, _ := os.ReadFile(filepath.Join(want, corpus.UnitsFile))
		if len(a) == 0 || !bytes.Equal(a, b) {
			t.Fatalf("g%d: sidecar differs from the hand-written one (%d vs %d bytes)", g, len(a), len(b))
		}
		if got := built[g/4].BM25.Docs; got != int64(len(units)) {
			t.Fatalf("g%d: %d documents indexed, %d units", g, got, len(units))
		}
		gotIx, err := Open(context.Background(), Config{Dir: gdir})
		if err != nil {
			t.Fatal(err)
		}
		wantIx, err := Open(context.Background(), Config{Dir: want})
		if err != nil {
			t.Fatal(err)
		}
		sameHits(t, gotIx, wantIx)
		gotIx.Close()
		wantIx.Close()
	}
}

// TestBuildDenseUnits: an LSA unit index reads the units twice (to fit the model, then to index) but
// writes its sidecar once, and opens with its units.
func TestBuildDenseUnits(t *testing.T) {
	docs := passages(t, 200)
	dir := t.TempDir()
	var built []Built
	cfg := BuildConfig{Kind: KindDense, Dir: dir, Units: []int{4}, ParentSize: 4, Dense: dense.EmbedderSpec{LSA: dense.LSAConfig{Dim: 16}}}
	if err := Build(context.Background(), sourceOf(t, docs), cfg, func(b Built) { built = append(built, b) }); err != nil {
		t.Fatal(err)
	}
	units := buildUnits(t, docs, 4, filepath.Join(t.TempDir(), "hand"))
	side, _ := os.ReadFile(filepath.Join(dir, "g4", corpus.UnitsFile))
	if n := bytes.Count(side, []byte("\n")); n != len(units) {
		t.Fatalf("sidecar has %d lines for %d units (written during the fit too?)", n, len(units))
	}
	if len(built) != 1 || built[0].BM25 != nil {
		t.Fatalf("built %+v", built)
	}
	ix, err := Open(context.Background(), Config{Dir: filepath.Join(dir, "g4")})
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	hits, err := ix.Retrieve(context.Background(), "world war", 3)
	if err != nil || len(hits) != 3 || hits[0].Unit == nil {
		t.Fatalf("hits %+v, %v", hits, err)
	}
}

// TestBuildDenseInt8: dense.quantize int8 builds the int8 search form, which Open then searches.
func TestBuildDenseInt8(t *testing.T) {
	docs := passages(t, 200)
	dir := t.TempDir()
	cfg := BuildConfig{Kind: KindDense, Dir: dir, Dense: dense.EmbedderSpec{LSA: dense.LSAConfig{Dim: 16}, Quantize: dense.QuantInt8}}
	if err := Build(context.Background(), sourceOf(t, docs), cfg, nil); err != nil {
		t.Fatal(err)
	}
	d, err := dense.Open(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if ok, _ := d.Int8(); !ok || d.Meta().Quantization != dense.QuantInt8 {
		t.Fatalf("quantize int8 built %+v", d.Meta())
	}
	ix, err := Open(context.Background(), Config{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	if hits, err := ix.Retrieve(context.Background(), "world war", 3); err != nil || len(hits) != 3 {
		t.Fatalf("hits %+v, %v", hits, err)
	}
	cfg.Dense.Quantize, cfg.Dir = "int4", t.TempDir()
	if err := Build(context.Background(), sourceOf(t, docs), cfg, nil); err == nil || !strings.Contains(err.Error(), `"int4"`) {
		t.Fatalf("quantize int4: %v", err)
	}
}
