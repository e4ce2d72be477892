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
func CheckRow(r Row) error {
	if _, ok := runrecord.LookupCondition(r.Condition); !ok {
		var names []string
		for _, c := range runrecord.Conditions() {
			names = append(names, c.Name)
		}
		return unknownName("condition", r.Condition, names)
	}
	known := runrecord.KnownBenchmarks()
	if _, ok := runrecord.ReportingOf(r.Benchmark); !ok {
		for _, b := range known {
			if strings.EqualFold(b, r.Benchmark) {
				return fmt.Errorf("benchmark %s: did you mean %q? (names are case-sensitive)", runrecord.Quote(r.Benchmark), b)
			}
		}
	}
	metrics, open := runrecord.MetricsOf(r.Benchmark)
	var names []string
	for _, m := range metrics {
		if m.Name == r.Metric {
			if outside(r, m.Min, m.Max) {
				v := r.FormatValue()
				if len(v) > 100 {
					v = runrecord.Quote(v)
				}
				return fmt.Errorf("%s %s value %s is outside %g-%g", r.Benchmark, m.Name, v, m.Min, m.Max)
			}
			return nil
		}
		names = append(names, m.Name)
	}
	// Other metrics are allowed (a lab's own, e.g. a duration), but not a
	// mistyping of one of the benchmark's (any near name) or a case variant
	// of any known metric; a benchmark whose metric names are open (every
	// key of a Harbor reward.json) is held to the case rule only.
	if !open {
		if near := runrecord.Nearest(r.Metric, names); near != "" {
			return fmt.Errorf("unknown %s metric %s: did you mean %q?", r.Benchmark, runrecord.Quote(r.Metric), near)
		}
	}
	for _, b := range known {
		ms, _ := runrecord.MetricsOf(b)
		for _, m := range ms {
			if m.Name != r.Metric && strings.EqualFold(m.Name, r.Metric) {
				return fmt.Errorf("metric %s: did you mean %q? (names are case-sensitive)", runrecord.Quote(r.Metric), m.Name)
			}
		}
	}
	return nil
}

func unknownName(what, name string, valid []string) error {
	if near := runrecord.Nearest(name, valid); near != "" {
		return fmt.Errorf("unknown %s %s: did you mean %q?", what, runrecord.Quote(name), near)
	}
	return fmt.Errorf("unknown %s %s (known: %s)", what, runrecord.Quote(name), strings.Join(valid, ", "))
}

// outside compares the value as written with a metric's range: a float
// would let 100.000000000000000001 pass as 100.
func outside(r Row, lo, hi float64) bool {
	if r.Exact == nil {
		return r.Value < lo || r.Value > hi
	}
	return r.Exact.Cmp(new(big.Rat).SetFloat64(lo)) < 0 || r.Exact.Cmp(new(big.Rat).SetFloat64(hi)) > 0
}
