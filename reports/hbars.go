package reports

import (
	"image/color"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// hbars is one series of a grouped horizontal bar chart: bar i spans 0..Mean[i] at y = i + Offset
// (data units) with height Height, and a whisker from Lo[i] to Hi[i]. Drawing in data units keeps
// the bars of a group and their whiskers aligned whatever the figure's size.
type hbars struct {
	Mean, Lo, Hi   []float64
	Offset, Height float64
	Color          color.Color
	Whisker        draw.LineStyle
}

// Plot draws the bars and whiskers.
func (h *hbars) Plot(c draw.Canvas, plt *plot.Plot) {
	trX, trY := plt.Transforms(&c)
	for i, m := range h.Mean {
		y := float64(i) + h.Offset
		y0, y1 := trY(y-h.Height/2), trY(y+h.Height/2)
		x0, x1 := trX(0), trX(m)
		if x1 < x0 {
			x0, x1 = x1, x0
		}
		poly := c.ClipPolygonXY([]vg.Point{{X: x0, Y: y0}, {X: x1, Y: y0}, {X: x1, Y: y1}, {X: x0, Y: y1}})
		c.FillPolygon(h.Color, poly)
		if h.Lo != nil && h.Hi[i] > h.Lo[i] {
			ym := trY(y)
			cap := (y1 - y0) / 4
			c.StrokeLines(h.Whisker, c.ClipLinesX([]vg.Point{{X: trX(h.Lo[i]), Y: ym}, {X: trX(h.Hi[i]), Y: ym}})...)
			for _, x := range []float64{h.Lo[i], h.Hi[i]} {
				c.StrokeLine2(h.Whisker, trX(x), ym-cap, trX(x), ym+cap)
			}
		}
	}
}

// DataRange covers the bars and whiskers.
func (h *hbars) DataRange() (xmin, xmax, ymin, ymax float64) {
	xmin, xmax = 0, 0
	for i, m := range h.Mean {
		xmax = max(xmax, m)
		xmin = min(xmin, m)
		if h.Hi != nil {
			xmax = max(xmax, h.Hi[i])
		}
	}
	return xmin, xmax, -0.5, float64(len(h.Mean)) - 0.5
}

// Thumbnail draws the legend entry: a filled box, inset so that two entries' boxes do not touch.
func (h *hbars) Thumbnail(c *draw.Canvas) {
	in := (c.Max.Y - c.Min.Y) / 5
	pts := []vg.Point{{X: c.Min.X, Y: c.Min.Y + in}, {X: c.Max.X, Y: c.Min.Y + in}, {X: c.Max.X, Y: c.Max.Y - in}, {X: c.Min.X, Y: c.Max.Y - in}}
	c.FillPolygon(h.Color, c.ClipPolygonY(pts))
}
