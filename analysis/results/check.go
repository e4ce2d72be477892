package results

import (
	"fmt"
	"strings"

	"github.com/hoh-research/hoh/adapters/benchmark"
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
	known := benchmark.Benchmarks()
	if _, ok := benchmark.ReportingOf(r.Benchmark); !ok {
		for _, b := range known {
			if strings.EqualFold(b, r.Benchmark) {
				return fmt.Errorf("benchmark %q: did you mean %q? (names are case-sensitive)", r.Benchmark, b)
			}
		}
	}
	metrics, open := benchmark.MetricsOf(r.Benchmark)
	var names []string
	for _, m := range metrics {
		if m.Name == r.Metric {
			if r.Value < m.Min || r.Value > m.Max {
				return fmt.Errorf("%s %s value %v is outside %g-%g", r.Benchmark, m.Name, r.Value, m.Min, m.Max)
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
			return fmt.Errorf("unknown %s metric %q: did you mean %q?", r.Benchmark, r.Metric, near)
		}
	}
	for _, b := range known {
		ms, _ := benchmark.MetricsOf(b)
		for _, m := range ms {
			if m.Name != r.Metric && strings.EqualFold(m.Name, r.Metric) {
				return fmt.Errorf("metric %q: did you mean %q? (names are case-sensitive)", r.Metric, m.Name)
			}
		}
	}
	return nil
}

func unknownName(what, name string, valid []string) error {
	if near := runrecord.Nearest(name, valid); near != "" {
		return fmt.Errorf("unknown %s %q: did you mean %q?", what, name, near)
	}
	return fmt.Errorf("unknown %s %q (known: %s)", what, name, strings.Join(valid, ", "))
}
