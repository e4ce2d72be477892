package figures

// The renderer's marks, glyphs and axes (used by chart.go's render).

import (
	"hash/fnv"
	"image/color"
	"math"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// panelSize gives the figure width for n panels in cols columns and a height
// of rowHeight per row.
func panelSize(n, cols int, rowHeight vg.Length) (vg.Length, vg.Length) {
	w := doubleColumn
	if n == 1 {
		w = singleColumn
	}
	rows := (n + cols - 1) / cols
	return w, vg.Length(rows)*rowHeight + vg.Points(40)
}

// starGlyph draws a five-pointed star.
type starGlyph struct{}

func (starGlyph) DrawGlyph(c *draw.Canvas, sty draw.GlyphStyle, pt vg.Point) {
	var pts []vg.Point
	for i := range 10 {
		r := sty.Radius
		if i%2 == 1 {
			r *= 0.45
		}
		a := math.Pi/2 + float64(i)*math.Pi/5
		pts = append(pts, vg.Point{X: pt.X + r*vg.Length(math.Cos(a)), Y: pt.Y + r*vg.Length(math.Sin(a))})
	}
	c.FillPolygon(sty.Color, pts)
}

// zeroTicks labels round steps that always include 0, the reference line
// of a difference plot (gonum's default ticks may skip it).
type zeroTicks struct{}

func (zeroTicks) Ticks(min, max float64) []plot.Tick {
	step := zeroStep(min, max)
	var ts []plot.Tick
	for v := math.Ceil(min/step) * step; v <= max; v += step {
		if v == 0 {
			v = 0 // not -0
		}
		ts = append(ts, plot.Tick{Value: v, Label: strconv.FormatFloat(v, 'f', -1, 64)})
	}
	return ts
}

// zeroStep is zeroTicks' step: the smallest round step giving at most 7
// ticks over [min, max].
func zeroStep(min, max float64) float64 {
	step := 1.0
	for _, s := range []float64{1, 2, 5, 10, 20, 25, 50, 100} {
		step = s
		if (max-min)/s <= 7 {
			break
		}
	}
	return step
}

func intTicks(from, to int) plot.Ticker {
	var ts plot.ConstantTicks
	step := 1
	if to-from > 12 {
		step = (to - from + 11) / 12
	}
	for t := from; t <= to; t += step {
		ts = append(ts, plot.Tick{Value: float64(t), Label: strconv.Itoa(t)})
	}
	return ts
}

// addSeries draws a computed line with dots and error bars.
func addSeries(f *figure, p *plot.Plot, name string, clr color.Color, xs, ys []float64, errs *intervals) error {
	if len(xs) == 0 {
		return nil
	}
	ln, err := line(xs, ys, clr, vg.Points(1.2))
	if err != nil {
		return err
	}
	dots, err := scatter(xs, ys, clr, draw.CircleGlyph{}, vg.Points(2.2))
	if err != nil {
		return err
	}
	eb, err := errs.plotters()
	if err != nil {
		return err
	}
	for _, e := range eb {
		e.(*plotter.YErrorBars).LineStyle.Color = clr
	}
	p.Add(ln, dots)
	p.Add(eb...)
	f.addLegend(name+" (computed)", ln, dots)
	return nil
}

// hollowDiamond marks reported-only points.
type hollowDiamond struct{}

func (hollowDiamond) DrawGlyph(c *draw.Canvas, sty draw.GlyphStyle, pt vg.Point) {
	r := sty.Radius
	pts := []vg.Point{{X: pt.X, Y: pt.Y + r}, {X: pt.X + r, Y: pt.Y}, {X: pt.X, Y: pt.Y - r}, {X: pt.X - r, Y: pt.Y}}
	c.FillPolygon(color.White, pts)
	c.StrokeLines(draw.LineStyle{Color: sty.Color, Width: vg.Points(1.2)}, append(pts, pts[0]))
}

func roleColor(i int) color.Color {
	cs := []color.Color{orange, skyBlue, green, purple, yellow, blue}
	return cs[i%len(cs)]
}

// jitter spreads task points across a box's width, the same way on every
// run (a hash of the task, so the offset does not follow the value order).
func jitter(task string) float64 {
	h := fnv.New32a()
	h.Write([]byte(task))
	return 0.3 * (float64(h.Sum32()%1000)/999 - 0.5)
}
