package reports

import (
	"bytes"
	"fmt"
	"io"
	"strings"
)

// Formats are the table formats WriteTables accepts (html is written by WriteHTML).
var Formats = []string{"md", "csv", "tex", "json"}

// WriteTables writes every table of the report in format (md, csv, tex or json). Markdown and LaTeX
// put the tables one after another; CSV writes one header and rows per table, tables separated by a
// blank line (every row names its table in the first column); JSON writes one array.
func (r *Report) WriteTables(w io.Writer, format string) error {
	var b bytes.Buffer
	switch format {
	case "md":
		fmt.Fprintf(&b, "# ragbench report\n\nRuns: %s. Generator: %s.\n\n", r.runNames(), r.generatorsText())
		for _, t := range r.Tables {
			if err := t.Markdown(&b); err != nil {
				return err
			}
		}
	case "csv":
		for i, t := range r.Tables {
			if i > 0 {
				b.WriteString("\n")
			}
			if err := t.CSV(&b); err != nil {
				return err
			}
		}
	case "tex":
		fmt.Fprintf(&b, "%% ragbench report: runs %s; generator %s.\n%% Needs \\usepackage{booktabs}.\n\n", r.runNames(), r.generatorsText())
		for _, t := range r.Tables {
			if err := t.LaTeX(&b); err != nil {
				return err
			}
		}
	case "json":
		if err := JSON(&b, r.Tables); err != nil {
			return err
		}
	default:
		return fmt.Errorf("unknown table format %q (want %s or html)", format, strings.Join(Formats, ", "))
	}
	_, err := w.Write(b.Bytes())
	return err
}

func (r *Report) runNames() string {
	var names []string
	for _, run := range r.Runs {
		names = append(names, run.Name)
	}
	return strings.Join(names, ", ")
}
