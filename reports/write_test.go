package reports

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

func TestWrite(t *testing.T) {
	r := fixtureReport(t, Options{})
	var want bytes.Buffer
	if err := r.WriteTables(&want, "md"); err != nil {
		t.Fatal(err)
	}
	var got bytes.Buffer
	if w, err := r.Write(&got, "md", "", false); err != nil || w.File != "" || !bytes.Equal(got.Bytes(), want.Bytes()) {
		t.Errorf("to the writer: %+v, %v; want the WriteTables bytes and no file", w, err)
	}
	figs, err := r.Figures()
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		format  string
		noPlots bool
		file    string
		plots   int
		why     string
	}{
		{"md", false, "summary.md", 2 * len(figs), "tables and an SVG and a PNG per figure"},
		{"csv", true, "summary.csv", 0, "--no-plots writes the tables only"},
		{"html", false, "report.html", 2 * len(figs), "html is report.html, plots beside it"},
	}
	for _, c := range cases {
		dir := filepath.Join(t.TempDir(), "out")
		w, err := r.Write(nil, c.format, dir, c.noPlots)
		if err != nil || w.File != c.file || w.Plots != c.plots {
			t.Errorf("%s: %+v, %v; want %s and %d plots (%s)", c.format, w, err, c.file, c.plots, c.why)
			continue
		}
		if _, err := os.Stat(filepath.Join(dir, c.file)); err != nil {
			t.Errorf("%s: %v (%s)", c.format, err, c.why)
		}
		plots, _ := filepath.Glob(filepath.Join(dir, "plots", "*"))
		if len(plots) != c.plots {
			t.Errorf("%s: %d plot files on disk, want %d (%s)", c.format, len(plots), c.plots, c.why)
		}
	}
}
