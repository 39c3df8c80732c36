package reports

import (
	"bytes"
	"fmt"
	"image/color"
	"math"
	"sort"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgsvg"
)

// Figure is one plot file: one or more panels side by side.
type Figure struct {
	// Name is the file name without extension ("ablation-hotpotqa-offline-reader-no-llm").
	Name string
	// Title is the figure's caption (the panels carry their own titles).
	Title  string
	Panels []*plot.Plot
	// Width and Height of one panel.
	Width, Height vg.Length
}

// Render draws the figure as "svg" or "png".
func (f *Figure) Render(format string) ([]byte, error) {
	w := f.Width * vg.Length(len(f.Panels))
	var buf bytes.Buffer
	draw1 := func(c vg.CanvasSizer) {
		dc := draw.New(c)
		if len(f.Panels) == 1 {
			f.Panels[0].Draw(dc)
			return
		}
		tiles := draw.Tiles{Rows: 1, Cols: len(f.Panels), PadX: vg.Millimeter * 4, PadTop: vg.Millimeter, PadBottom: vg.Millimeter, PadLeft: vg.Millimeter, PadRight: vg.Millimeter}
		cs := plot.Align([][]*plot.Plot{f.Panels}, tiles, dc)
		for i, p := range f.Panels {
			p.Draw(cs[0][i])
		}
	}
	switch format {
	case "svg":
		c := vgsvg.New(w, f.Height)
		draw1(c)
		if _, err := c.WriteTo(&buf); err != nil {
			return nil, err
		}
	case "png":
		c := vgimg.NewWith(vgimg.UseWH(w, f.Height), vgimg.UseDPI(144), vgimg.UseBackgroundColor(color.White))
		draw1(c)
		if _, err := (vgimg.PngCanvas{Canvas: c}).WriteTo(&buf); err != nil {
			return nil, err
		}
	default:
		return nil, fmt.Errorf("plot format %q: want svg or png", format)
	}
	return buf.Bytes(), nil
}

func slug(s string) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(s) {
		if (r >= 'a' && r <= 'z') || (r >= '0' && r <= '9') || r == '.' {
			b.WriteRune(r)
			dash = false
		} else if !dash && b.Len() > 0 {
			b.WriteByte('-')
			dash = true
		}
	}
	return strings.TrimSuffix(b.String(), "-")
}

func newPlot(title, xlabel, ylabel string) *plot.Plot {
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = xlabel
	p.Y.Label.Text = ylabel
	p.Legend.Top = true
	p.Add(plotter.NewGrid())
	return p
}

// headroom raises the y axis so that the legend (top right) does not cover data.
func headroom(p *plot.Plot) { headroomFor(p, 2) }

// headroomFor raises the y axis so that a legend of n entries (top) stays above the data.
func headroomFor(p *plot.Plot, n int) {
	f := 1.15 + 0.1*float64(n)
	if p.Y.Max > p.Y.Min {
		p.Y.Max = p.Y.Min + f*(p.Y.Max-p.Y.Min)
	} else {
		p.Y.Max = p.Y.Min + 1
	}
}

// errPoints are bars' tops with their interval, for YErrorBars.
type errPoints struct {
	plotter.XYs
	plotter.YErrors
}

// Figures builds the report's plots: ablation bars with interval whiskers, sweep lines, accuracy
// against cost and the entity-frequency breakdown, for every generator and dataset. Intervals come
// from ci (a 95% bootstrap by default when the report computed none).
func (r *Report) Figures() ([]*Figure, error) {
	ci := r.opts.CI
	if ci.Resamples == 0 {
		ci = CIOptions{Resamples: 1000, Level: 0.95, Seed: ci.Seed}
	}
	sum := r.Summary
	if r.opts.CI.Resamples == 0 {
		sum = Summarize(nil, nil, []string{"em", "f1", "acc", "label_acc", "ret"}, ci, r.opts.Prices)
	}
	var figs []*Figure
	for _, g := range r.Groups {
		gen := ShortGenerator(g.Generator)
		name := func(kind string) string {
			if g.Model != "" {
				return kind + "-" + slug(g.Dataset) + "-" + slug(gen) + "-" + slug(g.Model)
			}
			return kind + "-" + slug(g.Dataset) + "-" + slug(gen)
		}
		accKey := "em"
		accLabel := "EM (%)"
		if isPubMed(g) {
			accKey, accLabel = "acc", "Accuracy (%)"
			for _, c := range r.cell[g] {
				if _, ok := r.Summary.Get(c, "label_acc"); ok {
					accKey = "label_acc"
				}
			}
		}
		// Ablation bars: the paper's ablation rows (Table 3) when cells name them, else the rows of
		// methods with variants, else every row: horizontal bars, EM and F1 side by side per row,
		// the row names on the y axis (first row on top) and the legend in a band above the bars.
		rows, labels := r.paperRows("Table 3")
		kind := "ablation"
		if len(rows) == 0 {
			rows, labels = r.ablationRows(), nil
		}
		if len(rows) == 0 {
			rows, kind = r.rows, "methods"
		}
		var cells []*Cell
		for _, n := range rows {
			if c := r.cell[g][n]; c != nil {
				cells = append(cells, c)
			}
		}
		if len(cells) > 0 {
			keys := []string{accKey, "f1"}
			klabels := []string{accLabel, "F1 (%)"}
			if isPubMed(g) {
				keys, klabels = keys[:1], klabels[:1]
			}
			n := len(cells)
			fig := &Figure{Name: name(kind), Title: fmt.Sprintf("%s with %g%% bootstrap intervals — %s (generator: %s)", strings.Join(klabels, ", "), 100*ci.Level, g.Dataset, gen),
				Width: 6.5 * vg.Inch, Height: vg.Length(1.3+0.42*float64(n+1)) * vg.Inch}
			p := newPlot(fmt.Sprintf("%s — %s\ngenerator: %s", strings.Join(klabels, " and "), g.Dataset, gen), "score (%), whiskers: "+fmt.Sprintf("%g%%", 100*ci.Level)+" bootstrap interval", "")
			names := make([]string, n)
			height := 0.8 / float64(len(keys))
			for i, k := range keys {
				hb := &hbars{Mean: make([]float64, n), Lo: make([]float64, n), Hi: make([]float64, n), Height: height * 0.92,
					Offset: height * (float64(len(keys)-1)/2 - float64(i)), Color: barColor(i), Whisker: draw.LineStyle{Color: color.Black, Width: vg.Points(0.8)}}
				for j, c := range cells {
					at := n - 1 - j // the first row on top
					st, _ := sum.Get(c, k)
					hb.Mean[at], hb.Lo[at], hb.Hi[at] = st.Mean, st.Lo, st.Hi
					label := c.Row
					if l, ok := labels[c.Row]; ok {
						label = l
					}
					names[at] = label
				}
				p.Add(hb)
				p.Legend.Add(Metrics[k].Label+" (mean)", hb)
			}
			p.Legend.Add(fmt.Sprintf("%g%% CI", 100*ci.Level), whisker{draw.LineStyle{Color: color.Black, Width: vg.Points(0.8)}})
			p.NominalY(names...)
			p.X.Min = 0
			p.X.Max *= 1.06
			// A band above the first row holds the legend, so it covers no bar.
			p.Y.Min, p.Y.Max = -0.5, float64(n)-0.5+1.6
			p.Legend.Top = true
			fig.Panels = []*plot.Plot{p}
			figs = append(figs, fig)
		}
		// Sweeps: a method's cells that differ in one numeric setting.
		for _, sw := range r.sweeps(g) {
			fig := &Figure{Name: name("sweep") + "-" + slug(sw.method) + "-" + slug(sw.key), Title: fmt.Sprintf("%s: %s sweep — %s (generator: %s)", sw.method, sw.key, g.Dataset, gen), Width: 4.5 * vg.Inch, Height: 3.4 * vg.Inch}
			left := newPlot(fmt.Sprintf("%s vs %s — %s\ngenerator: %s", sw.method, sw.key, g.Dataset, gen), sw.key, "score (%)")
			right := newPlot(fmt.Sprintf("%s vs %s — %s\ngenerator: %s", sw.method, sw.key, g.Dataset, gen), sw.key, "#Ret (retrievals per question)")
			keys := []string{accKey, "f1", "ret"}
			if isPubMed(g) {
				keys = []string{accKey, "ret"}
			}
			entries := map[*plot.Plot]int{}
			for i, k := range keys {
				xys := make(plotter.XYs, len(sw.cells))
				var lo, hi plotter.XYs
				for j, c := range sw.cells {
					st, _ := sum.Get(c, k)
					xys[j] = plotter.XY{X: sw.xs[j], Y: st.Mean}
					if st.HasCI {
						lo = append(lo, plotter.XY{X: sw.xs[j], Y: st.Lo})
						hi = append(hi, plotter.XY{X: sw.xs[j], Y: st.Hi})
					}
				}
				target := left
				if k == "ret" {
					target = right
				}
				col := barColor(i)
				// The 95% interval as a band under the line.
				if len(lo) == len(sw.cells) {
					ring := append(plotter.XYs{}, lo...)
					for j := len(hi) - 1; j >= 0; j-- {
						ring = append(ring, hi[j])
					}
					band, err := plotter.NewPolygon(ring)
					if err != nil {
						return nil, err
					}
					r8, g8, b8, _ := col.RGBA()
					band.Color = color.NRGBA{uint8(r8 >> 8), uint8(g8 >> 8), uint8(b8 >> 8), 60}
					band.LineStyle.Width = 0
					target.Add(band)
				}
				l, pts, err := plotter.NewLinePoints(xys)
				if err != nil {
					return nil, err
				}
				l.Color, pts.Color = col, col
				pts.Shape = plotutil.Shape(i)
				target.Add(l, pts)
				target.Legend.Add(fmt.Sprintf("%s (band: %g%% CI)", Metrics[k].Label, 100*ci.Level), l, pts)
				entries[target]++
				// The published points of the sweep's rows, where the cells name them.
				var pub plotter.XYs
				src := ""
				for j, c := range sw.cells {
					if pr, _, ok := r.paperRow(c, []string{"Sensitivity", "Table"}); ok {
						if v, ok := pr.value(k); ok {
							pub = append(pub, plotter.XY{X: sw.xs[j], Y: v})
							src = pr.Paper + ", " + pr.Model
						}
					}
				}
				if len(pub) > 0 {
					sc, err := plotter.NewScatter(pub)
					if err != nil {
						return nil, err
					}
					sc.Color = col
					sc.Shape = draw.CrossGlyph{}
					sc.Radius = vg.Points(5)
					target.Add(sc)
					target.Legend.Add(fmt.Sprintf("%s published (%s)", Metrics[k].Label, src), sc)
					entries[target]++
				}
			}
			for _, p := range []*plot.Plot{left, right} {
				p.Legend.Top = true
			}
			if sw.log {
				for _, p := range []*plot.Plot{left, right} {
					p.X.Scale = plot.LogScale{}
					p.X.Tick.Marker = plot.LogTicks{Prec: -1}
				}
			}
			headroomFor(left, entries[left])
			headroomFor(right, entries[right])
			fig.Panels = []*plot.Plot{left, right}
			figs = append(figs, fig)
		}
		// Accuracy against cost: one point per row.
		{
			// Cost is #Tok, or #Call when no cell reports tokens (a generator that counts none).
			costKey, costWhat, costAxis := "tok", "generated tokens", "#Tok (generated tokens per question)"
			anyTok := false
			for _, c := range r.cell[g] {
				if st, ok := sum.Get(c, "tok"); ok && st.Mean > 0 {
					anyTok = true
				}
			}
			if !anyTok {
				costKey, costWhat, costAxis = "call", "generator calls", "#Call (generator calls per question)"
			}
			p := newPlot(fmt.Sprintf("%s vs %s — %s\ngenerator: %s", Metrics[accKey].Label, costWhat, g.Dataset, gen), costAxis, accLabel)
			n := 0
			for i, name := range r.rows {
				c := r.cell[g][name]
				if c == nil {
					continue
				}
				a, _ := sum.Get(c, accKey)
				t, _ := sum.Get(c, costKey)
				sc, err := plotter.NewScatter(plotter.XYs{{X: t.Mean, Y: a.Mean}})
				if err != nil {
					return nil, err
				}
				sc.Color = plotutil.Color(i)
				sc.Shape = plotutil.Shape(i)
				sc.Radius = vg.Points(4)
				p.Add(sc)
				p.Legend.Add(name, sc)
				n++
			}
			if n > 0 {
				headroomFor(p, n)
				pad := 0.06 * (p.X.Max - p.X.Min)
				if pad == 0 {
					pad = 1
				}
				p.X.Min, p.X.Max = p.X.Min-pad, p.X.Max+pad
				figs = append(figs, &Figure{Name: name("cost"), Title: fmt.Sprintf("Accuracy against cost — %s (generator: %s)", g.Dataset, gen), Panels: []*plot.Plot{p}, Width: 5.5 * vg.Inch, Height: 4 * vg.Inch})
			}
		}
		// Entity-frequency breakdown.
		{
			p := newPlot(fmt.Sprintf("EM by entity frequency — %s\ngenerator: %s", g.Dataset, gen), "entity frequency in the corpus (QuCo-RAG bins)", "EM (%)")
			bins := freqOrder()
			n := 0
			for i, name := range r.rows {
				c := r.cell[g][name]
				if c == nil {
					continue
				}
				b := BreakdownBy(c, Metrics["em"], r.freqKey(c), bins)
				if len(b.Keys) == 0 {
					continue
				}
				var xys plotter.XYs
				for j, k := range bins {
					if b.Count[k] > 0 {
						xys = append(xys, plotter.XY{X: float64(j), Y: b.Mean[k]})
					}
				}
				l, pts, err := plotter.NewLinePoints(xys)
				if err != nil {
					return nil, err
				}
				l.Color, pts.Color = plotutil.Color(i), plotutil.Color(i)
				pts.Shape = plotutil.Shape(i)
				p.Add(l, pts)
				p.Legend.Add(name, l, pts)
				n++
			}
			if n > 0 {
				p.NominalX(bins...)
				p.X.Min, p.X.Max = -0.5, float64(len(bins))-0.5
				// Room above 100% for the legend, one band per entry, so that it covers no line.
				p.Y.Min, p.Y.Max = 0, 108+11*float64(n)
				p.Y.Tick.Marker = plot.ConstantTicks([]plot.Tick{{Value: 0, Label: "0"}, {Value: 20, Label: "20"}, {Value: 40, Label: "40"}, {Value: 60, Label: "60"}, {Value: 80, Label: "80"}, {Value: 100, Label: "100"}})
				figs = append(figs, &Figure{Name: name("entity-freq"), Title: fmt.Sprintf("EM by entity-frequency bin — %s (generator: %s)", g.Dataset, gen), Panels: []*plot.Plot{p}, Width: 6 * vg.Inch, Height: 4 * vg.Inch})
			}
		}
	}
	return figs, nil
}

// barColor is a colour-blind-safe palette (Okabe-Ito blue, orange, green).
func barColor(i int) color.Color {
	pal := []color.Color{color.RGBA{0, 114, 178, 255}, color.RGBA{230, 159, 0, 255}, color.RGBA{0, 158, 115, 255}}
	return pal[i%len(pal)]
}

// whisker is the legend thumbnail of interval whiskers: a vertical line.
type whisker struct{ style draw.LineStyle }

// Thumbnail draws the legend entry.
func (w whisker) Thumbnail(c *draw.Canvas) {
	x := (c.Min.X + c.Max.X) / 2
	c.StrokeLine2(w.style, x, c.Min.Y, x, c.Max.Y)
}

type sweep struct {
	method, key string
	cells       []*Cell
	xs          []float64
	log         bool
}

// sweeps finds, in group g, each method whose cells with one setting key all have numeric values
// (at least two of them): the default cell is not part of the line (its value is unknown here).
func (r *Report) sweeps(g GroupKey) []sweep {
	by := map[[2]string][]*Cell{}
	for _, name := range r.rows {
		c := r.cell[g][name]
		if c == nil || len(c.Settings) != 1 {
			continue
		}
		m, s := ParseCell(name)
		for k, v := range s {
			if _, err := strconv.ParseFloat(v, 64); err == nil {
				by[[2]string{m, k}] = append(by[[2]string{m, k}], c)
			}
		}
	}
	var out []sweep
	for mk, cells := range by {
		if len(cells) < 2 {
			continue
		}
		sw := sweep{method: mk[0], key: mk[1]}
		sort.SliceStable(cells, func(i, j int) bool {
			_, a := ParseCell(cells[i].Name)
			_, b := ParseCell(cells[j].Name)
			x, _ := strconv.ParseFloat(a[mk[1]], 64)
			y, _ := strconv.ParseFloat(b[mk[1]], 64)
			return x < y
		})
		sw.cells = cells
		min, max := math.Inf(1), math.Inf(-1)
		for _, c := range cells {
			_, s := ParseCell(c.Name)
			x, _ := strconv.ParseFloat(s[mk[1]], 64)
			sw.xs = append(sw.xs, x)
			min, max = math.Min(min, x), math.Max(max, x)
		}
		sw.log = min > 0 && max/min >= 20
		out = append(out, sw)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].method != out[j].method {
			return out[i].method < out[j].method
		}
		return out[i].key < out[j].key
	})
	return append(out, r.paperSweeps(g)...)
}

// paperSweeps are the published sensitivity sweeps the cells of group g reproduce when the config
// gives each point its own entry (label quco-window-50 naming "QuCo-RAG window=50"): the cells that
// name rows of one sensitivity table whose names carry one numeric setting, as a sweep of it.
func (r *Report) paperSweeps(g GroupKey) []sweep {
	var out []sweep
	for _, st := range r.sensitivityTables() {
		type point struct {
			x float64
			c *Cell
		}
		var pts []point
		method, key := "", ""
		ok := true
		for _, name := range r.rows {
			c := r.cell[g][name]
			if c == nil || len(c.Settings) > 0 {
				continue // a swept cell is on its own sweep already
			}
			for _, ref := range c.Paper {
				if ref.Table != st {
					continue
				}
				m, rest, _ := strings.Cut(ref.Method, " ")
				k, v, found := strings.Cut(rest, "=")
				x, err := strconv.ParseFloat(v, 64)
				if !found || err != nil || strings.ContainsAny(rest, " ,") {
					ok = false
					break
				}
				if key != "" && (k != key || m != method) {
					ok = false
				}
				method, key = m, k
				pts = append(pts, point{x, c})
				break
			}
		}
		if !ok || len(pts) < 2 {
			continue
		}
		sort.SliceStable(pts, func(i, j int) bool { return pts[i].x < pts[j].x })
		sw := sweep{method: method, key: key}
		for _, p := range pts {
			sw.cells = append(sw.cells, p.c)
			sw.xs = append(sw.xs, p.x)
		}
		sw.log = sw.xs[0] > 0 && sw.xs[len(sw.xs)-1]/sw.xs[0] >= 20
		out = append(out, sw)
	}
	return out
}
