package datasets

import (
	"context"
	"fmt"
	"io"
	"text/tabwriter"
)

// WriteList writes a table of every known dataset name and each copy of it found (Locations), in
// resolution order: NAME, HUB (the Hub source 'datasets fetch' uses, or -), USED (* on the copy a bare
// name loads), SOURCE, ROWS (or why they are unreadable) and PATH. A name with no copy gets one row
// saying how to get it.
func WriteList(out io.Writer) error {
	w := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "NAME\tHUB\tUSED\tSOURCE\tROWS\tPATH")
	for _, n := range Names() {
		hub := "-"
		if src, _, ok := HubSourceOf(n); ok {
			hub = src.Repo + "/" + src.Dir + "/" + src.Split + "-*"
		}
		locs, err := Locations(n)
		if err != nil {
			return err
		}
		if len(locs) == 0 {
			how := "datasets import"
			if hub != "-" {
				how = "datasets fetch " + n
			}
			fmt.Fprintf(w, "%s\t%s\t\t-\t-\tnot found (see 'ragbench %s')\n", n, hub, how)
		}
		for i, l := range locs {
			rows := "?"
			if k, err := RowCount(l.Files); err != nil {
				rows = "unreadable: " + err.Error()
			} else if len(l.Files) > 0 {
				rows = fmt.Sprint(k)
			}
			used := ""
			if i == 0 {
				used = "*"
			}
			fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%s\n", n, hub, used, l.Source, rows, l.Dir)
		}
	}
	return w.Flush()
}

// GoldOracle returns the gold passages by question text (ReadGoldOracle) of the oracle file at path;
// with path "" and an NQ-open dataset (layout LayoutNQOpen), those of the file FindNQOracle finds. It
// returns the path read, "" and a nil map when there is none.
func GoldOracle(ctx context.Context, path, layout string) (map[string][]Passage, string, error) {
	if path == "" && layout == LayoutNQOpen {
		path = FindNQOracle()
	}
	if path == "" {
		return nil, "", nil
	}
	oracle, err := ReadGoldOracle(ctx, path)
	return oracle, path, err
}

// WriteSummary writes one line saying which files the dataset came from, its row count and, when
// selected differs from it, how many rows are selected: "dataset NAME: N rows from FILE[ and K more
// file(s)][, S selected]".
func (d *Dataset) WriteSummary(w io.Writer, selected int) {
	files := "(no files)"
	if len(d.Files) > 0 {
		files = d.Files[0]
		if len(d.Files) > 1 {
			files = fmt.Sprintf("%s and %d more file(s)", files, len(d.Files)-1)
		}
	}
	sel := ""
	if selected != d.Total {
		sel = fmt.Sprintf(", %d selected", selected)
	}
	fmt.Fprintf(w, "dataset %s: %d rows from %s%s\n", d.Name, d.Total, files, sel)
}

// WriteWarnings writes the count of load warnings and the first ten, one per line; nothing when
// there are none.
func WriteWarnings(w io.Writer, ws []Warning) {
	if len(ws) == 0 {
		return
	}
	fmt.Fprintf(w, "%d warnings:\n", len(ws))
	for i, x := range ws {
		if i == 10 {
			fmt.Fprintf(w, "  ... and %d more\n", len(ws)-10)
			break
		}
		fmt.Fprintf(w, "  %s\n", x)
	}
}

// LoadSelected loads the whole dataset of spec (so that ids outside the selection are known) and
// returns it with the examples opts.Limit or opts.Sample/Seed select (Subset).
func LoadSelected(ctx context.Context, spec string, opts LoadOptions) (*Dataset, []Example, error) {
	whole := opts
	whole.Limit, whole.Sample = 0, 0
	ds, err := Load(ctx, spec, whole)
	if err != nil {
		return nil, nil, err
	}
	return ds, Subset(ds.Examples, opts.Limit, opts.Sample, opts.Seed), nil
}
