// Package metrics turns result records into the paper's per-task values and
// aggregates (appendix B.7): per-task selection, unweighted task means
// (Eq. 10), the GameCraft Overall (Eq. 9), deltas against Vanilla, mean
// cumulative tokens (Eq. 11) and token efficiency eta (Eq. 12).
//
// Assumptions, stated once:
//   - A task's value is the mean of its repetitions; repetitions are averaged
//     per task before any task-level statistic, so a task with more
//     repetitions never weighs more than one with fewer.
//   - Every aggregate is an unweighted mean over tasks (each task counts once).
//   - Standard errors treat tasks as an i.i.d. sample: sample standard
//     deviation (n-1) over tasks divided by sqrt(n). They describe spread over
//     tasks, not judge or run-to-run noise.
package metrics

import (
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/hoh-research/hoh/runrecord"
)

// Selector names one series of per-task values: a metric of one arm of one
// configuration on one benchmark.
type Selector struct {
	Benchmark string
	Config    string
	Arm       runrecord.Arm
	Metric    string
}

func (s Selector) String() string {
	return fmt.Sprintf("%s/%s/%s/%s", s.Benchmark, s.Config, s.Arm, s.Metric)
}

// Tasks returns the keys of a per-task map in sorted order.
func Tasks(values map[string]float64) []string {
	out := make([]string, 0, len(values))
	for t := range values {
		out = append(out, t)
	}
	sort.Strings(out)
	return out
}

// Align pairs two per-task series on the same tasks (sorted). A task present
// in one series but not the other is an error naming it, because every
// paired statistic needs both values of a task.
func Align(a, b map[string]float64) (tasks []string, av, bv []float64, err error) {
	var onlyA, onlyB []string
	for t := range a {
		if _, ok := b[t]; !ok {
			onlyA = append(onlyA, t)
		}
	}
	for t := range b {
		if _, ok := a[t]; !ok {
			onlyB = append(onlyB, t)
		}
	}
	if len(onlyA)+len(onlyB) > 0 {
		sort.Strings(onlyA)
		sort.Strings(onlyB)
		var parts []string
		if len(onlyA) > 0 {
			parts = append(parts, "only in the first: "+strings.Join(onlyA, ", "))
		}
		if len(onlyB) > 0 {
			parts = append(parts, "only in the second: "+strings.Join(onlyB, ", "))
		}
		return nil, nil, nil, fmt.Errorf("metrics: series do not cover the same tasks (%s)", strings.Join(parts, "; "))
	}
	tasks = Tasks(a)
	av = make([]float64, len(tasks))
	bv = make([]float64, len(tasks))
	for i, t := range tasks {
		av[i], bv[i] = a[t], b[t]
	}
	return tasks, av, bv, nil
}

// ErrNoLabels reports that no row of a benchmark carries a grouping's label.
var ErrNoLabels = errors.New("the records carry no such label")

// Grouping is a task attribute used to report subsets of a benchmark.
type Grouping string

// Groupings carried by the record format.
const (
	Family   Grouping = "family"
	Group    Grouping = "group"
	Category Grouping = "category"
)

func (g Grouping) of(r runrecord.Row) (string, error) {
	switch g {
	case Family:
		return r.Family, nil
	case Group:
		return r.Group, nil
	case Category:
		return r.Category, nil
	}
	return "", fmt.Errorf("metrics: unknown grouping %q (want family, group or category)", string(g))
}

// Labels returns task -> label of the grouping for one benchmark, read from
// every row of that benchmark that carries the label. A task labelled two
// different ways is an error naming both sources. The map is shared: do not
// modify it.
func (x *Index) Labels(benchmark string, g Grouping) (map[string]string, error) {
	k := labelKey{benchmark, g}
	if l, ok := x.labels[k]; ok {
		return l.of, l.err
	}
	of, err := x.readLabels(benchmark, g)
	x.labels[k] = labelled{of, err}
	return of, err
}

func (x *Index) readLabels(benchmark string, g Grouping) (map[string]string, error) {
	out := map[string]string{}
	// By task name id: the labels id of its last row (plus 1), and the last
	// row with its label, named only in an error. A row with the same labels
	// as its task's last one reads the same label: only its row is noted, so
	// no row is built and no string hashed per row.
	seen := make([]uint32, x.t.Names())
	from := make([]int32, x.t.Names())
	labelled := make([]bool, x.t.Names()) // the last row read had a label
	for i := range x.benchRows(benchmark) {
		task, ls := x.t.Task(int(i)), x.t.LabelsID(int(i))+1
		if seen[task] == ls {
			if labelled[task] {
				from[task] = i
			}
			continue
		}
		seen[task] = ls
		r := x.row(i)
		l, err := g.of(r)
		if err != nil {
			return nil, err
		}
		if labelled[task] = l != ""; !labelled[task] {
			continue
		}
		if prev, ok := out[r.Task]; ok && prev != l {
			return nil, fmt.Errorf("metrics: %s task %s has %s %s (%s) and %s (%s)",
				benchmark, r.Task, g, runrecord.Quote(prev), x.at(from[task]), runrecord.Quote(l), x.at(i))
		}
		out[r.Task] = l
		from[task] = i
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("metrics: no %s labels for benchmark %s: %w", g, benchmark, ErrNoLabels)
	}
	return out, nil
}

// Matrix aligns several series on their common task set for a paired
// computation such as the bootstrap: data[i][j] is task tasks[i] (sorted)
// under sels[j]. Every selector must cover the same tasks; a task missing
// from some series is an error naming the task and the series.
func (x *Index) Matrix(sels ...Selector) (tasks []string, data [][]float64, err error) {
	if len(sels) == 0 {
		return nil, nil, fmt.Errorf("metrics: no series for the matrix")
	}
	series := make([]map[string]float64, len(sels))
	all := map[string]float64{}
	for j, s := range sels {
		if series[j], err = x.TaskValues(s); err != nil {
			return nil, nil, err
		}
		for t := range series[j] {
			all[t] = 0
		}
	}
	tasks = Tasks(all)
	data = make([][]float64, len(tasks))
	for i, t := range tasks {
		data[i] = make([]float64, len(sels))
		for j, s := range series {
			v, ok := s[t]
			if !ok {
				return nil, nil, fmt.Errorf("metrics: task %s is missing from %s but present in other series", t, sels[j])
			}
			data[i][j] = v
		}
	}
	return tasks, data, nil
}
