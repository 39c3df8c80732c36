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
