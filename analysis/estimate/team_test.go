package estimate

import (
	"math"
	"math/big"
	"testing"

	"github.com/hoh-research/hoh/runrecord"
)

// A role team whose roles talk to different models is priced per role:
// each role's tokens at its own model's rate, the group's per-role shares
// adding up to its dollars; a sample not split by role gives only bounds
// over the roles' rates.
func TestATeamIsPricedPerRole(t *testing.T) {
	perMillion := func(in, out int64) runrecord.Price {
		return runrecord.Price{Input: big.NewRat(in, 1), Output: big.NewRat(out, 1)}
	}
	prices := map[runrecord.Role]runrecord.Price{runrecord.RolePlanner: perMillion(1, 2), runrecord.RoleDeveloper: perMillion(10, 20), runrecord.RoleQA: perMillion(100, 200)}
	u := func(in, out int64) runrecord.Usage { return runrecord.Usage{Input: in, Output: out, Total: in + out} }
	byRole := map[runrecord.Role]runrecord.Usage{runrecord.RolePlanner: u(1000, 10), runrecord.RoleDeveloper: u(2000, 20), runrecord.RoleQA: u(3000, 30)}
	var total runrecord.Usage
	for _, x := range byRole {
		total = total.Add(x)
	}
	est, err := Run(Input{Trials: planned(2, "team", hoh3), Concurrency: 1, RolePrices: map[string]map[runrecord.Role]runrecord.Price{"team": prices},
		Source: fixed(Sample{Usage: total, Split: true, ByRole: byRole})}, Options{Sims: 20})
	if err != nil {
		t.Fatal(err)
	}
	// Per trial: planner (1000 + 20)/1e6, developer (20000 + 400)/1e6, qa (300000 + 6000)/1e6.
	want := map[runrecord.Role]float64{runrecord.RolePlanner: 2 * 0.00102, runrecord.RoleDeveloper: 2 * 0.0204, runrecord.RoleQA: 2 * 0.306}
	g := est.Groups[0]
	if !g.Priced || !g.USD.Known || g.USD.Bounds || math.Abs(g.USD.Point-(want[runrecord.RolePlanner]+want[runrecord.RoleDeveloper]+want[runrecord.RoleQA])) > 1e-12 {
		t.Errorf("USD %+v", g.USD)
	}
	for role, w := range want {
		if math.Abs(g.RoleUSD[role]-w) > 1e-12 {
			t.Errorf("%s: $%v, want $%v", role, g.RoleUSD[role], w)
		}
	}
	// Without the split by role: bounds from the cheapest rate (planner
	// input, $1) to the dearest (qa output, $200) per million tokens.
	est, _ = Run(Input{Trials: planned(1, "team", hoh3), Concurrency: 1, RolePrices: map[string]map[runrecord.Role]runrecord.Price{"team": prices},
		Source: fixed(Sample{Usage: runrecord.Usage{Total: 1_000_000}, Split: true})}, Options{Sims: 10})
	if g := est.Groups[0].USD; !g.Bounds || g.Lo != 1 || g.Hi != 200 {
		t.Errorf("bounds %+v, want $1 to $200", g)
	}
}
