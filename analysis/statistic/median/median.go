// Package median is the median of an arm's per-task values: a statistic
// the tables can show beside the paper's mean.
package median

import (
	"sort"

	"github.com/hoh-research/hoh/analysis/statistic"
)

// Statistic is its registration.
var Statistic = statistic.Statistic{Name: "median", Label: "Median", About: "median over tasks of the table's metric",
	Compute: func(in statistic.Input) (float64, bool, error) {
		if len(in.Values) == 0 {
			return 0, false, nil
		}
		return Of(in.Values), true, nil
	}}

// Of is the median of the values (the mean of the middle two when their
// number is even).
func Of(values map[string]float64) float64 {
	vs := make([]float64, 0, len(values))
	for _, v := range values {
		vs = append(vs, v)
	}
	sort.Float64s(vs)
	n := len(vs)
	if n%2 == 1 {
		return vs[n/2]
	}
	return (vs[n/2-1] + vs[n/2]) / 2
}
