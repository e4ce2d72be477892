package figures

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"image/color"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgsvg"
)

// Okabe-Ito colour-blind-safe palette.
var (
	black      = color.RGBA{0x00, 0x00, 0x00, 0xff}
	orange     = color.RGBA{0xE6, 0x9F, 0x00, 0xff}
	skyBlue    = color.RGBA{0x56, 0xB4, 0xE9, 0xff}
	green      = color.RGBA{0x00, 0x9E, 0x73, 0xff}
	yellow     = color.RGBA{0xF0, 0xE4, 0x42, 0xff}
	blue       = color.RGBA{0x00, 0x72, 0xB2, 0xff}
	vermillion = color.RGBA{0xD5, 0x5E, 0x00, 0xff}
	purple     = color.RGBA{0xCC, 0x79, 0xA7, 0xff}
	grey       = color.RGBA{0x77, 0x77, 0x77, 0xff}
)

// Figure widths of a two-column paper.
const (
	singleColumn = 3.5 * vg.Inch
	doubleColumn = 7 * vg.Inch
)

// Font sizes for print at 100% scale.
const (
	titleSize = 9
	labelSize = 8
	tickSize  = 7
)

// Point is the data behind one plotted mark, one row of the figure's CSV.
type Point struct {
	Figure string
	Panel  string
	Series string
	X      string
	Y      float64
	Lo, Hi float64 // NaN when the mark has no interval
	N      int     // tasks (or invocations) behind the mark
	Source string  // "computed" or "reported (paper tableN)"
}

// PointColumns is the header of a figure's CSV.
var PointColumns = []string{"figure", "panel", "series", "x", "y", "lo", "hi", "n", "source"}

const (
	computed = "computed"
)

func reportedSource(table string) string { return "reported (paper " + table + ")" }

// figure is a titled grid of panels with one shared legend.
type figure struct {
	name   string
	title  string
	width  vg.Length
	height vg.Length
	cols   int
	panels []*plot.Plot
	legend []legendEntry
	points []Point
}

type legendEntry struct {
	label  string
	thumbs []plot.Thumbnailer
}

func (f *figure) add(p Point) { f.points = append(f.points, p) }

func (f *figure) addLegend(label string, thumbs ...plot.Thumbnailer) {
	for _, e := range f.legend {
		if e.label == label {
			return
		}
	}
	f.legend = append(f.legend, legendEntry{label, thumbs})
}

// newPanel is a plot styled for print.
func newPanel(title, xLabel, yLabel string) *plot.Plot {
	p := plot.New()
	p.Title.Text = title
	p.Title.TextStyle.Font.Size = labelSize
	p.Title.Padding = vg.Points(3)
	p.X.Label.Text = xLabel
	p.Y.Label.Text = yLabel
	for _, a := range []*plot.Axis{&p.X, &p.Y} {
		a.Label.TextStyle.Font.Size = labelSize
		a.Tick.Label.Font.Size = tickSize
		a.Label.Padding = vg.Points(2)
	}
	p.X.Padding, p.Y.Padding = vg.Points(2), vg.Points(2)
	return p
}

func textStyle(size vg.Length) text.Style {
	return text.Style{
		Color:   black,
		Font:    font.From(plot.DefaultFont, size),
		Handler: plot.DefaultTextHandler,
		XAlign:  draw.XCenter,
		YAlign:  draw.YTop,
	}
}

// Output is one written file.
type Output struct {
	Figure string
	Path   string
	Format string // png, svg or csv
}

// write renders the figure in every format and its data as CSV.
func (f *figure) write(opts Options) ([]Output, error) {
	if len(f.panels) == 0 {
		return nil, fmt.Errorf("%s: nothing to draw", f.name)
	}
	if err := os.MkdirAll(opts.OutDir, 0o755); err != nil {
		return nil, fmt.Errorf("%s: %w", f.name, err)
	}
	var outs []Output
	for _, format := range opts.formats() {
		var buf bytes.Buffer
		if err := f.encode(&buf, format, opts); err != nil {
			return nil, err
		}
		path := filepath.Join(opts.OutDir, f.name+"."+format)
		if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
			return nil, err
		}
		outs = append(outs, Output{f.name, path, format})
	}
	path := filepath.Join(opts.OutDir, f.name+".csv")
	if err := writePoints(path, f.points); err != nil {
		return nil, fmt.Errorf("%s: %w", f.name, err)
	}
	return append(outs, Output{f.name, path, "csv"}), nil
}

// encode renders the figure as png or svg, or its data as csv, to w.
func (f *figure) encode(w io.Writer, format string, opts Options) error {
	if len(f.panels) == 0 {
		return fmt.Errorf("%s: nothing to draw", f.name)
	}
	switch format {
	case "png":
		c := vgimg.NewWith(vgimg.UseWH(f.width, f.height), vgimg.UseDPI(opts.dpi()),
			vgimg.UseBackgroundColor(color.White))
		f.draw(draw.New(c))
		if _, err := (vgimg.PngCanvas{Canvas: c}).WriteTo(w); err != nil {
			return fmt.Errorf("%s: png: %w", f.name, err)
		}
	case "svg":
		c := vgsvg.New(f.width, f.height)
		f.draw(draw.New(c))
		if _, err := c.WriteTo(w); err != nil {
			return fmt.Errorf("%s: svg: %w", f.name, err)
		}
	case "csv":
		return encodePoints(w, f.points)
	default:
		return fmt.Errorf("%s: unknown format %q (want png, svg or csv)", f.name, format)
	}
	return nil
}

func (f *figure) draw(dc draw.Canvas) {
	pad := vg.Points(3)
	top := dc.Max.Y - pad
	ts := textStyle(titleSize)
	if f.title != "" {
		title := wrap(ts, f.title, dc.Max.X-dc.Min.X-2*pad)
		dc.FillText(ts, vg.Point{X: (dc.Min.X + dc.Max.X) / 2, Y: top}, title)
		top -= ts.Height(title) + pad
	}
	if len(f.legend) > 0 {
		top -= f.drawLegend(dc, top) + pad
	}
	area := dc
	area.Max.Y = top
	cols := f.cols
	if cols < 1 {
		cols = len(f.panels)
	}
	rows := (len(f.panels) + cols - 1) / cols
	grid := make([][]*plot.Plot, rows)
	for r := range grid {
		grid[r] = make([]*plot.Plot, cols)
		for c := range cols {
			if i := r*cols + c; i < len(f.panels) {
				grid[r][c] = f.panels[i]
			}
		}
	}
	tiles := draw.Tiles{Rows: rows, Cols: cols, PadX: vg.Points(6), PadY: vg.Points(6),
		PadLeft: pad, PadRight: pad, PadBottom: pad}
	canvases := plot.Align(grid, tiles, area)
	for r := range grid {
		for c, p := range grid[r] {
			if p != nil {
				p.Draw(canvases[r][c])
			}
		}
	}
}

// drawLegend lays the entries out in rows centred under the title and
// returns the height used.
func (f *figure) drawLegend(dc draw.Canvas, top vg.Length) vg.Length {
	ts := textStyle(tickSize)
	thumb := vg.Points(12)
	gap := vg.Points(10)
	rowH := ts.Height("Xg") + vg.Points(2)
	avail := dc.Max.X - dc.Min.X - vg.Points(10)
	var rows [][]legendEntry
	var widths []vg.Length
	var cur []legendEntry
	var w vg.Length
	for _, e := range f.legend {
		ew := thumb + vg.Points(3) + ts.Width(e.label)
		if len(cur) > 0 && w+gap+ew > avail {
			rows, widths = append(rows, cur), append(widths, w)
			cur, w = nil, 0
		}
		if len(cur) > 0 {
			w += gap
		}
		cur, w = append(cur, e), w+ew
	}
	rows, widths = append(rows, cur), append(widths, w)
	ts.XAlign, ts.YAlign = draw.XLeft, draw.YCenter
	for i, row := range rows {
		y := top - vg.Length(i)*rowH - rowH/2
		x := (dc.Min.X+dc.Max.X)/2 - widths[i]/2
		for _, e := range row {
			tc := dc
			tc.Min = vg.Point{X: x, Y: y - rowH/2 + vg.Points(1)}
			tc.Max = vg.Point{X: x + thumb, Y: y + rowH/2 - vg.Points(1)}
			for _, t := range e.thumbs {
				t.Thumbnail(&tc)
			}
			dc.FillText(ts, vg.Point{X: x + thumb + vg.Points(3), Y: y}, e.label)
			x += thumb + vg.Points(3) + ts.Width(e.label) + gap
		}
	}
	return vg.Length(len(rows)) * rowH
}

// wrap breaks each line of s at spaces so that no line is wider than width.
func wrap(ts text.Style, s string, width vg.Length) string {
	var out []string
	for _, para := range strings.Split(s, "\n") {
		cur := ""
		for _, w := range strings.Fields(para) {
			if cur != "" && ts.Width(cur+" "+w) > width {
				out = append(out, cur)
				cur = w
				continue
			}
			if cur != "" {
				cur += " "
			}
			cur += w
		}
		out = append(out, cur)
	}
	return strings.Join(out, "\n")
}

func writePoints(path string, pts []Point) error {
	var buf bytes.Buffer
	if err := encodePoints(&buf, pts); err != nil {
		return err
	}
	return os.WriteFile(path, buf.Bytes(), 0o644)
}

// encodePoints writes the data behind every plotted mark as CSV.
func encodePoints(out io.Writer, pts []Point) error {
	w := csv.NewWriter(out)
	_ = w.Write(PointColumns)
	num := func(v float64) string {
		if math.IsNaN(v) {
			return ""
		}
		return strconv.FormatFloat(v, 'g', -1, 64)
	}
	for _, p := range pts {
		_ = w.Write([]string{p.Figure, p.Panel, p.Series, p.X, num(p.Y), num(p.Lo), num(p.Hi),
			strconv.Itoa(p.N), p.Source})
	}
	w.Flush()
	return w.Error()
}

// ReadPoints reads a figure's CSV back (for tests and for checking a figure
// against a recomputation).
func ReadPoints(path string) ([]Point, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	recs, err := csv.NewReader(bytes.NewReader(b)).ReadAll()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if len(recs) == 0 || len(recs[0]) != len(PointColumns) {
		return nil, fmt.Errorf("%s: header is not %v", path, PointColumns)
	}
	num := func(s string, line int) (float64, error) {
		if s == "" {
			return math.NaN(), nil
		}
		v, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return 0, fmt.Errorf("%s line %d: %w", path, line, err)
		}
		return v, nil
	}
	var out []Point
	for i, r := range recs[1:] {
		p := Point{Figure: r[0], Panel: r[1], Series: r[2], X: r[3], Source: r[8]}
		if p.Y, err = num(r[4], i+2); err != nil {
			return nil, err
		}
		if p.Lo, err = num(r[5], i+2); err != nil {
			return nil, err
		}
		if p.Hi, err = num(r[6], i+2); err != nil {
			return nil, err
		}
		if p.N, err = strconv.Atoi(r[7]); err != nil {
			return nil, fmt.Errorf("%s line %d: n: %w", path, i+2, err)
		}
		out = append(out, p)
	}
	return out, nil
}
