package reports

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"html"
	"io"
	"strconv"
	"strings"
)

// Table is a rendered-format-independent table: optional column groups over columns, rows of
// values, and notes printed under it.
type Table struct {
	// ID is a stable name ("main", "efficiency", ...); Title a caption.
	ID    string `json:"id"`
	Title string `json:"title"`
	// Stub is the header of the first (row label) column.
	Stub    string   `json:"stub"`
	Groups  []Group  `json:"groups,omitempty"`
	Columns []Column `json:"columns"`
	Rows    []Row    `json:"rows"`
	Notes   []string `json:"notes,omitempty"`
}

// Group is a header spanning Span consecutive columns.
type Group struct {
	Label string `json:"label"`
	Span  int    `json:"span"`
}

// Column is one value column.
type Column struct {
	Key      string `json:"key"`
	Label    string `json:"label"`
	Decimals int    `json:"decimals"`
	// Paper marks a column of published numbers (or their difference from ours).
	Paper bool `json:"paper,omitempty"`
}

// Row is a labelled row of values, one per column.
type Row struct {
	Label  string  `json:"label"`
	Values []Value `json:"values"`
	// Section marks a heading row (a block of a stacked table: one model's rows); it has no values.
	Section bool `json:"section,omitempty"`
}

// Value is one table cell: a number with an optional interval and p-value, a text, or empty.
type Value struct {
	V     *float64 `json:"v,omitempty"`
	Lo    *float64 `json:"lo,omitempty"`
	Hi    *float64 `json:"hi,omitempty"`
	P     *float64 `json:"p,omitempty"`
	N     int      `json:"n,omitempty"`
	Text  string   `json:"text,omitempty"`
	Delta bool     `json:"delta,omitempty"`
	// Paper marks a published number or its difference from ours.
	Paper bool `json:"paper,omitempty"`
	// ShowN prints the number of questions behind the value.
	ShowN bool `json:"-"`
}

func num(v float64) Value { return Value{V: &v} }

func fromStat(s Stat, ok bool) Value {
	if !ok {
		return Value{}
	}
	v := Value{V: &s.Mean, N: s.N}
	if s.HasCI {
		lo, hi := s.Lo, s.Hi
		v.Lo, v.Hi = &lo, &hi
	}
	return v
}

// fmtNum formats x with dec decimals, without a minus sign on a value that rounds to zero.
func fmtNum(x float64, dec int) string {
	s := strconv.FormatFloat(x, 'f', dec, 64)
	if s == "-"+strconv.FormatFloat(0, 'f', dec, 64) {
		s = s[1:]
	}
	return s
}

// text renders v for the text formats.
func (v Value) text(dec int) string {
	if v.V == nil {
		if v.Text != "" {
			return v.Text
		}
		return "–"
	}
	s := fmtNum(*v.V, dec)
	if v.Delta && *v.V > 0 {
		s = "+" + s
	}
	if v.Lo != nil && v.Hi != nil {
		s += " [" + fmtNum(*v.Lo, dec) + ", " + fmtNum(*v.Hi, dec) + "]"
	}
	if v.P != nil {
		s += " (" + pText(*v.P) + ")"
	}
	if v.ShowN {
		s += " (n=" + strconv.Itoa(v.N) + ")"
	}
	return s
}

// pText is "p<0.001" or "p=0.012".
func pText(p float64) string {
	if p < 0.001 {
		return "p<0.001"
	}
	return "p=" + fmtP(p)
}

func fmtP(p float64) string {
	if p < 0.001 {
		return "<0.001"
	}
	return strconv.FormatFloat(p, 'f', 3, 64)
}

// flatLabels returns each column's label with its group prefixed (for formats without spans).
func (t *Table) flatLabels() []string {
	out := make([]string, len(t.Columns))
	gi, left := 0, 0
	if len(t.Groups) > 0 {
		left = t.Groups[0].Span
	}
	for i, c := range t.Columns {
		for len(t.Groups) > 0 && left == 0 && gi+1 < len(t.Groups) {
			gi++
			left = t.Groups[gi].Span
		}
		if len(t.Groups) > 0 && left > 0 && t.Groups[gi].Label != "" {
			out[i] = t.Groups[gi].Label + " " + c.Label
			left--
		} else {
			out[i] = c.Label
		}
	}
	return out
}

// Markdown writes t as a GitHub-flavoured markdown table with its title above and notes below.
func (t *Table) Markdown(w io.Writer) error {
	var b bytes.Buffer
	fmt.Fprintf(&b, "### %s\n\n", mdEscape(t.Title))
	labels := t.flatLabels()
	b.WriteString("| " + mdEscape(t.Stub))
	for _, l := range labels {
		b.WriteString(" | " + mdEscape(l))
	}
	b.WriteString(" |\n|---")
	for range labels {
		b.WriteString("|---:")
	}
	b.WriteString("|\n")
	for _, r := range t.Rows {
		if r.Section {
			b.WriteString("| **" + mdEscape(r.Label) + "**" + strings.Repeat(" |", len(labels)) + " |\n")
			continue
		}
		b.WriteString("| " + mdEscape(r.Label))
		for i, v := range r.Values {
			b.WriteString(" | " + mdEscape(v.text(t.Columns[i].Decimals)))
		}
		b.WriteString(" |\n")
	}
	if len(t.Notes) > 0 {
		b.WriteString("\n")
		for _, n := range t.Notes {
			b.WriteString("- " + mdEscape(n) + "\n")
		}
	}
	b.WriteString("\n")
	_, err := w.Write(b.Bytes())
	return err
}

func mdEscape(s string) string {
	s = strings.ReplaceAll(s, "|", "\\|")
	return strings.ReplaceAll(s, "\n", " ")
}

// CSV writes t as CSV: a header row, then one row per table row. A column with intervals gets
// "LABEL lo" and "LABEL hi" columns after it, one with p-values a "LABEL p" column, one with
// question counts (breakdowns) a "LABEL n" column; numbers are written in full precision, empty
// cells as "".
func (t *Table) CSV(w io.Writer) error {
	labels := t.flatLabels()
	hasCI := make([]bool, len(t.Columns))
	hasP := make([]bool, len(t.Columns))
	hasN := make([]bool, len(t.Columns))
	for _, r := range t.Rows {
		for i, v := range r.Values {
			hasCI[i] = hasCI[i] || v.Lo != nil
			hasP[i] = hasP[i] || v.P != nil
			hasN[i] = hasN[i] || v.ShowN
		}
	}
	cw := csv.NewWriter(w)
	head := []string{"table", t.Stub}
	for i, l := range labels {
		head = append(head, l)
		if hasCI[i] {
			head = append(head, l+" lo", l+" hi")
		}
		if hasP[i] {
			head = append(head, l+" p")
		}
		if hasN[i] {
			head = append(head, l+" n")
		}
	}
	if err := cw.Write(head); err != nil {
		return err
	}
	f := func(p *float64) string {
		if p == nil {
			return ""
		}
		return strconv.FormatFloat(*p, 'g', -1, 64)
	}
	width := len(head)
	for _, r := range t.Rows {
		rec := []string{t.ID, r.Label}
		if r.Section {
			// A block heading: the label alone; the rows under it are that block's.
			for len(rec) < width {
				rec = append(rec, "")
			}
			if err := cw.Write(rec); err != nil {
				return err
			}
			continue
		}
		for i, v := range r.Values {
			if v.V == nil {
				rec = append(rec, v.Text)
			} else {
				rec = append(rec, f(v.V))
			}
			if hasCI[i] {
				rec = append(rec, f(v.Lo), f(v.Hi))
			}
			if hasP[i] {
				rec = append(rec, f(v.P))
			}
			if hasN[i] {
				n := ""
				if v.ShowN {
					n = strconv.Itoa(v.N)
				}
				rec = append(rec, n)
			}
		}
		if err := cw.Write(rec); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

var texRepl = strings.NewReplacer(`\`, `\textbackslash{}`, "&", `\&`, "%", `\%`, "$", `\$`, "#", `\#`,
	"_", `\_`, "{", `\{`, "}", `\}`, "~", `\textasciitilde{}`, "^", `\textasciicircum{}`,
	"–", "--", "Δ", `$\Delta$`, "·", `\textperiodcentered{}`, "≥", `$\geq$`, ">", `$>$`, "<", `$<$`, "×", `$\times$`)

func texEscape(s string) string { return texRepl.Replace(s) }

// LaTeX writes t as a booktabs table environment (needs \usepackage{booktabs}).
func (t *Table) LaTeX(w io.Writer) error {
	var b bytes.Buffer
	b.WriteString("\\begin{table}[t]\n\\centering\n\\small\n")
	fmt.Fprintf(&b, "\\caption{%s}\n\\label{tab:%s}\n", texEscape(t.Title), strings.ReplaceAll(t.ID, "_", "-"))
	b.WriteString("\\begin{tabular}{l" + strings.Repeat("r", len(t.Columns)) + "}\n\\toprule\n")
	if len(t.Groups) > 0 {
		col := 2
		var rules []string
		for _, g := range t.Groups {
			b.WriteString(" & ")
			if g.Span > 1 {
				fmt.Fprintf(&b, "\\multicolumn{%d}{c}{%s}", g.Span, texEscape(g.Label))
			} else {
				b.WriteString(texEscape(g.Label))
			}
			if g.Label != "" {
				rules = append(rules, fmt.Sprintf("\\cmidrule(lr){%d-%d}", col, col+g.Span-1))
			}
			col += g.Span
		}
		b.WriteString(" \\\\\n")
		if len(rules) > 0 {
			b.WriteString(strings.Join(rules, " ") + "\n")
		}
	}
	b.WriteString(texEscape(t.Stub))
	for _, c := range t.Columns {
		b.WriteString(" & " + texEscape(c.Label))
	}
	b.WriteString(" \\\\\n\\midrule\n")
	for ri, r := range t.Rows {
		if r.Section {
			if ri > 0 {
				b.WriteString("\\midrule\n")
			}
			fmt.Fprintf(&b, "\\multicolumn{%d}{l}{\\textit{%s}} \\\\\n", len(t.Columns)+1, texEscape(r.Label))
			continue
		}
		b.WriteString(texEscape(r.Label))
		for i, v := range r.Values {
			s := v.text(t.Columns[i].Decimals)
			if v.V == nil {
				s = texEscape(s)
			} else {
				s = texNumber(s)
			}
			b.WriteString(" & " + s)
		}
		b.WriteString(" \\\\\n")
	}
	b.WriteString("\\bottomrule\n\\end{tabular}\n")
	for _, n := range t.Notes {
		b.WriteString("\n\\smallskip\\par\\footnotesize " + texEscape(n) + "\n")
	}
	b.WriteString("\\end{table}\n\n")
	_, err := w.Write(b.Bytes())
	return err
}

// texNumber turns a rendered number ("-1.2 [-3.0, 0.5] (p=<0.001)") into LaTeX.
func texNumber(s string) string {
	main, rest, _ := strings.Cut(s, " ")
	out := strings.ReplaceAll(main, "-", "$-$")
	if rest != "" {
		rest = strings.ReplaceAll(rest, "-", "$-$")
		rest = strings.ReplaceAll(rest, "<", "$<$")
		out += " {\\scriptsize " + rest + "}"
	}
	return out
}

// HTML writes t as an HTML table (a fragment, no page).
func (t *Table) HTML(w io.Writer) error {
	var b bytes.Buffer
	fmt.Fprintf(&b, "<table class=\"tbl\" id=\"tbl-%s\">\n<caption>%s</caption>\n<thead>\n", html.EscapeString(t.ID), html.EscapeString(t.Title))
	if len(t.Groups) > 0 {
		b.WriteString("<tr><th></th>")
		for _, g := range t.Groups {
			fmt.Fprintf(&b, "<th colspan=\"%d\">%s</th>", g.Span, html.EscapeString(g.Label))
		}
		b.WriteString("</tr>\n")
	}
	fmt.Fprintf(&b, "<tr><th>%s</th>", html.EscapeString(t.Stub))
	for _, c := range t.Columns {
		if c.Paper {
			fmt.Fprintf(&b, "<th class=\"paper\">%s</th>", html.EscapeString(c.Label))
		} else {
			fmt.Fprintf(&b, "<th>%s</th>", html.EscapeString(c.Label))
		}
	}
	b.WriteString("</tr>\n</thead>\n<tbody>\n")
	for _, r := range t.Rows {
		if r.Section {
			fmt.Fprintf(&b, "<tr class=\"section\"><th colspan=\"%d\">%s</th></tr>\n", len(t.Columns)+1, html.EscapeString(r.Label))
			continue
		}
		fmt.Fprintf(&b, "<tr><th>%s</th>", html.EscapeString(r.Label))
		for i, v := range r.Values {
			if t.Columns[i].Paper {
				fmt.Fprintf(&b, "<td class=\"paper\">%s</td>", html.EscapeString(v.text(t.Columns[i].Decimals)))
			} else {
				fmt.Fprintf(&b, "<td>%s</td>", html.EscapeString(v.text(t.Columns[i].Decimals)))
			}
		}
		b.WriteString("</tr>\n")
	}
	b.WriteString("</tbody>\n</table>\n")
	for _, n := range t.Notes {
		fmt.Fprintf(&b, "<p class=\"note\">%s</p>\n", html.EscapeString(n))
	}
	_, err := w.Write(b.Bytes())
	return err
}

// JSON writes the tables as one indented JSON array.
func JSON(w io.Writer, tables []*Table) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(tables)
}
