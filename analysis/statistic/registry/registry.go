// Package registry lists the statistics a table config may name
// (statistics: in configs/paper/*.yaml, hoh report --statistics). Adding
// one is its package plus one line here.
package registry

import (
	"sort"

	"github.com/hoh-research/hoh/analysis/statistic"
	"github.com/hoh-research/hoh/analysis/statistic/median"
	"github.com/hoh-research/hoh/analysis/statistic/winrate"
)

var all = []statistic.Statistic{
	median.Statistic,
	winrate.Statistic,
}

// Lookup finds a statistic by name.
func Lookup(name string) (statistic.Statistic, bool) {
	for _, s := range all {
		if s.Name == name {
			return s, true
		}
	}
	return statistic.Statistic{}, false
}

// Names lists the registered statistics, sorted.
func Names() []string {
	out := make([]string, len(all))
	for i, s := range all {
		out[i] = s.Name
	}
	sort.Strings(out)
	return out
}
