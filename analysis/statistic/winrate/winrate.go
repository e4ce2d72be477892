// Package winrate is the share of tasks on which an arm beats its baseline
// arm (ties count half), in percent, over the tasks both have.
package winrate

import "github.com/hoh-research/hoh/analysis/statistic"

// Statistic is its registration.
var Statistic = statistic.Statistic{Name: "win_rate", Label: "Win rate vs Vanilla (%)", NeedsBaseline: true,
	About: "share of tasks where the arm scores above the baseline arm (ties count half), in percent",
	Compute: func(in statistic.Input) (float64, bool, error) {
		v, n := Of(in.Values, in.Baseline)
		return v, n > 0, nil
	}}

// Of is the win rate of values over baseline in percent and the number of
// tasks both have.
func Of(values, baseline map[string]float64) (float64, int) {
	var wins float64
	n := 0
	for t, v := range values {
		b, ok := baseline[t]
		if !ok {
			continue
		}
		n++
		switch {
		case v > b:
			wins++
		case v == b:
			wins += 0.5
		}
	}
	if n == 0 {
		return 0, 0
	}
	return 100 * wins / float64(n), n
}
