package plan

import (
	"sort"

	"github.com/hoh-research/hoh/experiments/conditions"
	"github.com/hoh-research/hoh/runrecord"
)

// TrialCost estimates a trial's cost in role invocations, which is what
// sets its wall time: a Vanilla (or Vanilla Continuation) pass is one
// Developer invocation; HoH and its ablations run Planner, Developer and QA
// each iteration, 3 units (w/o Plan Update plans only the first). Only the
// ratios matter: the cost balances shards and prices nothing.
func TrialCost(t Trial) int {
	steps := max(t.Arm.Checkpoint, 1)
	c, err := conditions.Of(t.Arm)
	if err != nil {
		return steps // not a plan's arm: one invocation a step
	}
	perStep := 1 // the Developer
	if c.QA {
		perStep++
	}
	planner := 0
	switch c.Planning {
	case conditions.PlanEachLoop:
		planner = steps
	case conditions.PlanOnce:
		planner = 1
	}
	return steps*perStep + planner
}

// Deal assigns trials to n shards, key -> shard 1..n, longest processing
// time first: the costliest trial (TrialCost) goes to the shard with the
// least cost so far, so the shards' totals differ by at most one trial's
// cost and no shard sets the wall time alone. Ties go by plan order and by
// lower shard, so the same trials always deal the same way.
func Deal(trials []Trial, n int) map[string]int {
	deal := make(map[string]int, len(trials))
	if n <= 1 {
		for _, t := range trials {
			deal[t.Key] = 1
		}
		return deal
	}
	order := make([]int, len(trials))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return TrialCost(trials[order[a]]) > TrialCost(trials[order[b]]) })
	load := make([]int, n)
	for _, i := range order {
		least := 0
		for k := 1; k < n; k++ {
			if load[k] < load[least] {
				least = k
			}
		}
		load[least] += TrialCost(trials[i])
		deal[trials[i].Key] = least + 1
	}
	return deal
}

// dealOf is the lock that shards the plan n ways: the resumed run's when it
// was sharded n ways (a legacy lock without a deal keeps its hash), else a
// fresh deal by cost.
func (p *Plan) dealOf(n int) runrecord.Lock {
	if p.Resumed != nil && p.Resumed.ShardCount() == n {
		return *p.Resumed
	}
	return runrecord.Lock{Shard: Shard{K: 1, N: n}.String(), ShardBy: runrecord.ShardByCost, ShardOf: Deal(p.Trials, n)}
}

// Select returns the trials of shard s, in plan order (all when s is zero
// or 1/1).
func (p *Plan) Select(s Shard) []Trial {
	if s.N <= 1 {
		return append([]Trial(nil), p.Trials...)
	}
	deal := p.dealOf(s.N)
	var out []Trial
	for _, t := range p.Trials {
		if runrecord.ShardOf(deal, t.Key, s.N) == s.K {
			out = append(out, t)
		}
	}
	return out
}

// LockShard records shard s and its deal in the plan's lock, so that a
// resume of the run directory selects the same trials.
func (p *Plan) LockShard(s Shard) {
	p.Lock.Shard = s.String()
	p.Lock.ShardBy, p.Lock.ShardOf = "", nil
	if s.N > 1 {
		deal := p.dealOf(s.N)
		p.Lock.ShardBy, p.Lock.ShardOf = deal.ShardBy, deal.ShardOf
	}
}
