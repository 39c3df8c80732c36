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
