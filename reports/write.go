package reports

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/ragbench/ragbench/internal/atomicfile"
)

// LoadRuns loads run directories in order (see LoadRun).
func LoadRuns(ctx context.Context, dirs []string) ([]*Run, error) {
	var runs []*Run
	for _, dir := range dirs {
		run, err := LoadRun(ctx, dir)
		if err != nil {
			return nil, err
		}
		runs = append(runs, run)
	}
	return runs, nil
}

// Written is what Write produced.
type Written struct {
	// File is the report's file name in the directory (summary.FORMAT or report.html); "" when the
	// report went to the writer.
	File string
	// Plots counts the plot files written (an SVG and a PNG per figure).
	Plots int
}

// Write renders the report in format — md, csv, tex or json (WriteTables), or html (WriteHTML: the
// whole page with its figures). With dir == "" it goes to w. Otherwise it goes into dir (created) as
// summary.FORMAT, or report.html, and unless noPlots each figure as dir/plots/NAME.svg and .png;
// every file is written atomically.
func (r *Report) Write(w io.Writer, format, dir string, noPlots bool) (Written, error) {
	var figs []*Figure
	var err error
	if format == "html" || (dir != "" && !noPlots) {
		if figs, err = r.Figures(); err != nil {
			return Written{}, err
		}
	}
	var b bytes.Buffer
	if format == "html" {
		err = r.WriteHTML(&b, figs)
	} else {
		err = r.WriteTables(&b, format)
	}
	if err != nil {
		return Written{}, err
	}
	if dir == "" {
		_, err = w.Write(b.Bytes())
		return Written{}, err
	}
	out := Written{File: "summary." + format}
	if format == "html" {
		out.File = "report.html"
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return out, err
	}
	if err := atomicfile.WriteFile(filepath.Join(dir, out.File), b.Bytes(), 0o644); err != nil {
		return out, err
	}
	if noPlots {
		return out, nil
	}
	if err := os.MkdirAll(filepath.Join(dir, "plots"), 0o755); err != nil {
		return out, err
	}
	for _, f := range figs {
		for _, ext := range []string{"svg", "png"} {
			data, err := f.Render(ext)
			if err != nil {
				return out, fmt.Errorf("plot %s: %w", f.Name, err)
			}
			if err := atomicfile.WriteFile(filepath.Join(dir, "plots", f.Name+"."+ext), data, 0o644); err != nil {
				return out, err
			}
			out.Plots++
		}
	}
	return out, nil
}
