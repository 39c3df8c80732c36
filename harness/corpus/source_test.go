package corpus

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ragbench/ragbench/internal/testenv"
)

func readSource(t *testing.T, r Reader) []Document {
	t.Helper()
	defer r.Close()
	var out []Document
	for {
		d, err := r.Next()
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, d)
	}
}

func TestSourceConfigValidate(t *testing.T) {
	for _, c := range []struct {
		cfg SourceConfig
		ok  bool
		why string
	}{
		{SourceConfig{}, false, "no source"},
		{SourceConfig{Path: "a", Dataset: "b"}, false, "two sources"},
		{SourceConfig{Dataset: "b", Format: FormatJSONL}, false, "a format does not apply to a dataset"},
		{SourceConfig{Dataset: "b", Columns: &ParquetColumns{}}, false, "columns do not apply to a dataset"},
		{SourceConfig{Path: "a", Format: FormatDPR}, true, "a corpus path with its format"},
		{SourceConfig{Dataset: "hotpotqa"}, true, "a dataset"},
	} {
		if err := c.cfg.Validate(); (err == nil) != c.ok {
			t.Errorf("%+v: err %v (%s)", c.cfg, err, c.why)
		}
	}
}

// TestSourceFile opens a DPR TSV source twice (each Open starts again) and cuts it into units with a
// sidecar that matches the units returned.
func TestSourceFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "c.tsv")
	tsv := "id\ttext\ttitle\n1\tOne sentence here. A second one follows. And a third.\tDoc one\n2\tOnly this.\tDoc two\n"
	if err := os.WriteFile(path, []byte(tsv), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := OpenSource(context.Background(), SourceConfig{Path: filepath.Join(t.TempDir(), "missing.tsv")}); err == nil {
		t.Error("a missing corpus file must fail at OpenSource, not later")
	}
	src, err := OpenSource(context.Background(), SourceConfig{Path: path})
	if err != nil {
		t.Fatal(err)
	}
	if src.Dataset != "" {
		t.Errorf("file source has dataset %q", src.Dataset)
	}
	r1, _ := src.Open()
	r2, _ := src.Open()
	a, b := readSource(t, r1), readSource(t, r2)
	if len(a) != 2 || len(b) != 2 || a[0] != b[0] || a[1].ID != "2" || a[0].Title != "Doc one" {
		t.Fatalf("reads %+v and %+v", a, b)
	}
	var side bytes.Buffer
	ur, err := src.Units(UnitOptions{Sizes: []int{2}, ParentSize: 2}, &side)
	if err != nil {
		t.Fatal(err)
	}
	units := readSource(t, ur)
	want := []string{"1#g2:0-2", "1#g2:1-3", "2#g2:0-1"}
	var ids []string
	for _, u := range units {
		ids = append(ids, u.ID)
	}
	if strings.Join(ids, " ") != strings.Join(want, " ") {
		t.Fatalf("unit ids %v, want %v", ids, want)
	}
	sc := bufio.NewScanner(&side)
	i := 0
	for sc.Scan() {
		var u Unit
		if err := json.Unmarshal(sc.Bytes(), &u); err != nil {
			t.Fatal(err)
		}
		if u.ID != units[i].ID || u.Text != "" || u.DocID == "" || u.Size != 2 || u.End <= u.Start {
			t.Errorf("sidecar line %d: %+v for unit %+v (want its bookkeeping without text)", i, u, units[i])
		}
		i++
	}
	if i != len(units) {
		t.Fatalf("%d sidecar lines for %d units", i, len(units))
	}
}

// TestSourceDataset pools a real dataset: the units keep the published sentences (HotpotQA's paragraphs
// are lists of sentences), and the pool statistics are reported.
func TestSourceDataset(t *testing.T) {
	spec := testenv.Data(t, "hotpotqa/distractor/validation-00000-of-00001.parquet")
	src, err := OpenSource(context.Background(), SourceConfig{Dataset: spec})
	if err != nil {
		t.Fatal(err)
	}
	r, _ := src.Open()
	docs := readSource(t, r)
	if src.Dataset == "" || src.Stats.Docs != len(docs) || len(docs) == 0 || src.Stats.Passages < len(docs) {
		t.Fatalf("dataset %q, stats %+v, %d documents", src.Dataset, src.Stats, len(docs))
	}
	ur, err := src.Units(UnitOptions{Sizes: []int{1}, ParentSize: 1}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	units := readSource(t, ur)
	sentences := 0
	for _, d := range src.pool {
		sentences += len(Sentences(d))
	}
	if len(units) != sentences {
		t.Fatalf("%d one-sentence units, want one per published sentence (%d)", len(units), sentences)
	}
}
