package results

import (
	"fmt"
	"math/big"
	"strings"

	"github.com/hoh-research/hoh/runrecord"
)

// CheckRow validates a row's names and value against the catalogues:
// conditions (runrecord), benchmarks and their metrics and value ranges
// (adapters/benchmark). A benchmark hoh does not know may have any name and
// metrics, but not a case variant of a known name, which would silently
// split its records from the real ones.
func CheckRow(r runrecord.Row) error {
	m, err := checkNames(r.Benchmark, r.Condition, r.Metric)
	if err != nil {
		return err
	}
	return m.check(r)
}

// metricRange is what a value of a benchmark's metric must lie in; nil:
// anything.
type metricRange struct {
	benchmark, metric string
	min, max          float64
}

func (m *metricRange) check(r runrecord.Row) error {
	if m == nil || !outside(r, m.min, m.max) {
		return nil
	}
	v := r.FormatValue()
	if len(v) > 100 {
		v = runrecord.Quote(v)
	}
	return fmt.Errorf("%s %s value %s is outside %g-%g", m.benchmark, m.metric, v, m.min, m.max)
}

// checkNames is CheckRow's verdict on the names, and the metric's range.
func checkNames(benchmark, condition, metric string) (*metricRange, error) {
	if _, ok := runrecord.LookupCondition(condition); !ok {
		var names []string
		for _, c := range runrecord.Conditions() {
			names = append(names, c.Name)
		}
		return nil, unknownName("condition", condition, names)
	}
	known := runrecord.KnownBenchmarks()
	if _, ok := runrecord.ReportingOf(benchmark); !ok {
		for _, b := range known {
			if strings.EqualFold(b, benchmark) {
				return nil, fmt.Errorf("benchmark %s: did you mean %q? (names are case-sensitive)", runrecord.Quote(benchmark), b)
			}
		}
	}
	metrics, open := runrecord.MetricsOf(benchmark)
	var names []string
	for _, m := range metrics {
		if m.Name == metric {
			return &metricRange{benchmark, m.Name, m.Min, m.Max}, nil
		}
		names = append(names, m.Name)
	}
	// Other metrics are allowed (a lab's own, e.g. a duration), but not a
	// mistyping of one of the benchmark's (any near name) or a case variant
	// of any known metric; a benchmark whose metric names are open (every
	// key of a Harbor reward.json) is held to the case rule only.
	if !open {
		if near := runrecord.Nearest(metric, names); near != "" {
			return nil, fmt.Errorf("unknown %s metric %s: did you mean %q?", benchmark, runrecord.Quote(metric), near)
		}
	}
	for _, b := range known {
		ms, _ := runrecord.MetricsOf(b)
		for _, m := range ms {
			if m.Name != metric && strings.EqualFold(m.Name, metric) {
				return nil, fmt.Errorf("metric %s: did you mean %q? (names are case-sensitive)", runrecord.Quote(metric), m.Name)
			}
		}
	}
	return nil, nil
}

// checker is CheckRow over a table's rows, the names' verdict computed
// once per series.
type checker struct {
	t    *runrecord.ScoreTable
	memo []checked // by series id
}

type checked struct {
	done bool
	m    *metricRange
	err  error
}

func newChecker(t *runrecord.ScoreTable) *checker { return &checker{t: t} }

func (c *checker) row(i int) error {
	id := c.t.SeriesID(i)
	for int(id) >= len(c.memo) {
		c.memo = append(c.memo, checked{})
	}
	v := &c.memo[id]
	if !v.done {
		s := c.t.Series(id)
		a := c.t.Arm(s.Arm)
		v.m, v.err = checkNames(c.t.Name(a.Benchmark), c.t.Name(a.Condition), c.t.Name(s.Metric))
		v.done = true
	}
	if v.err != nil {
		return v.err
	}
	if v.m == nil {
		return nil
	}
	value, exact, _ := c.t.Value(i)
	if exact == nil && value >= v.m.min && value <= v.m.max {
		return nil
	}
	return v.m.check(c.t.Row(i))
}

func unknownName(what, name string, valid []string) error {
	if near := runrecord.Nearest(name, valid); near != "" {
		return fmt.Errorf("unknown %s %s: did you mean %q?", what, runrecord.Quote(name), near)
	}
	return fmt.Errorf("unknown %s %s (known: %s)", what, runrecord.Quote(name), strings.Join(valid, ", "))
}

// outside compares the value as written with a metric's range: a float
// would let 100.000000000000000001 pass as 100.
func outside(r runrecord.Row, lo, hi float64) bool {
	if r.Exact == nil {
		return r.Value < lo || r.Value > hi
	}
	return r.Exact.Cmp(new(big.Rat).SetFloat64(lo)) < 0 || r.Exact.Cmp(new(big.Rat).SetFloat64(hi)) > 0
}
