package figures

import (
	"image/color"
	"math"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// bars draws rectangles centred at data x positions with a width in data
// units, so grouped bars and their error bars share one coordinate system
// (gonum's BarChart offsets bars in page units, which error bars cannot follow).
type bars struct {
	xs, ys []float64
	width  float64
	fill   color.Color
	line   draw.LineStyle
}

func newBars(fill color.Color, width float64) *bars {
	return &bars{width: width, fill: fill, line: draw.LineStyle{Color: black, Width: vg.Points(0.4)}}
}

func (b *bars) add(x, y float64) { b.xs, b.ys = append(b.xs, x), append(b.ys, y) }

func (b *bars) Plot(c draw.Canvas, p *plot.Plot) {
	trX, trY := p.Transforms(&c)
	for i := range b.xs {
		x0, x1 := trX(b.xs[i]-b.width/2), trX(b.xs[i]+b.width/2)
		y0, y1 := trY(0), trY(b.ys[i])
		pts := []vg.Point{{X: x0, Y: y0}, {X: x0, Y: y1}, {X: x1, Y: y1}, {X: x1, Y: y0}}
		c.FillPolygon(b.fill, c.ClipPolygonY(pts))
		c.StrokeLines(b.line, c.ClipLinesY(append(pts, pts[0]))...)
	}
}

func (b *bars) DataRange() (xmin, xmax, ymin, ymax float64) {
	xmin, xmax, ymin, ymax = math.Inf(1), math.Inf(-1), 0, 0
	for i := range b.xs {
		xmin = math.Min(xmin, b.xs[i]-b.width/2)
		xmax = math.Max(xmax, b.xs[i]+b.width/2)
		ymin = math.Min(ymin, b.ys[i])
		ymax = math.Max(ymax, b.ys[i])
	}
	return
}

func (b *bars) Thumbnail(c *draw.Canvas) {
	pts := []vg.Point{c.Min, {X: c.Min.X, Y: c.Max.Y}, c.Max, {X: c.Max.X, Y: c.Min.Y}}
	c.FillPolygon(b.fill, pts)
	c.StrokeLines(b.line, append(pts, pts[0]))
}

// intervals are vertical (or horizontal) error bars at data positions.
type intervals struct {
	xs, ys, lo, hi []float64
}

func (iv *intervals) add(x, y, lo, hi float64) {
	if math.IsNaN(lo) || math.IsNaN(hi) {
		return
	}
	iv.xs, iv.ys = append(iv.xs, x), append(iv.ys, y)
	iv.lo, iv.hi = append(iv.lo, lo), append(iv.hi, hi)
}

func (iv *intervals) Len() int                    { return len(iv.xs) }
func (iv *intervals) XY(i int) (float64, float64) { return iv.xs[i], iv.ys[i] }

// YError and XError return distances below and above the point.
func (iv *intervals) YError(i int) (float64, float64) {
	return iv.ys[i] - iv.lo[i], iv.hi[i] - iv.ys[i]
}

type xIntervals struct{ *intervals }

func (iv xIntervals) XError(i int) (float64, float64) {
	return iv.xs[i] - iv.lo[i], iv.hi[i] - iv.xs[i]
}

func (iv *intervals) plotters() ([]plot.Plotter, error) {
	if iv.Len() == 0 {
		return nil, nil
	}
	eb, err := plotter.NewYErrorBars(iv)
	if err != nil {
		return nil, err
	}
	eb.LineStyle.Width = vg.Points(0.6)
	eb.CapWidth = vg.Points(3)
	return []plot.Plotter{eb}, nil
}

// scatter draws points with one glyph style.
func scatter(xs, ys []float64, clr color.Color, shape draw.GlyphDrawer, radius vg.Length) (*plotter.Scatter, error) {
	xy := make(plotter.XYs, len(xs))
	for i := range xs {
		xy[i].X, xy[i].Y = xs[i], ys[i]
	}
	s, err := plotter.NewScatter(xy)
	if err != nil {
		return nil, err
	}
	s.GlyphStyle = draw.GlyphStyle{Color: clr, Shape: shape, Radius: radius}
	return s, nil
}

// line draws a polyline.
func line(xs, ys []float64, clr color.Color, width vg.Length, dashes ...vg.Length) (*plotter.Line, error) {
	xy := make(plotter.XYs, len(xs))
	for i := range xs {
		xy[i].X, xy[i].Y = xs[i], ys[i]
	}
	l, err := plotter.NewLine(xy)
	if err != nil {
		return nil, err
	}
	l.LineStyle = draw.LineStyle{Color: clr, Width: width, Dashes: dashes}
	return l, nil
}

// hline is a horizontal line across the whole panel.
type hline struct {
	y     float64
	style draw.LineStyle
}

func (h hline) Plot(c draw.Canvas, p *plot.Plot) {
	_, trY := p.Transforms(&c)
	y := trY(h.y)
	c.StrokeLines(h.style, c.ClipLinesY([]vg.Point{{X: c.Min.X, Y: y}, {X: c.Max.X, Y: y}})...)
}

func (h hline) DataRange() (xmin, xmax, ymin, ymax float64) {
	return math.Inf(1), math.Inf(-1), h.y, h.y
}

func (h hline) Thumbnail(c *draw.Canvas) {
	y := (c.Min.Y + c.Max.Y) / 2
	c.StrokeLine2(h.style, c.Min.X, y, c.Max.X, y)
}

// band fills between lo and hi over x.
func band(xs, lo, hi []float64, clr color.Color) (*plotter.Polygon, error) {
	pts := make(plotter.XYs, 0, 2*len(xs))
	for i := range xs {
		pts = append(pts, plotter.XY{X: xs[i], Y: lo[i]})
	}
	for i := len(xs) - 1; i >= 0; i-- {
		pts = append(pts, plotter.XY{X: xs[i], Y: hi[i]})
	}
	poly, err := plotter.NewPolygon(pts)
	if err != nil {
		return nil, err
	}
	r, g, b, _ := clr.RGBA()
	poly.Color = color.NRGBA{uint8(r >> 8), uint8(g >> 8), uint8(b >> 8), 0x50}
	poly.LineStyle.Width = 0
	return poly, nil
}

// glyphThumb is a legend thumbnail showing one glyph.
type glyphThumb struct{ style draw.GlyphStyle }

func (g glyphThumb) Thumbnail(c *draw.Canvas) {
	c.DrawGlyphNoClip(g.style, c.Center())
}
