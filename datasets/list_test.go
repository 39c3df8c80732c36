package datasets

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ragbench/ragbench/internal/testenv"
)

func TestWriteList(t *testing.T) {
	full := testenv.Data(t, "hotpotqa/fullwiki/validation-00000-of-00001.parquet")
	cache := t.TempDir()
	t.Setenv("RAGBENCH_CACHE", cache)
	t.Setenv("RAGBENCH_DATA", "")
	copyFile(t, full, filepath.Join(cache, "data", "hotpotqa", "distractor", "validation-00000-of-00001.parquet"))
	var b bytes.Buffer
	if err := WriteList(&b); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(b.String(), "\n")
	var hotpot [][]string // the fields of the hotpotqa-distractor rows
	for _, l := range lines {
		if f := strings.Fields(l); len(f) > 0 && f[0] == "hotpotqa-distractor" {
			hotpot = append(hotpot, f)
		}
	}
	cases := []struct {
		ok  bool
		why string
	}{
		{strings.HasPrefix(lines[0], "NAME"), "a header row first"},
		{len(hotpot) == 2, "one row per copy: the cache copy and the shared one"},
		{len(hotpot) == 2 && strings.Join(hotpot[0][2:5], " ") == "* "+SourceCache+" 500", "the cache copy is used (*) and has 500 rows"},
		{len(hotpot) == 2 && hotpot[1][2] == SourceShared, "the shared copy is not the one used"},
		{len(lines) > len(Names()), "every known name has a row"},
	}
	for _, c := range cases {
		if !c.ok {
			t.Errorf("%s; got\n%s", c.why, b.String())
		}
	}
}

func TestGoldOracleNone(t *testing.T) {
	m, p, err := GoldOracle(context.Background(), "", "hotpotqa")
	if m != nil || p != "" || err != nil {
		t.Errorf("no path and not NQ-open: %v %q %v, want nothing", m, p, err)
	}
	if _, _, err := GoldOracle(context.Background(), filepath.Join(t.TempDir(), "missing.jsonl"), ""); err == nil {
		t.Error("a missing oracle file: want an error")
	}
}

func TestWriteSummaryAndWarnings(t *testing.T) {
	cases := []struct {
		d        Dataset
		selected int
		want     string
		why      string
	}{
		{Dataset{Name: "x", Total: 5, Files: []string{"a.parquet"}}, 5, "dataset x: 5 rows from a.parquet\n", "everything selected: no selection note"},
		{Dataset{Name: "x", Total: 5, Files: []string{"a", "b", "c"}}, 2, "dataset x: 5 rows from a and 2 more file(s), 2 selected\n", "several files and a selection"},
		{Dataset{Name: "x"}, 0, "dataset x: 0 rows from (no files)\n", "no files"},
	}
	for _, c := range cases {
		var b bytes.Buffer
		c.d.WriteSummary(&b, c.selected)
		if b.String() != c.want {
			t.Errorf("%s: %q, want %q", c.why, b.String(), c.want)
		}
	}
	var b bytes.Buffer
	WriteWarnings(&b, nil)
	if b.Len() != 0 {
		t.Errorf("no warnings: wrote %q", b.String())
	}
	ws := make([]Warning, 12)
	WriteWarnings(&b, ws)
	lines := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
	if len(lines) != 12 || lines[0] != "12 warnings:" || lines[11] != "  ... and 2 more" {
		t.Errorf("12 warnings: %q; want the count, ten warnings and '... and 2 more'", lines)
	}
}

func TestLoadSelected(t *testing.T) {
	testenv.Data(t, "hotpotqa/distractor/validation-00000-of-00001.parquet")
	ctx := context.Background()
	ds, sel, err := LoadSelected(ctx, "hotpotqa@shared", LoadOptions{Limit: 3})
	if err != nil {
		t.Fatal(err)
	}
	if len(ds.Examples) != ds.Total || ds.Total != 100 || len(sel) != 3 || sel[0].ID != ds.Examples[0].ID {
		t.Errorf("limit 3: %d of %d loaded, %d selected; want the whole dataset and its first 3", len(ds.Examples), ds.Total, len(sel))
	}
	_, a, err := LoadSelected(ctx, "hotpotqa@shared", LoadOptions{Sample: 5, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	if b := Subset(ds.Examples, 0, 5, 1); len(a) != 5 || a[0].ID != b[0].ID {
		t.Errorf("sample 5: want Subset's sample of the whole dataset")
	}
}
