package figures

import (
	"fmt"
	"image/color"
	"math"
	"strconv"

	"gonum.org/v1/plot"

	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// LoopIssues is one loop of a project's issue dynamics (a row of
// experiments/project's dynamics.csv).
type LoopIssues struct {
	Loop                              int
	New, Closed, Reopened, Unresolved int
	Total                             int // issues recorded so far
}

// Dynamics draws the paper's Figure 1 style development dynamics of a
// project (section 5.2): per loop, the new, QA-closed and reopened issues as
// bars, and below them the unresolved and recorded issue counts. name is the
// output file stem; scope is shown under the title (e.g. the project name).
func Dynamics(name, scope string, loops []LoopIssues, opts Options) ([]Output, error) {
	if len(loops) == 0 {
		return nil, missing(name, "the project has no completed loop")
	}
	if opts.OutDir == "" {
		return nil, fmt.Errorf("figures: %s: no output directory", name)
	}
	f := &figure{name: name, title: "Development dynamics across loops", cols: 1, width: doubleColumn, height: 4.6 * vg.Inch}
	if scope != "" {
		f.title += "\n" + scope
	}
	first, last := loops[0].Loop, loops[len(loops)-1].Loop
	events := newPanel("(a) Issues per loop", "", "issues")
	const w = 0.27
	series := []struct {
		label string
		clr   color.Color
		off   float64
		val   func(LoopIssues) int
	}{
		{"new", blue, -w, func(l LoopIssues) int { return l.New }},
		{"closed (QA-verified)", green, 0, func(l LoopIssues) int { return l.Closed }},
		{"reopened", vermillion, w, func(l LoopIssues) int { return l.Reopened }},
	}
	for _, s := range series {
		b := newBars(s.clr, w)
		b.line = draw.LineStyle{Color: s.clr, Width: vg.Points(0.1)}
		for _, l := range loops {
			v := s.val(l)
			if v != 0 { // a zero bar would still draw a sliver on the axis
				b.add(float64(l.Loop)+s.off, float64(v))
			}
			f.add(Point{Panel: "a", Series: s.label, X: strconv.Itoa(l.Loop), Y: float64(v), Lo: math.NaN(), Hi: math.NaN(), N: 1, Source: computed})
		}
		events.Add(b)
		f.addLegend(s.label, b)
	}
	backlog := newPanel("(b) Issue backlog", "loop", "issues")
	var xs, unresolved, total []float64
	for _, l := range loops {
		xs = append(xs, float64(l.Loop))
		unresolved = append(unresolved, float64(l.Unresolved))
		total = append(total, float64(l.Total))
		f.add(Point{Panel: "b", Series: "unresolved", X: strconv.Itoa(l.Loop), Y: float64(l.Unresolved), Lo: math.NaN(), Hi: math.NaN(), N: 1, Source: computed})
		f.add(Point{Panel: "b", Series: "recorded", X: strconv.Itoa(l.Loop), Y: float64(l.Total), Lo: math.NaN(), Hi: math.NaN(), N: 1, Source: computed})
	}
	ul, err := line(xs, unresolved, black, vg.Points(1.4))
	if err != nil {
		return nil, err
	}
	tl, err := line(xs, total, grey, vg.Points(1), vg.Points(3), vg.Points(2))
	if err != nil {
		return nil, err
	}
	backlog.Add(ul, tl)
	f.addLegend("unresolved", ul)
	f.addLegend("recorded so far", tl)
	for _, p := range []*plot.Plot{events, backlog} {
		p.X.Min, p.X.Max = float64(first)-0.6, float64(last)+0.6
		p.X.Tick.Marker = intTicks(first, last)
		p.Y.Min = 0
	}
	f.panels = append(f.panels, events, backlog)
	return f.write(opts)
}
