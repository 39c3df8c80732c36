package datasets

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestImportRejectsWhatLoadingRejects: duplicate ids and empty questions fail the import with the
// row named, instead of producing a file that loading then refuses; the output is 0644.
func TestImportRejectsWhatLoadingRejects(t *testing.T) {
	hotpot := func(rows ...string) string { return "[" + strings.Join(rows, ",") + "]" }
	row := func(id, q string) string {
		return `{"_id":"` + id + `","question":"` + q + `","answer":"a","type":"bridge","level":"easy","supporting_facts":[],"context":[]}`
	}
	cases := []struct {
		name, format, in, want string
	}{
		{"duplicate HotpotQA id", FormatHotpotQA, hotpot(row("x1", "Q1?"), row("x2", "Q2?"), row("x1", "Q3?")), `row 3: id "x1" is also the id of row 1`},
		{"empty HotpotQA question", FormatHotpotQA, hotpot(row("x1", "Q1?"), row("x2", "  ")), "row 2 (id \"x2\"): field question is empty"},
		{"empty NQ-open question", FormatNQOpen, `{"question":"who?","answer":["a"]}` + "\n" + `{"question":"","answer":["b"]}` + "\n", "row 2"},
		{"valid file imports", FormatHotpotQA, hotpot(row("x1", "Q1?"), row("x2", "Q2?")), ""},
	}
	for _, c := range cases {
		out := filepath.Join(t.TempDir(), "out.parquet")
		_, err := Import(context.Background(), c.format, strings.NewReader(c.in), "in.json", out, ImportOptions{})
		if c.want == "" {
			if err != nil {
				t.Errorf("%s: %v", c.name, err)
				continue
			}
			if fi, err := os.Stat(out); err != nil || fi.Mode().Perm() != 0o644 {
				t.Errorf("%s: output mode %v (%v), want 0644", c.name, fi.Mode().Perm(), err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err %v, want it to contain %q", c.name, err, c.want)
		}
		if _, serr := os.Stat(out); serr == nil {
			t.Errorf("%s: a rejected import left %s", c.name, out)
		}
	}
}
