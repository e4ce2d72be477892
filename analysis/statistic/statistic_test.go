package statistic_test

import (
	"testing"

	"github.com/hoh-research/hoh/analysis/statistic"
	"github.com/hoh-research/hoh/analysis/statistic/median"
	"github.com/hoh-research/hoh/analysis/statistic/registry"
	"github.com/hoh-research/hoh/analysis/statistic/winrate"
)

func TestMedianAndWinRate(t *testing.T) {
	if m := median.Of(map[string]float64{"a": 3, "b": 1, "c": 2}); m != 2 {
		t.Errorf("median of 1,2,3 = %g", m)
	}
	if m := median.Of(map[string]float64{"a": 4, "b": 1, "c": 2, "d": 10}); m != 3 {
		t.Errorf("median of 1,2,4,10 = %g", m)
	}
	// a wins, b ties (half), c loses; d has no baseline and is left out.
	v, n := winrate.Of(map[string]float64{"a": 2, "b": 1, "c": 0, "d": 5}, map[string]float64{"a": 1, "b": 1, "c": 1})
	if v != 50 || n != 3 {
		t.Errorf("win rate %g over %d tasks, want 50 over 3", v, n)
	}
	if _, ok, _ := winrate.Statistic.Compute(statistic.Input{Values: map[string]float64{"a": 1}}); ok {
		t.Error("a win rate without a baseline has a value")
	}
}

func TestRegistryFindsEveryStatisticByName(t *testing.T) {
	for _, name := range registry.Names() {
		s, ok := registry.Lookup(name)
		if !ok || s.Name != name || s.Label == "" || s.About == "" || s.Compute == nil {
			t.Errorf("%s: %+v", name, s)
		}
	}
	if _, ok := registry.Lookup("mode"); ok {
		t.Error("an unregistered statistic was found")
	}
}
