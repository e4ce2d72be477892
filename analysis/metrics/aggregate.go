package metrics

import (
	"fmt"
	"math"
	"math/big"
	"sort"
	"strings"

	"gonum.org/v1/gonum/stat"
)

// Summary is an unweighted mean over tasks (Eq. 10).
type Summary struct {
	Mean  float64  // unweighted mean over tasks
	Exact *big.Rat // the mean in rationals (SummarizeExact); nil from Summarize
	N     int      // number of tasks
	SE    float64  // sample sd over tasks / sqrt(N); NaN when N < 2
}

// Summarize averages per-task values with equal weight per task. An empty
// series is an error because a mean over no tasks has no meaning.
func Summarize(values map[string]float64) (Summary, error) {
	if len(values) == 0 {
		return Summary{}, fmt.Errorf("metrics: no tasks to average")
	}
	xs := make([]float64, 0, len(values))
	for _, t := range Tasks(values) { // sorted: same float sum every run
		xs = append(xs, values[t])
	}
	return summarize(xs), nil
}

// summarize is Summarize of the values in task order (at least one).
func summarize(xs []float64) Summary {
	s := Summary{Mean: stat.Mean(xs, nil), N: len(xs), SE: math.NaN()}
	if len(xs) > 1 {
		s.SE = stat.StdDev(xs, nil) / math.Sqrt(float64(len(xs)))
	}
	return s
}

// SummarizeBy averages per-task values within each label (group, category,
// family): label -> Summary. A task without a label is an error naming it, so
// no task silently drops out of a subset mean.
func SummarizeBy(values map[string]float64, labelOf map[string]string) (map[string]Summary, error) {
	parts := map[string]map[string]float64{}
	var unlabelled []string
	for t, v := range values {
		l, ok := labelOf[t]
		if !ok || l == "" {
			unlabelled = append(unlabelled, t)
			continue
		}
		if parts[l] == nil {
			parts[l] = map[string]float64{}
		}
		parts[l][t] = v
	}
	if len(unlabelled) > 0 {
		sort.Strings(unlabelled)
		return nil, fmt.Errorf("metrics: tasks without a label: %s", strings.Join(unlabelled, ", "))
	}
	out := make(map[string]Summary, len(parts))
	for l, p := range parts {
		s, err := Summarize(p)
		if err != nil {
			return nil, err
		}
		out[l] = s
	}
	return out, nil
}

// Delta returns per-task treated - baseline (e.g. HoH@3 - Vanilla). Both must
// cover the same tasks.
func Delta(treated, baseline map[string]float64) (map[string]float64, error) {
	tasks, a, b, err := Align(treated, baseline)
	if err != nil {
		return nil, err
	}
	out := make(map[string]float64, len(tasks))
	for i, t := range tasks {
		out[t] = a[i] - b[i]
	}
	return out, nil
}

// MeanDelta returns mean(treated) - mean(baseline) over the same tasks; with
// equal task sets this equals the mean of the per-task deltas.
func MeanDelta(treated, baseline map[string]float64) (float64, error) {
	d, err := Delta(treated, baseline)
	if err != nil {
		return 0, err
	}
	s, err := Summarize(d)
	return s.Mean, err
}

// Weights are the GameCraft component weights of Eq. 9.
type Weights struct {
	Mechanics, Depth, Visuals, Art float64
}

// PaperWeights are Eq. 9's weights, used by 135 of the 140 GameCraft tasks.
var PaperWeights = Weights{Mechanics: 0.15, Depth: 0.35, Visuals: 0.15, Art: 0.35}

// VisualNovelWeights are the rubric weights of the benchmark's five
// visual-novel tasks that differ from the paper's.
var VisualNovelWeights = Weights{Mechanics: 0.20, Depth: 0.30, Visuals: 0.15, Art: 0.35}

// Overall is the GameCraft Overall (Eq. 9) on the 0-100 scale: components
// m, d, v, a are category means on the 0-100 presentation scale; a failed
// build scores 0; the result is clamped to [0, 100] as the benchmark clamps
// its reward to [0, 1].
func Overall(m, d, v, a float64, build bool, w Weights) float64 {
	if !build {
		return 0
	}
	s := w.Mechanics*m + w.Depth*d + w.Visuals*v + w.Art*a
	return math.Min(100, math.Max(0, s))
}

// Metric names of the GameCraft components in the record format.
const (
	MetricOverall   = "overall"
	MetricMechanics = "mechanics"
	MetricDepth     = "depth"
	MetricVisuals   = "visuals"
	MetricArt       = "art"
	MetricBuild     = "build" // 1 when the artifact builds and runs, else 0
)

// OverallFromComponents recomputes Eq. 9 per trial from the component rows of
// sel's arm (sel.Metric is ignored) and then averages repetitions per task.
// The gate is applied per trial before averaging because it is not linear.
// weightsFor gives each task's weights (nil means PaperWeights). A trial
// lacking a component is an error naming task, repetition and metric.
func (x *Index) OverallFromComponents(sel Selector, weightsFor func(task string) Weights) (map[string]float64, error) {
	type trial struct {
		task string
		rep  int
	}
	comps := map[trial]map[string]float64{}
	for _, i := range x.armRows(sel) {
		r := x.row(i)
		switch r.Metric {
		case MetricMechanics, MetricDepth, MetricVisuals, MetricArt, MetricBuild:
		default:
			continue
		}
		k := trial{r.Task, r.Rep}
		if comps[k] == nil {
			comps[k] = map[string]float64{}
		}
		comps[k][r.Metric] = r.Value
	}
	if len(comps) == 0 {
		return nil, fmt.Errorf("metrics: no component rows for %s/%s/%s", sel.Benchmark, sel.Config, sel.Arm)
	}
	perTask := map[string][]float64{}
	for k, c := range comps {
		for _, m := range []string{MetricMechanics, MetricDepth, MetricVisuals, MetricArt, MetricBuild} {
			if _, ok := c[m]; !ok {
				return nil, fmt.Errorf("metrics: %s/%s/%s task %s rep %d lacks metric %s",
					sel.Benchmark, sel.Config, sel.Arm, k.task, k.rep, m)
			}
		}
		w := PaperWeights
		if weightsFor != nil {
			w = weightsFor(k.task)
		}
		perTask[k.task] = append(perTask[k.task], Overall(c[MetricMechanics], c[MetricDepth], c[MetricVisuals], c[MetricArt], c[MetricBuild] != 0, w))
	}
	out := make(map[string]float64, len(perTask))
	for t, vs := range perTask {
		out[t] = ExactMean(vs)
	}
	return out, nil
}
