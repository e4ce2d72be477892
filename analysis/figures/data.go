package figures

import (
	"fmt"
	"image/color"
	"math"
	"sort"
	"strconv"
	"strings"

	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"

	"github.com/hoh-research/hoh/analysis/bootstrap"
	"github.com/hoh-research/hoh/analysis/dominance"
	"github.com/hoh-research/hoh/analysis/metrics"
	"github.com/hoh-research/hoh/analysis/paper"
	"github.com/hoh-research/hoh/runrecord"
)

// armColor keeps one colour per arm across figures: more HoH loops go from
// yellow to vermillion; Vanilla is sky blue.
func armColor(a runrecord.Arm) color.Color {
	switch a.Condition {
	case runrecord.Vanilla:
		return skyBlue
	case runrecord.VanillaContinuation:
		return blue
	case runrecord.HoH:
		switch a.Checkpoint {
		case 1:
			return yellow
		case 2:
			return orange
		}
		return vermillion
	case runrecord.WithoutPlanUpdate:
		return green
	case runrecord.WithoutEvidence:
		return purple
	case runrecord.WithoutWarmStart:
		return black
	}
	return grey
}

func panelLetter(i, n int, title string) string {
	if n < 2 {
		return title
	}
	return fmt.Sprintf("(%c) %s", 'a'+i, title)
}

var componentNames = []struct{ metric, label string }{
	{metrics.MetricMechanics, "Core\nMechanics"},
	{metrics.MetricDepth, "Content\nDepth"},
	{metrics.MetricVisuals, "Functional\nVisuals"},
	{metrics.MetricArt, "Art and\nPresentation"},
}

// fig4: the four GameCraft components, Vanilla vs HoH@3, bars = task means,
// error bars = 95% percentile bootstrap CIs with one task draw shared by all
// eight series of a configuration (components of a task stay together).
func fig4(d Data, opts Options) (*figure, error) { return renderData(fig4Data(d, opts)) }

// renderData draws a figure's data, or passes its error on.
func renderData(c *chart, err error) (*figure, error) {
	if err != nil {
		return nil, err
	}
	return render(c)
}

// input is what a figure is computed from: its entry in figures.yaml and
// the rows of its benchmark.
type input struct {
	bench, metric string
	arms          []runrecord.Arm // the fixed arms it compares, if any
	rows          []runrecord.Row
	ix            *metrics.Index // every series of the figure read from one index
}

// inputOf reads figure fig's entry (comparing arms arms) and its rows.
func inputOf(fig string, arms int, d Data, opts Options) (*input, error) {
	def, as, err := definition(fig, arms)
	if err != nil {
		return nil, err
	}
	in := &input{bench: benchmarkOf(def.Benchmark, opts), arms: as}
	if in.rows, err = rowsOf(d, fig, in.bench); err != nil {
		return nil, err
	}
	in.ix, in.metric = metrics.NewIndex(in.rows), defaultMetric(in.bench, opts)
	return in, nil
}

// fig4Data computes Figure 4's data.
func fig4Data(d Data, opts Options) (*chart, error) {
	const fig = "fig4"
	in, err := inputOf(fig, 2, d, opts)
	if err != nil {
		return nil, err
	}
	bench, rows, ix, arms := in.bench, in.rows, in.ix, in.arms
	var cfgs []string
	for _, c := range configsOf(rows, opts) {
		for _, cm := range componentNames {
			if hasMetric(ix, c, cm.metric) {
				cfgs = append(cfgs, c)
				break
			}
		}
	}
	if len(cfgs) == 0 {
		return nil, missing(fig, "no component rows (mechanics, depth, visuals, art) for benchmark %s", bench)
	}
	c := &chart{cols: len(cfgs), rowHeight: 2.3 * vg.Inch, colors: map[string]color.Color{}}
	cats := make([]string, len(componentNames))
	for i, cm := range componentNames {
		cats[i] = cm.label
	}
	ntasks := 0
	for pi, cfg := range cfgs {
		var sels []metrics.Selector
		for _, a := range arms {
			for _, cm := range componentNames {
				if !hasArm(ix, cfg, a, cm.metric) {
					return nil, missing(fig, "no %s rows for %s %s", cm.metric, cfg, a)
				}
				sels = append(sels, metrics.Selector{Benchmark: bench, Config: cfg, Arm: a, Metric: cm.metric})
			}
		}
		tasks, data, err := ix.Matrix(sels...)
		if err != nil {
			return nil, fmt.Errorf("%s: %s: %w", fig, cfg, err)
		}
		ivs, err := bootstrap.Percentile(data, opts.Bootstrap)
		if err != nil {
			return nil, fmt.Errorf("%s: %s: %w", fig, cfg, err)
		}
		ntasks = max(ntasks, len(tasks))
		title := fmt.Sprintf("%s (n=%d)", configName(cfg), len(tasks))
		c.panels = append(c.panels, panelSpec{key: cfg, kind: groupedBarsPanel, title: panelLetter(pi, len(cfgs), title),
			yLabel: "Score (0-100)", categories: cats, yMax: 100})
		for ai, a := range arms {
			c.colors[armName(a)] = armColor(a)
			for ci := range componentNames {
				iv := ivs[ai*len(componentNames)+ci]
				c.points = append(c.points, Point{Panel: cfg, Series: armName(a), X: strings.ReplaceAll(cats[ci], "\n", " "),
					Y: iv.Mean, Lo: iv.Lo, Hi: iv.Hi, N: len(tasks), Source: computed})
			}
		}
	}
	c.title = withScope(fmt.Sprintf("%s components: mean, 95%% bootstrap CI", benchmarkName(bench)), d)
	return c, nil
}

func hasMetric(ix *metrics.Index, config, metric string) bool {
	for _, s := range ix.Selectors() {
		if s.Config == config && s.Metric == metric {
			return true
		}
	}
	return false
}

// fig5: Dominance over loops. The pool of each configuration is Vanilla and
// HoH@1..T (T = its last HoH checkpoint); the line is the overall Dominance
// (Eq. 16, domains = official categories, or one domain without them), the
// band +/- 1 SE of the task-level Dominance values over tasks.
func fig5(d Data, opts Options) (*figure, error) { return renderData(fig5Data(d, opts)) }

// fig5Data computes Figure 5's data.
func fig5Data(d Data, opts Options) (*chart, error) {
	const fig = "fig5"
	in, err := inputOf(fig, 0, d, opts)
	if err != nil {
		return nil, err
	}
	bench, ix, metric := in.bench, in.ix, in.metric
	cats, catErr := ix.Labels(bench, metrics.Category)
	vanilla := runrecord.Arm{Condition: runrecord.Vanilla, Checkpoint: 1}
	cfgs, lastT := fig5Configs(in, opts)
	if len(cfgs) == 0 {
		return nil, missing(fig, "no %s rows of HoH checkpoints for benchmark %s", metric, bench)
	}
	c := &chart{cols: min(len(cfgs), 3), rowHeight: 2.2 * vg.Inch}
	maxT := 0
	for pi, cfg := range cfgs {
		T := lastT[cfg]
		maxT = max(maxT, T)
		pool, arms, err := fig5Pool(fig, in, cfg, vanilla, T)
		if err != nil {
			return nil, err
		}
		domainOf, err := fig5Domains(fig, pool[vanilla.String()], cats, catErr)
		if err != nil {
			return nil, err
		}
		res, err := dominance.Compute(pool, domainOf, dominance.Macro)
		if err != nil {
			return nil, fmt.Errorf("%s: %s: %w", fig, cfg, err)
		}
		c.panels = append(c.panels, panelSpec{key: cfg, kind: dominanceLoopsPanel,
			title:  panelLetter(pi, len(cfgs), fmt.Sprintf("%s (n=%d)", configName(cfg), len(domainOf))),
			xLabel: "HoH loop", yLabel: "Dominance (%)", yMax: 100})
		if err := fig5Points(fig, c, cfg, vanilla, arms, res); err != nil {
			return nil, err
		}
	}
	c.title = withScope(fmt.Sprintf("%s Dominance over %d loops (pool: Vanilla and HoH@1..%d)", benchmarkName(bench), maxT, maxT), d)
	return c, nil
}

// fig5Configs lists the configurations with HoH checkpoints of the metric,
// each with its last checkpoint T, which bounds its pool.
func fig5Configs(in *input, opts Options) ([]string, map[string]int) {
	var cfgs []string
	lastT := map[string]int{}
	for _, cfg := range configsOf(in.rows, opts) {
		for _, r := range in.rows {
			if r.Config == cfg && r.Condition == runrecord.HoH && r.Metric == in.metric {
				lastT[cfg] = max(lastT[cfg], r.Checkpoint)
			}
		}
		if lastT[cfg] > 0 {
			cfgs = append(cfgs, cfg)
		}
	}
	return cfgs, lastT
}

// fig5Pool reads the task values of cfg's pool, Vanilla then HoH@1..T,
// keyed by arm; every arm must be present, since Dominance compares all.
func fig5Pool(fig string, in *input, cfg string, vanilla runrecord.Arm, T int) (map[string]map[string]float64, []runrecord.Arm, error) {
	pool := map[string]map[string]float64{}
	arms := []runrecord.Arm{vanilla}
	for t := 1; t <= T; t++ {
		arms = append(arms, runrecord.Arm{Condition: runrecord.HoH, Checkpoint: t})
	}
	for _, a := range arms {
		if !hasArm(in.ix, cfg, a, in.metric) {
			return nil, nil, missing(fig, "no %s rows for %s %s (the pool needs Vanilla and HoH@1..%d)", in.metric, cfg, a, T)
		}
		v, err := in.ix.TaskValues(metrics.Selector{Benchmark: in.bench, Config: cfg, Arm: a, Metric: in.metric})
		if err != nil {
			return nil, nil, fmt.Errorf("%s: %w", fig, err)
		}
		pool[a.String()] = v
	}
	return pool, arms, nil
}

// fig5Domains maps the tasks to their official categories, or all to one
// domain when the benchmark has none.
func fig5Domains(fig string, tasks map[string]float64, cats map[string]string, catErr error) (map[string]string, error) {
	domainOf := map[string]string{}
	for t := range tasks {
		domainOf[t] = "all"
		if catErr == nil {
			if c, ok := cats[t]; ok {
				domainOf[t] = c
			} else {
				return nil, fmt.Errorf("%s: task %s has no category while others do", fig, t)
			}
		}
	}
	return domainOf, nil
}

// fig5Points adds cfg's points: the HoH line with its +/- 1 SE band, the
// Vanilla reference and the best loop.
func fig5Points(fig string, c *chart, cfg string, vanilla runrecord.Arm, arms []runrecord.Arm, res *dominance.Result) error {
	var ys []float64
	best := 0
	for t := 1; t < len(arms); t++ {
		label := arms[t].String()
		se, err := metrics.Summarize(res.Task[label])
		if err != nil {
			return fmt.Errorf("%s: %w", fig, err)
		}
		y := 100 * res.Overall[label]
		s := 100 * se.SE
		ys = append(ys, y)
		c.points = append(c.points, Point{Panel: cfg, Series: "hoh", X: strconv.Itoa(t), Y: y, Lo: y - s, Hi: y + s, N: se.N, Source: computed})
		if best == 0 || y > ys[best-1] {
			best = t
		}
	}
	vs, err := metrics.Summarize(res.Task[vanilla.String()])
	if err != nil {
		return fmt.Errorf("%s: %w", fig, err)
	}
	vy := 100 * res.Overall[vanilla.String()]
	c.points = append(c.points, Point{Panel: cfg, Series: "vanilla", X: "vanilla", Y: vy, Lo: vy - 100*vs.SE, Hi: vy + 100*vs.SE, N: vs.N, Source: computed})
	c.points = append(c.points, Point{Panel: cfg, Series: "best", X: strconv.Itoa(best), Y: ys[best-1], Lo: math.NaN(), Hi: math.NaN(), N: vs.N, Source: computed})
	return nil
}

// Reporting groups and categories in the paper's order.
var (
	paperGroups     = []string{"Action", "Timing", "Strategy", "Simulation", "Adventure"}
	paperCategories = []string{"Implementation", "Performance", "Research"}
)

func orderLabels(labels map[string]string, first []string) []string {
	have := map[string]bool{}
	for _, l := range labels {
		have[l] = true
	}
	return firstThenSorted(have, first)
}

// labelBars draws task means of each arm by task label (group or category),
// one panel per configuration.
func labelBars(fig string, in *input, d Data, opts Options, g metrics.Grouping, order []string,
	armsFor func(rows []runrecord.Row, cfg, metric string) []runrecord.Arm, title, yLabel string, yMax float64, stagger bool) (*chart, error) {
	bench, rows, ix, metric := in.bench, in.rows, in.ix, in.metric
	labels, err := ix.Labels(bench, g)
	if err != nil {
		return nil, missing(fig, "no %s labels for benchmark %s", g, bench)
	}
	var cfgs []string
	for _, c := range configsOf(rows, opts) {
		if hasMetric(ix, c, metric) {
			cfgs = append(cfgs, c)
		}
	}
	if len(cfgs) == 0 {
		return nil, missing(fig, "no %s rows for benchmark %s", metric, bench)
	}
	cols := min(len(cfgs), 3)
	c := &chart{cols: cols, rowHeight: 2.4 * vg.Inch, colors: map[string]color.Color{}}
	for pi, cfg := range cfgs {
		arms := armsFor(rows, cfg, metric)
		var cats []string
		var keys []string
		for ai, a := range arms {
			if !hasArm(ix, cfg, a, metric) {
				return nil, missing(fig, "no %s rows for %s %s", metric, cfg, a)
			}
			v, err := ix.TaskValues(metrics.Selector{Benchmark: bench, Config: cfg, Arm: a, Metric: metric})
			if err != nil {
				return nil, fmt.Errorf("%s: %w", fig, err)
			}
			by, err := metrics.SummarizeBy(v, labels)
			if err != nil {
				return nil, fmt.Errorf("%s: %s %s: %w", fig, cfg, a, err)
			}
			if ai == 0 {
				sub := map[string]string{}
				for t := range v {
					sub[t] = labels[t]
				}
				keys = orderLabels(sub, order)
				for _, k := range keys {
					cats = append(cats, fmt.Sprintf("%s\n(n=%d)", k, by[k].N))
				}
			}
			c.colors[armName(a)] = armColor(a)
			for ki, k := range keys {
				sm, ok := by[k]
				if !ok {
					return nil, missing(fig, "no %s tasks of %s %s for %s %s", metric, g, k, cfg, a)
				}
				c.points = append(c.points, Point{Panel: cfg, Series: armName(a), X: strings.ReplaceAll(cats[ki], "\n", " "),
					Y: sm.Mean, Lo: math.NaN(), Hi: math.NaN(), N: sm.N, Source: computed})
			}
		}
		c.panels = append(c.panels, panelSpec{key: cfg, kind: groupedBarsPanel, title: panelLetter(pi, len(cfgs), configName(cfg)),
			yLabel: yLabel, categories: cats, yMax: yMax, stagger: stagger, hideYLabel: pi%cols != 0})
	}
	c.title = withScope(title, d)
	return c, nil
}

// fig7: GameCraft Overall by reporting group, Vanilla vs HoH@3.
func fig7(d Data, opts Options) (*figure, error) {
	in, err := inputOf("fig7", 2, d, opts)
	if err != nil {
		return nil, err
	}
	arms := func([]runrecord.Row, string, string) []runrecord.Arm { return in.arms }
	return renderData(labelBars("fig7", in, d, opts, metrics.Group, paperGroups, arms,
		benchmarkName(in.bench)+" Overall by reporting group: mean over tasks", "Overall score (0-100)", 100, true))
}

// fig8: FrontierSWE mean reward by official category for Vanilla and every
// HoH checkpoint present.
func fig8(d Data, opts Options) (*figure, error) {
	in, err := inputOf("fig8", 0, d, opts)
	if err != nil {
		return nil, err
	}
	arms := func(rows []runrecord.Row, cfg, metric string) []runrecord.Arm {
		out := []runrecord.Arm{{Condition: runrecord.Vanilla, Checkpoint: 1}}
		cps := map[int]bool{}
		for _, r := range rows {
			if r.Config == cfg && r.Condition == runrecord.HoH && r.Metric == metric {
				cps[r.Checkpoint] = true
			}
		}
		for t := 1; len(cps) > 0; t++ {
			if cps[t] {
				out = append(out, runrecord.Arm{Condition: runrecord.HoH, Checkpoint: t})
				delete(cps, t)
			}
		}
		return out
	}
	return renderData(labelBars("fig8", in, d, opts, metrics.Category, paperCategories, arms,
		benchmarkName(in.bench)+" mean "+in.metric+" by official category: mean over tasks", "Mean "+in.metric, 0, true))
}

// meanCI is the bootstrap mean and 95% CI of one per-task series.
func meanCI(values map[string]float64, opts Options) (bootstrap.Interval, int, error) {
	tasks := metrics.Tasks(values)
	data := make([][]float64, len(tasks))
	for i, t := range tasks {
		data[i] = []float64{values[t]}
	}
	iv, err := bootstrap.Percentile(data, opts.Bootstrap)
	if err != nil {
		return bootstrap.Interval{}, 0, err
	}
	return iv[0], len(tasks), nil
}

// tokensMillions returns per-task cumulative tokens in millions; an empty
// map means the arm has no token counts at all.
func tokensMillions(ix *metrics.Index, sel metrics.Selector) (map[string]float64, error) {
	tok, err := ix.TaskTokens(sel)
	if err != nil {
		return nil, err
	}
	for t := range tok {
		tok[t] *= 1e-6
	}
	return tok, nil
}

// fig9: score and cumulative tokens after 1..K development passes.
// Vanilla Continuation's pass 1 is Vanilla; HoH's pass k is HoH@k. Tokens an
// arm lacks per task are drawn only as a separately marked reported point.
func fig9(d Data, opts Options) (*figure, error) { return renderData(fig9Data(d, opts)) }

// fig9Data computes Figure 9's data.
func fig9Data(d Data, opts Options) (*chart, error) {
	const fig = "fig9"
	in, err := inputOf(fig, 0, d, opts)
	if err != nil {
		return nil, err
	}
	bench, rows := in.bench, in.rows
	var cfgs []string
	for _, c := range configsOf(rows, opts) {
		for _, r := range rows {
			if r.Config == c && r.Condition == runrecord.VanillaContinuation {
				cfgs = append(cfgs, c)
				break
			}
		}
	}
	if len(cfgs) == 0 {
		return nil, missing(fig, "no vanilla-continuation rows for benchmark %s", bench)
	}
	c := &chart{cols: 2, rowHeight: 2.3 * vg.Inch}
	for _, cfg := range cfgs {
		if err := fig9Panels(fig, c, d, in, opts, cfg); err != nil {
			return nil, err
		}
	}
	c.title = withScope(benchmarkName(bench)+" over development passes: mean over tasks, 95% bootstrap CI", d)
	return c, nil
}

// passSeries is one line of Figure 9: the arm it reads at each pass.
type passSeries struct {
	name  string
	clr   color.Color
	shift float64
	armAt func(k int) runrecord.Arm
}

// fig9Panels adds cfg's score and tokens panels, each with a line for
// Vanilla Continuation and one for HoH over its K passes.
func fig9Panels(fig string, c *chart, d Data, in *input, opts Options, cfg string) error {
	ix, metric := in.ix, in.metric
	K := 0
	for _, r := range in.rows {
		if r.Config == cfg && (r.Condition == runrecord.VanillaContinuation || r.Condition == runrecord.HoH) {
			K = max(K, r.Checkpoint)
		}
	}
	vanilla := runrecord.Arm{Condition: runrecord.Vanilla, Checkpoint: 1}
	if !hasArm(ix, cfg, vanilla, metric) {
		return missing(fig, "no %s rows for %s vanilla (pass 1 of Vanilla Continuation)", metric, cfg)
	}
	all := []passSeries{
		{"Vanilla Continuation", blue, -0.06, func(k int) runrecord.Arm {
			if k == 1 {
				return vanilla
			}
			return runrecord.Arm{Condition: runrecord.VanillaContinuation, Checkpoint: k}
		}},
		{"HoH", vermillion, 0.06, func(k int) runrecord.Arm { return runrecord.Arm{Condition: runrecord.HoH, Checkpoint: k} }},
	}
	score := panelSpec{key: cfg + "/score", kind: passesPanel, title: configName(cfg) + ": score", xLabel: "Development passes",
		yLabel: "Overall score (0-100)", passes: K, yMax: 100}
	tokens := panelSpec{key: cfg + "/tokens", kind: passesPanel, title: configName(cfg) + ": cumulative tokens",
		xLabel: "Development passes", yLabel: "Mean tokens per task (M)", passes: K}
	if metric != "overall" {
		score.yLabel, score.yMax = "Mean "+metric, 0 // another scale (a 0-1 reward, say)
	}
	for _, s := range all {
		style, err := fig9Series(fig, c, d, in, opts, cfg, s, K)
		if err != nil {
			return err
		}
		score.series, tokens.series = append(score.series, style), append(tokens.series, style)
	}
	c.panels = append(c.panels, score, tokens)
	return nil
}

// fig9Series adds series s's points at passes 1..K, score and tokens (the
// latter reported when the arm lacks per-task tokens), and returns its style.
func fig9Series(fig string, c *chart, d Data, in *input, opts Options, cfg string, s passSeries, K int) (seriesStyle, error) {
	bench, ix, metric := in.bench, in.ix, in.metric
	computedAny := false
	reportedFrom := map[string]bool{}
	for k := 1; k <= K; k++ {
		a := s.armAt(k)
		if !hasArm(ix, cfg, a, metric) {
			continue
		}
		sel := metrics.Selector{Benchmark: bench, Config: cfg, Arm: a, Metric: metric}
		v, err := ix.TaskValues(sel)
		if err != nil {
			return seriesStyle{}, fmt.Errorf("%s: %w", fig, err)
		}
		iv, n, err := meanCI(v, opts)
		if err != nil {
			return seriesStyle{}, fmt.Errorf("%s: %s: %w", fig, sel, err)
		}
		computedAny = true
		c.points = append(c.points, Point{Panel: cfg + "/score", Series: s.name, X: strconv.Itoa(k), Y: iv.Mean, Lo: iv.Lo, Hi: iv.Hi, N: n, Source: computed})
		tok, err := tokensMillions(ix, sel)
		if err != nil {
			return seriesStyle{}, fmt.Errorf("%s: %w", fig, err)
		}
		if len(tok) > 0 {
			tv, n, err := meanCI(tok, opts)
			if err != nil {
				return seriesStyle{}, fmt.Errorf("%s: %s tokens: %w", fig, sel, err)
			}
			c.points = append(c.points, Point{Panel: cfg + "/tokens", Series: s.name, X: strconv.Itoa(k), Y: tv.Mean, Lo: tv.Lo, Hi: tv.Hi, N: n, Source: computed})
		} else if rep, ok := reportedValue(d.Reported, bench, cfg, a, "tokens_m"); ok {
			reportedFrom[rep.Table] = true
			c.points = append(c.points, Point{Panel: cfg + "/tokens", Series: s.name + " (reported)", X: strconv.Itoa(k), Y: rep.Value,
				Lo: math.NaN(), Hi: math.NaN(), N: 0, Source: reportedSource(rep.Table)})
		}
	}
	style := seriesStyle{name: s.name, color: s.clr, shift: s.shift}
	if computedAny {
		c.legendOrder = append(c.legendOrder, s.name+" (computed)")
	}
	if len(reportedFrom) > 0 {
		style.reportedLegend = fmt.Sprintf("%s, reported mean only (paper %s; no per-task tokens)", s.name, joinKeys(reportedFrom))
		c.legendOrder = append(c.legendOrder, style.reportedLegend)
	}
	return style, nil
}

func joinKeys(m map[string]bool) string {
	var ks []string
	for k := range m {
		ks = append(ks, strings.Replace(k, "table", "Table ", 1))
	}
	sort.Strings(ks)
	return strings.Join(ks, ", ")
}

var ablationConditions = []string{runrecord.WithoutPlanUpdate, runrecord.WithoutEvidence, runrecord.WithoutWarmStart}

// fig10: final score vs mean cumulative tokens for Vanilla (reference), full
// HoH and the ablations at the same T. An arm with per-task tokens is a
// computed point with 95% bootstrap CIs on both axes (one paired task
// draw); one without is drawn only from printed aggregates, hollow and
// labelled reported. Each mark has two CSV rows: x "tokens_m" and x "score".
func fig10(d Data, opts Options) (*figure, error) { return renderData(fig10Data(d, opts)) }

// fig10Data computes Figure 10's data.
func fig10Data(d Data, opts Options) (*chart, error) {
	const fig = "fig10"
	in, err := inputOf(fig, 0, d, opts)
	if err != nil {
		return nil, err
	}
	bench, rows, metric := in.bench, in.rows, in.metric
	T := map[string]int{}
	var cfgs []string
	for _, c := range configsOf(rows, opts) {
		for _, r := range rows {
			if r.Config == c && r.Metric == metric && isAblation(r.Condition) {
				T[c] = max(T[c], r.Checkpoint)
			}
		}
		if T[c] > 0 {
			cfgs = append(cfgs, c)
		}
	}
	if len(cfgs) == 0 {
		return nil, missing(fig, "no ablation rows (wo-plan-update, wo-evidence-feedback, wo-warm-start) for benchmark %s", bench)
	}
	cols := min(len(cfgs), 2)
	c := &chart{cols: cols, rowHeight: 2.6 * vg.Inch, colors: map[string]color.Color{}}
	lg := &fig10Legend{kinds: map[string]bool{}, reportedIn: map[string]bool{}}
	for pi, cfg := range cfgs {
		arms, err := fig10Arms(fig, in, cfg, T[cfg])
		if err != nil {
			return nil, err
		}
		ps := panelSpec{key: cfg, kind: scoreTokensPanel, title: panelLetter(pi, len(cfgs), configName(cfg)),
			xLabel: "Mean cumulative tokens per task (M)", yLabel: "Overall score (0-100)", legends: map[string]string{}}
		if metric != "overall" {
			ps.yLabel = "Mean " + metric
		}
		for _, a := range arms {
			if err := fig10Mark(fig, c, &ps, lg, d, in, opts, cfg, a); err != nil {
				return nil, err
			}
		}
		c.panels = append(c.panels, ps)
	}
	// One note says what the marks are, instead of a suffix on every entry.
	var note []string
	if lg.kinds["computed"] {
		note = append(note, "filled: computed from records, with 95% CIs")
	}
	if len(lg.reportedIn) > 0 {
		note = append(note, "hollow: reported (paper "+joinKeys(lg.reportedIn)+")")
	}
	c.legendNotes = []string{strings.Join(note, "; ")}
	title := benchmarkName(bench) + ": score vs tokens, HoH and ablations"
	if len(lg.notPlotted) > 0 {
		title += "\nnot plotted (no per-task or reported tokens): " + strings.Join(lg.notPlotted, ", ")
	}
	c.title = withScope(title, d)
	return c, nil
}

// fig10Legend gathers, over every panel, what the legend note and the
// title say about the marks.
type fig10Legend struct {
	notPlotted        []string        // arms with neither per-task nor reported tokens
	kinds, reportedIn map[string]bool // "computed" if any mark is; the tables reported marks come from
}

// fig10Arms lists cfg's arms at the ablations' checkpoint T: Vanilla if
// present, full HoH (required, the reference) and the ablations present.
func fig10Arms(fig string, in *input, cfg string, T int) ([]runrecord.Arm, error) {
	ix, metric := in.ix, in.metric
	full := runrecord.Arm{Condition: runrecord.HoH, Checkpoint: T}
	if !hasArm(ix, cfg, full, metric) {
		return nil, missing(fig, "no %s rows for %s %s (full HoH at the ablations' T)", metric, cfg, full)
	}
	arms := []runrecord.Arm{}
	if v := (runrecord.Arm{Condition: runrecord.Vanilla, Checkpoint: 1}); hasArm(ix, cfg, v, metric) {
		arms = append(arms, v)
	}
	arms = append(arms, full)
	for _, c := range ablationConditions {
		if a := (runrecord.Arm{Condition: c, Checkpoint: T}); hasArm(ix, cfg, a, metric) {
			arms = append(arms, a)
		}
	}
	return arms, nil
}

// fig10Mark adds arm a's mark to cfg's panel: computed with CIs when it
// has per-task tokens, else from printed aggregates, else it is noted as
// not plotted.
func fig10Mark(fig string, c *chart, ps *panelSpec, lg *fig10Legend, d Data, in *input, opts Options, cfg string, a runrecord.Arm) error {
	bench, metric := in.bench, in.metric
	sel := metrics.Selector{Benchmark: bench, Config: cfg, Arm: a, Metric: metric}
	tok, err := tokensMillions(in.ix, sel)
	if err != nil {
		return fmt.Errorf("%s: %w", fig, err)
	}
	c.colors[armName(a)] = armColor(a)
	if len(tok) > 0 {
		return fig10Computed(fig, c, ps, lg, in, opts, sel, tok)
	}
	rs, okS := reportedValue(d.Reported, bench, cfg, a, metric)
	rt, okT := reportedValue(sameTableFirst(d.Reported, rs.Table), bench, cfg, a, "tokens_m")
	if !okS || !okT {
		lg.notPlotted = append(lg.notPlotted, armName(a))
		return nil
	}
	src := map[string]bool{rs.Table: true, rt.Table: true}
	ps.legends[armName(a)] = armName(a)
	for t := range src {
		lg.reportedIn[t] = true
	}
	c.points = append(c.points,
		Point{Panel: cfg, Series: armName(a), X: "tokens_m", Y: rt.Value, Lo: math.NaN(), Hi: math.NaN(), Source: reportedSource(rt.Table)},
		Point{Panel: cfg, Series: armName(a), X: "score", Y: rs.Value, Lo: math.NaN(), Hi: math.NaN(), Source: reportedSource(rs.Table)})
	return nil
}

// fig10Computed adds sel's computed mark: score and tokens means with 95%
// bootstrap CIs from one paired draw of tasks.
func fig10Computed(fig string, c *chart, ps *panelSpec, lg *fig10Legend, in *input, opts Options, sel metrics.Selector, tok map[string]float64) error {
	cfg, a := sel.Config, sel.Arm
	v, err := in.ix.TaskValues(sel)
	if err != nil {
		return fmt.Errorf("%s: %w", fig, err)
	}
	tasks, sv, tv, err := metrics.Align(v, tok)
	if err != nil {
		return fmt.Errorf("%s: %s: scores and tokens: %w", fig, sel, err)
	}
	data := make([][]float64, len(tasks))
	for i := range tasks {
		data[i] = []float64{sv[i], tv[i]}
	}
	ivs, err := bootstrap.Percentile(data, opts.Bootstrap)
	if err != nil {
		return fmt.Errorf("%s: %s: %w", fig, sel, err)
	}
	sc, tk := ivs[0], ivs[1]
	ps.legends[armName(a)] = armName(a)
	lg.kinds["computed"] = true
	c.points = append(c.points,
		Point{Panel: cfg, Series: armName(a), X: "tokens_m", Y: tk.Mean, Lo: tk.Lo, Hi: tk.Hi, N: len(tasks), Source: computed},
		Point{Panel: cfg, Series: armName(a), X: "score", Y: sc.Mean, Lo: sc.Lo, Hi: sc.Hi, N: len(tasks), Source: computed})
	return nil
}

// sameTableFirst orders printed values so that those of table come first.
func sameTableFirst(rs []paper.Reported, table string) []paper.Reported {
	out := make([]paper.Reported, 0, len(rs))
	for _, r := range rs {
		if r.Table == table {
			out = append(out, r)
		}
	}
	for _, r := range rs {
		if r.Table != table {
			out = append(out, r)
		}
	}
	return out
}

func isAblation(c string) bool {
	for _, a := range ablationConditions {
		if a == c {
			return true
		}
	}
	return false
}

// fig11: per-invocation tokens by role. A point is one task: the mean total
// tokens (input + output) of its invocations of that role over every trial
// of the task in the data; boxes show median and quartiles over tasks.
func fig11(d Data, opts Options) (*figure, error) { return renderData(fig11Data(d, opts)) }

// fig11Data computes Figure 11's data.
func fig11Data(d Data, opts Options) (*chart, error) {
	const fig = "fig11"
	var invs []Invocation
	for _, inv := range d.Usage {
		if opts.Benchmark == "" || inv.Benchmark == opts.Benchmark {
			invs = append(invs, inv)
		}
	}
	if len(invs) == 0 {
		return nil, missing(fig, "no usage.jsonl invocations in the given records")
	}
	pseudo := make([]runrecord.Row, len(invs))
	for i, inv := range invs {
		pseudo[i] = runrecord.Row{Config: inv.Config}
	}
	cfgs := configsOf(pseudo, opts)
	if len(cfgs) == 0 {
		return nil, missing(fig, "no invocations for configurations %s", strings.Join(opts.Configs, ", "))
	}
	scale, unit := 1e-3, "thousands"
	for _, inv := range invs {
		if inv.Total >= 1e6 {
			scale, unit = 1e-6, "M"
			break
		}
	}
	cols := min(len(cfgs), 3)
	c := &chart{cols: cols, rowHeight: 2.3 * vg.Inch, legendNotes: []string{"box: median and interquartile range over tasks"}}
	for pi, cfg := range cfgs {
		sum := map[string]map[string]float64{} // role -> task -> tokens
		cnt := map[string]map[string]int{}
		for _, inv := range invs {
			if inv.Config != cfg {
				continue
			}
			if sum[inv.Role] == nil {
				sum[inv.Role], cnt[inv.Role] = map[string]float64{}, map[string]int{}
			}
			sum[inv.Role][inv.Task] += float64(inv.Total)
			cnt[inv.Role][inv.Task]++
		}
		roles := orderRoles(sum)
		c.panels = append(c.panels, panelSpec{key: cfg, kind: roleBoxesPanel, title: panelLetter(pi, len(cfgs), configName(cfg)),
			xLabel: "Role", yLabel: "Tokens per invocation (" + unit + ")", categories: roles})
		for _, role := range roles {
			tasks := metrics.Tasks(sum[role])
			vals := make(plotter.Values, len(tasks))
			for i, t := range tasks {
				vals[i] = sum[role][t] / float64(cnt[role][t]) * scale
				c.points = append(c.points, Point{Panel: cfg, Series: "task:" + t, X: role, Y: vals[i], Lo: math.NaN(), Hi: math.NaN(), N: cnt[role][t], Source: computed})
			}
			// The box's median and quartiles as gonum's box plot computes
			// them, so the CSV states what is drawn.
			box, err := plotter.NewBoxPlot(vg.Points(22), 0, vals)
			if err != nil {
				return nil, err
			}
			c.points = append(c.points, Point{Panel: cfg, Series: "box", X: role, Y: box.Median, Lo: box.Quartile1, Hi: box.Quartile3, N: len(tasks), Source: computed})
		}
	}
	c.title = withScope("Per-invocation coding-harness tokens by role (compare within a panel)", d)
	return c, nil
}

func orderRoles(m map[string]map[string]float64) []string {
	var out, rest []string
	for _, r := range runrecord.Roles {
		if _, ok := m[string(r)]; ok {
			out = append(out, string(r))
		}
	}
	for r := range m {
		if !runrecord.Role(r).Valid() {
			rest = append(rest, r)
		}
	}
	sort.Strings(rest)
	return append(out, rest...)
}

// deltas: per-task HoH@3 minus Vanilla, sorted ascending, one panel per
// configuration, with the mean delta dashed.
func deltas(d Data, opts Options) (*figure, error) { return renderData(deltasData(d, opts)) }

// deltasData computes the deltas figure's data.
func deltasData(d Data, opts Options) (*chart, error) {
	const fig = "deltas"
	in, err := inputOf(fig, 2, d, opts)
	if err != nil {
		return nil, err
	}
	bench, rows, ix, metric, arms := in.bench, in.rows, in.ix, in.metric, in.arms
	hoh3, vanilla := arms[0], arms[1] // the delta is the first minus the second
	var cfgs []string
	for _, c := range configsOf(rows, opts) {
		if hasArm(ix, c, vanilla, metric) || hasArm(ix, c, hoh3, metric) {
			cfgs = append(cfgs, c)
		}
	}
	if len(cfgs) == 0 {
		return nil, missing(fig, "no %s rows of %s or %s for benchmark %s", metric, vanilla, hoh3, bench)
	}
	cols := min(len(cfgs), 3)
	c := &chart{cols: cols, rowHeight: 2.2 * vg.Inch}
	unit := "points"
	if metric != "overall" {
		unit = metric
	}
	for pi, cfg := range cfgs {
		var vals [2]map[string]float64
		for i, a := range []runrecord.Arm{hoh3, vanilla} {
			if !hasArm(ix, cfg, a, metric) {
				return nil, missing(fig, "no %s rows for %s %s", metric, cfg, a)
			}
			if vals[i], err = ix.TaskValues(metrics.Selector{Benchmark: bench, Config: cfg, Arm: a, Metric: metric}); err != nil {
				return nil, fmt.Errorf("%s: %w", fig, err)
			}
		}
		delta, err := metrics.Delta(vals[0], vals[1])
		if err != nil {
			return nil, fmt.Errorf("%s: %s: %w", fig, cfg, err)
		}
		mean, err := metrics.Summarize(delta)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", fig, err)
		}
		tasks := metrics.Tasks(delta)
		sort.SliceStable(tasks, func(i, j int) bool { return delta[tasks[i]] < delta[tasks[j]] })
		for _, t := range tasks {
			c.points = append(c.points, Point{Panel: cfg, Series: "delta", X: t, Y: delta[t], Lo: math.NaN(), Hi: math.NaN(), N: 1, Source: computed})
		}
		c.points = append(c.points, Point{Panel: cfg, Series: "mean", X: "all", Y: mean.Mean, Lo: math.NaN(), Hi: math.NaN(), N: mean.N, Source: computed})
		c.panels = append(c.panels, panelSpec{key: cfg, kind: sortedDeltasPanel,
			title:  panelLetter(pi, len(cfgs), fmt.Sprintf("%s, mean %+.2f", configName(cfg), mean.Mean)),
			xLabel: fmt.Sprintf("Tasks, sorted by delta (n=%d)", len(tasks)), yLabel: armName(hoh3) + " − " + armName(vanilla) + " (" + unit + ")",
			upLabel: armName(hoh3) + " better", downLabel: armName(vanilla) + " better", meanLabel: "mean delta", hideYLabel: pi%cols != 0})
	}
	c.title = withScope(fmt.Sprintf("%s per-task %s − %s, sorted", benchmarkName(bench), armName(hoh3), armName(vanilla)), d)
	return c, nil
}
