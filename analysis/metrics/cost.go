package metrics

import (
	"math/big"
)

// HasCosts reports whether any row carries a cost_usd.
func (x *Index) HasCosts() bool {
	return x.t.HasCosts()
}

// MeanCost is the exact mean over tasks of each task's mean cost over its
// repetitions; ok false when some trial of the arm has no cost (a price was
// unknown): the mean is then unknown, never a mean of the known ones.
func (x *Index) MeanCost(sel Selector) (mean *big.Rat, ok bool) {
	type trial struct {
		task string
		rep  int
	}
	cost := map[trial]*big.Rat{}
	seen := map[trial]bool{}
	for _, i := range x.armRows(sel) {
		r := x.row(i)
		k := trial{r.Task, r.Rep}
		seen[k] = true
		if r.CostUSD != nil {
			cost[k] = r.CostUSD
		}
	}
	if len(seen) == 0 || len(cost) != len(seen) {
		return nil, false
	}
	sum, reps := map[string]*big.Rat{}, map[string]int64{}
	for k, c := range cost {
		if sum[k.task] == nil {
			sum[k.task] = new(big.Rat)
		}
		sum[k.task].Add(sum[k.task], c)
		reps[k.task]++
	}
	total := new(big.Rat)
	for t, s := range sum {
		total.Add(total, new(big.Rat).Quo(s, big.NewRat(reps[t], 1)))
	}
	return total.Quo(total, big.NewRat(int64(len(sum)), 1)), true
}
