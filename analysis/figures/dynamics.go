package figures

import (
	"fmt"
	"math"
	"strconv"

	"gonum.org/v1/plot/vg"
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
	f, err := render(dynamicsData(scope, loops))
	if err != nil {
		return nil, err
	}
	f.name = name
	return f.write(opts)
}

// dynamicsData computes the dynamics figure's data.
func dynamicsData(scope string, loops []LoopIssues) *chart {
	c := &chart{title: "Development dynamics across loops", cols: 1, width: doubleColumn, height: 4.6 * vg.Inch}
	if scope != "" {
		c.title += "\n" + scope
	}
	first, last := loops[0].Loop, loops[len(loops)-1].Loop
	const w = 0.27
	events := panelSpec{key: "a", kind: loopBarsPanel, title: "(a) Issues per loop", yLabel: "issues", barWidth: w, firstLoop: first, lastLoop: last}
	series := []struct {
		style seriesStyle
		val   func(LoopIssues) int
	}{
		{seriesStyle{name: "new", color: blue, shift: -w}, func(l LoopIssues) int { return l.New }},
		{seriesStyle{name: "closed (QA-verified)", color: green}, func(l LoopIssues) int { return l.Closed }},
		{seriesStyle{name: "reopened", color: vermillion, shift: w}, func(l LoopIssues) int { return l.Reopened }},
	}
	for _, s := range series {
		events.series = append(events.series, s.style)
		for _, l := range loops {
			c.points = append(c.points, Point{Panel: "a", Series: s.style.name, X: strconv.Itoa(l.Loop), Y: float64(s.val(l)), Lo: math.NaN(), Hi: math.NaN(), N: 1, Source: computed})
		}
	}
	backlog := panelSpec{key: "b", kind: loopLinesPanel, title: "(b) Issue backlog", xLabel: "loop", yLabel: "issues", firstLoop: first, lastLoop: last,
		series: []seriesStyle{{name: "unresolved", legend: "unresolved", color: black, width: vg.Points(1.4)},
			{name: "recorded", legend: "recorded so far", color: grey, width: vg.Points(1), dashes: []vg.Length{vg.Points(3), vg.Points(2)}}}}
	for _, l := range loops {
		c.points = append(c.points,
			Point{Panel: "b", Series: "unresolved", X: strconv.Itoa(l.Loop), Y: float64(l.Unresolved), Lo: math.NaN(), Hi: math.NaN(), N: 1, Source: computed},
			Point{Panel: "b", Series: "recorded", X: strconv.Itoa(l.Loop), Y: float64(l.Total), Lo: math.NaN(), Hi: math.NaN(), N: 1, Source: computed})
	}
	c.panels = []panelSpec{events, backlog}
	return c
}
