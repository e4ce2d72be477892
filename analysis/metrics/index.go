package metrics

import (
	"bytes"
	"iter"
	"math"
	"math/big"
	"slices"
	"strconv"

	"github.com/hoh-research/hoh/analysis/results"
	"github.com/hoh-research/hoh/runrecord"
)

// Index holds result rows grouped once by series (benchmark, configuration,
// arm, metric) and by trial arm (benchmark, configuration, arm), so every
// statistic reads only its own rows: building a table or figure is linear in
// the number of rows instead of rows x cells. Per-task series are computed
// once and shared; callers must not modify the maps it returns.
type Index struct {
	t      *runrecord.ScoreTable
	series map[Selector][]int32
	arms   map[armKey][]int32
	order  []Selector // series in first-appearance order

	values map[Selector]map[string]float64
	exact  map[Selector]map[string]*big.Rat
	labels map[labelKey]labelled
	tasks  map[string][]int32 // benchmark -> first row of each task
	tokens map[armKey]armTokens
	where  func(i int) string // file and line of row i; nil: its source

	slot, stamp []int32 // taskExactScaled's per-task scratch
	stampN      int32
	// rats are the task means taskExactScaled made, by numerator and
	// denominator: scores repeat, and a shared value is never modified.
	rats map[[2]int64]*big.Rat

	armGroups *runrecord.Groups
	armOrder  []uint32
}

// NewSetIndex indexes a loaded set: errors name a row's file and line.
func NewSetIndex(set *results.Set) *Index {
	x := newIndex(set.Table(), set.Series(), set.Arms())
	x.where = set.Where
	return x
}

// at names where row i was read.
func (x *Index) at(i int32) string {
	if x.where != nil {
		return x.where(int(i))
	}
	return x.row(i).Source
}

// row returns row i.
func (x *Index) row(i int32) runrecord.Row { return x.t.Row(int(i)) }

type armKey struct {
	Benchmark, Config string
	Arm               runrecord.Arm
}

type labelKey struct {
	benchmark string
	g         Grouping
}

type labelled struct {
	of  map[string]string
	err error
}

// NewIndex groups rows; it keeps a compact copy of them.
func NewIndex(rows []runrecord.Row) *Index {
	t := runrecord.NewScoreTable(len(rows))
	for _, r := range rows {
		t.Append(r)
	}
	return newIndex(t, t.GroupRows(t.NumSeries(), func(i int) (uint32, bool) { return t.SeriesID(i), true }),
		t.GroupRows(t.NumArms(), func(i int) (uint32, bool) { return t.ArmID(i), true }))
}

// newIndex names a table's groups once (rows are grouped by interned ids:
// no string is hashed per row). A benchmark's rows are gathered when first
// asked for.
func newIndex(t *runrecord.ScoreTable, series, arms *runrecord.Groups) *Index {
	x := &Index{
		t:      t,
		series: map[Selector][]int32{},
		arms:   map[armKey][]int32{},
		values: map[Selector]map[string]float64{},
		exact:  map[Selector]map[string]*big.Rat{},
		labels: map[labelKey]labelled{},
		tasks:  map[string][]int32{},
		tokens: map[armKey]armTokens{},
		rats:   map[[2]int64]*big.Rat{},
	}
	arm := func(id uint32) armKey {
		a := t.Arm(id)
		return armKey{t.Name(a.Benchmark), t.Name(a.Config), runrecord.Arm{Condition: t.Name(a.Condition), Checkpoint: int(a.Checkpoint)}}
	}
	for g, id := range series.Keys {
		s := t.Series(id)
		a := arm(s.Arm)
		sel := Selector{a.Benchmark, a.Config, a.Arm, t.Name(s.Metric)}
		x.order = append(x.order, sel)
		x.series[sel] = series.Of(g)
	}
	for g, id := range arms.Keys {
		x.arms[arm(id)] = arms.Of(g)
		x.armOrder = append(x.armOrder, id)
	}
	x.armGroups = arms
	return x
}

// benchRows yields a benchmark's rows in row order: its arms are marked
// and the rows scanned once, about the cost of reading a kept list of
// them, without keeping 4 bytes a row.
func (x *Index) benchRows(benchmark string) iter.Seq[int32] {
	mine := make([]bool, x.t.NumArms())
	for _, id := range x.armOrder {
		mine[id] = x.t.Name(x.t.Arm(id).Benchmark) == benchmark
	}
	return func(yield func(int32) bool) {
		for i := range x.t.Len() {
			if mine[x.t.ArmID(i)] && !yield(int32(i)) {
				return
			}
		}
	}
}

// Rows yields the indexed rows in their original order.
func (x *Index) Rows() iter.Seq[runrecord.Row] {
	return func(yield func(runrecord.Row) bool) {
		for i := range x.t.Len() {
			if !yield(x.t.Row(i)) {
				return
			}
		}
	}
}

// TokenBenchmarks lists the benchmarks with a row that has tokens, in
// first-appearance order of their arms: one pass over row ids, no row built.
func (x *Index) TokenBenchmarks() []string {
	has := make([]bool, x.t.NumArms())
	for i := range x.t.Len() {
		if !math.IsNaN(x.t.Tokens(i)) {
			has[x.t.ArmID(i)] = true
		}
	}
	var out []string
	for _, id := range x.armOrder {
		if b := x.t.Name(x.t.Arm(id).Benchmark); has[id] && !slices.Contains(out, b) {
			out = append(out, b)
		}
	}
	return out
}

// SourceConfigs returns the configurations with a row whose source
// satisfies match, and whether every row's does. match is asked once per
// distinct source, and a row is read by its ids, not built.
func (x *Index) SourceConfigs(match func(source string) bool) (configs []string, all bool) {
	verdict := make([]int8, x.t.Names()) // by source name id: 0 unasked, 1 no, 2 yes
	has := make([]bool, x.t.NumArms())
	all = true
	for i := range x.t.Len() {
		src := x.t.Source(i)
		if verdict[src] == 0 {
			verdict[src] = 1
			if match(x.t.Name(src)) {
				verdict[src] = 2
			}
		}
		if verdict[src] == 2 {
			has[x.t.ArmID(i)] = true
		} else {
			all = false
		}
	}
	for _, id := range x.armOrder {
		if c := x.t.Name(x.t.Arm(id).Config); has[id] && !slices.Contains(configs, c) {
			configs = append(configs, c)
		}
	}
	return configs, all
}

// Has reports whether any row belongs to the series sel.
func (x *Index) Has(sel Selector) bool { return len(x.series[sel]) > 0 }

// HasArm reports whether any row of any metric belongs to sel's arm
// (sel.Metric is ignored).
func (x *Index) HasArm(sel Selector) bool {
	return len(x.arms[armKey{sel.Benchmark, sel.Config, sel.Arm}]) > 0
}

// Selectors lists every series present, in first-appearance order.
func (x *Index) Selectors() []Selector { return x.order }

func (x *Index) armRows(sel Selector) []int32 {
	return x.arms[armKey{sel.Benchmark, sel.Config, sel.Arm}]
}

// Benchmarks lists the benchmarks present, in first-appearance order.
func (x *Index) Benchmarks() []string {
	var out []string
	seen := map[string]bool{}
	for _, s := range x.order {
		if !seen[s.Benchmark] {
			seen[s.Benchmark] = true
			out = append(out, s.Benchmark)
		}
	}
	return out
}

// BenchmarkRows returns the rows of one benchmark in their original order.
func (x *Index) BenchmarkRows(benchmark string) []runrecord.Row {
	out := []runrecord.Row{}
	for i := range x.benchRows(benchmark) {
		out = append(out, x.row(i))
	}
	return out
}

// TaskFirstRows returns the first row of each task of a benchmark, in the
// order the tasks first appear.
func (x *Index) TaskFirstRows(benchmark string) []runrecord.Row {
	idx, ok := x.tasks[benchmark]
	if !ok {
		seen := make([]bool, x.t.Names()) // by name id: no row built, no hashing per row
		for i := range x.benchRows(benchmark) {
			if t := x.t.Task(int(i)); !seen[t] {
				seen[t] = true
				idx = append(idx, i)
			}
		}
		x.tasks[benchmark] = idx
	}
	out := make([]runrecord.Row, len(idx))
	for i, j := range idx {
		out[i] = x.row(j)
	}
	return out
}

// TaskNames lists the tasks of a series without computing their values.
func (x *Index) TaskNames(sel Selector) []string {
	if v, ok := x.values[sel]; ok {
		return Tasks(v)
	}
	var out []string
	seen := make([]bool, x.t.Names()) // by name id: no row built, no hashing per row
	for _, i := range x.series[sel] {
		if t := x.t.Task(int(i)); !seen[t] {
			seen[t] = true
			out = append(out, x.t.Name(t))
		}
	}
	return out
}

// TaskValues returns task -> value for the selector: the exact mean of the
// task's repetitions (TaskExact), rounded once to the nearest float64. It is
// an error if no row matches. The map is shared: do not modify it.
func (x *Index) TaskValues(sel Selector) (map[string]float64, error) {
	if v, ok := x.values[sel]; ok {
		return v, nil
	}
	ex, err := x.TaskExact(sel)
	if err != nil {
		return nil, err
	}
	out := Floats(ex)
	x.values[sel] = out
	return out, nil
}

// ExactMean is the mean of values, each read as the shortest decimal that
// prints it (the number as written in a record), computed exactly and
// rounded once to the nearest float64. Summing binary floats would invent
// differences: the mean of 0.1 and 0.2 would be 0.15000000000000002 and beat
// another arm's exact 0.15; here both are the float nearest 0.15, a tie.
func ExactMean(values []float64) float64 {
	switch len(values) {
	case 0:
		return 0
	case 1:
		return values[0]
	}
	if m, ok := smallDecimalMean(values); ok {
		return m
	}
	return ratMean(values)
}

// ratMean is ExactMean in rational arithmetic, for any decimals.
func ratMean(values []float64) float64 {
	var sum, v big.Rat
	var buf []byte
	for _, f := range values {
		buf = strconv.AppendFloat(buf[:0], f, 'g', -1, 64)
		if _, ok := v.SetString(string(buf)); !ok {
			panic("metrics: unparsable float " + string(buf)) // finite floats always print as decimals
		}
		sum.Add(&sum, &v)
	}
	sum.Quo(&sum, v.SetInt64(int64(len(values))))
	f, _ := sum.Float64()
	return f
}

// exactInt is the largest magnitude float64 holds with every integer below it.
const exactInt = 1 << 53

// smallDecimalMean is ExactMean for the common case of short decimals: with
// every value m_i / 10^s at one scale s and the sum and count*10^s below
// 2^53, the mean sum(m_i) / (count*10^s) is a ratio of two exactly held
// integers, which one IEEE division rounds correctly. ok is false otherwise.
func smallDecimalMean(values []float64) (mean float64, ok bool) {
	var buf [32]byte
	scale := 0
	for _, f := range values {
		b := strconv.AppendFloat(buf[:0], f, 'f', -1, 64)
		if i := bytes.IndexByte(b, '.'); i >= 0 {
			scale = max(scale, len(b)-i-1)
		}
	}
	if scale > 15 {
		return 0, false
	}
	pow := int64(1)
	for range scale {
		pow *= 10
	}
	den := int64(len(values)) * pow
	if den >= exactInt {
		return 0, false
	}
	var sum int64
	for _, f := range values {
		b := strconv.AppendFloat(buf[:0], f, 'f', -1, 64)
		frac := 0
		if i := bytes.IndexByte(b, '.'); i >= 0 {
			frac = len(b) - i - 1
			b = append(b[:i], b[i+1:]...)
		}
		if len(b) > 17 {
			return 0, false
		}
		m, err := strconv.ParseInt(string(b), 10, 64)
		if err != nil {
			return 0, false
		}
		for range scale - frac {
			if m *= 10; m >= exactInt || m <= -exactInt {
				return 0, false
			}
		}
		if m >= exactInt || m <= -exactInt {
			return 0, false
		}
		sum += m
		if sum >= exactInt || sum <= -exactInt {
			return 0, false
		}
	}
	return float64(sum) / float64(den), true
}

// SeriesRows is the number of rows of a series.
func (x *Index) SeriesRows(sel Selector) int { return len(x.series[sel]) }
