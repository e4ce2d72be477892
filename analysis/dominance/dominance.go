// Package dominance implements FrontierSWE's official Dominance (paper
// appendix B.7, Eq. 13-16).
//
// For each pool member a and task t, the task-level dominance is the mean,
// over the other |pool|-1 members j, of s(r_a,t, r_j,t) with s = 1 for a win,
// 0.5 for a tie and 0 for a loss. Domain dominance averages the tasks of a
// domain equally; overall dominance averages domains equally (Macro, the
// paper's Eq. 16) or tasks equally (Micro).
//
// Assumptions: rewards are compared exactly as given — no rounding, so
// 0.30 and 0.3000001 are not a tie; round before calling if the benchmark
// reports rounded rewards. Every member has a finite reward on every task;
// the pool is whatever the caller names (12 configurations in the paper's
// Table 1, 11 checkpoints in its Figure 5).
package dominance

import (
	"fmt"
	"math"
	"math/big"
	"sort"
)

// Aggregation chooses how domains combine into the overall value.
type Aggregation int

const (
	// Macro weighs every domain equally (Eq. 16).
	Macro Aggregation = iota
	// Micro weighs every task equally.
	Micro
)

// Result holds dominance values in [0, 1], keyed by pool label.
type Result struct {
	Overall map[string]float64            // label -> overall dominance, the nearest float of Exact
	Exact   map[string]*big.Rat           // label -> overall dominance, exact
	Domain  map[string]map[string]float64 // label -> domain -> dominance (Eq. 15)
	Task    map[string]map[string]float64 // label -> task -> dominance (Eq. 14)
}

// Compute returns the dominance of every member of pool (label -> task ->
// reward). domainOf maps every task of the comparison to its domain; the
// tasks compared are exactly its keys. A member lacking a task, a task
// without a domain, a non-finite reward, or a pool smaller than two is an
// error naming the member and task.
func Compute(pool map[string]map[string]float64, domainOf map[string]string, agg Aggregation) (*Result, error) {
	if len(pool) < 2 {
		return nil, fmt.Errorf("dominance: pool has %d members, need at least 2", len(pool))
	}
	if len(domainOf) == 0 {
		return nil, fmt.Errorf("dominance: no tasks")
	}
	if agg != Macro && agg != Micro {
		return nil, fmt.Errorf("dominance: unknown aggregation %d", agg)
	}
	labels := sortedKeys(pool)
	tasks, err := sortedTasks(domainOf)
	if err != nil {
		return nil, err
	}
	r, err := rewardMatrix(pool, domainOf, labels, tasks)
	if err != nil {
		return nil, err
	}

	res := &Result{
		Overall: make(map[string]float64, len(labels)),
		Exact:   make(map[string]*big.Rat, len(labels)),
		Domain:  make(map[string]map[string]float64, len(labels)),
		Task:    make(map[string]map[string]float64, len(labels)),
	}
	for i, l := range labels {
		scoreMember(res, i, l, r, tasks, domainOf, agg)
	}
	return res, nil
}

// sortedTasks lists the compared tasks in order, refusing one without a
// domain, since domain dominance could not place it.
func sortedTasks(domainOf map[string]string) ([]string, error) {
	tasks := make([]string, 0, len(domainOf))
	for t, d := range domainOf {
		if d == "" {
			return nil, fmt.Errorf("dominance: task %s has an empty domain", t)
		}
		tasks = append(tasks, t)
	}
	sort.Strings(tasks)
	return tasks, nil
}

// rewardMatrix lays the rewards out as a dense label x task matrix,
// validated once so the comparisons need no checks.
func rewardMatrix(pool map[string]map[string]float64, domainOf map[string]string, labels, tasks []string) ([][]float64, error) {
	r := make([][]float64, len(labels))
	for i, l := range labels {
		r[i] = make([]float64, len(tasks))
		for k, t := range tasks {
			v, ok := pool[l][t]
			if !ok {
				return nil, fmt.Errorf("dominance: pool member %s has no reward for task %s", l, t)
			}
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return nil, fmt.Errorf("dominance: pool member %s has non-finite reward %v on task %s", l, v, t)
			}
			r[i][k] = v
		}
		for t := range pool[l] {
			if _, ok := domainOf[t]; !ok {
				return nil, fmt.Errorf("dominance: pool member %s has task %s, which has no domain", l, t)
			}
		}
	}
	return r, nil
}

// scoreMember fills res with the task, domain and overall dominance of
// member i (label l) against the rest of the pool.
//
// Exact: a task's score in half-wins is an integer (2 a win, 1 a tie),
// so every value is a ratio of integers, computed in rationals and
// rounded once.
func scoreMember(res *Result, i int, l string, r [][]float64, tasks []string, domainOf map[string]string, agg Aggregation) {
	opponents := int64(len(r) - 1)
	taskDom := make(map[string]float64, len(tasks))
	domSum := map[string]int64{}
	domN := map[string]int64{}
	var total int64
	for k, t := range tasks {
		var half int64
		for j := range r {
			if j != i {
				half += compare(r[i][k], r[j][k])
			}
		}
		taskDom[t] = float64(half) / float64(2*opponents) // small integers: the division rounds once
		domSum[domainOf[t]] += half
		domN[domainOf[t]]++
		total += half
	}
	dom := make(map[string]float64, len(domSum))
	macro := new(big.Rat)
	for _, d := range sortedKeys(domSum) {
		v := big.NewRat(domSum[d], 2*opponents*domN[d])
		dom[d], _ = v.Float64()
		macro.Add(macro, v)
	}
	exact := macro.Quo(macro, big.NewRat(int64(len(dom)), 1))
	if agg == Micro {
		exact = big.NewRat(total, 2*opponents*int64(len(tasks)))
	}
	res.Task[l], res.Domain[l] = taskDom, dom
	res.Exact[l] = exact
	res.Overall[l], _ = exact.Float64()
}

// compare is Eq. 13 in half-wins: 2 a win, 1 a tie, 0 a loss.
func compare(x, y float64) int64 {
	switch {
	case x > y:
		return 2
	case x == y:
		return 1
	}
	return 0
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// ComputeExact is Compute over exact rewards. Dominance depends on each
// task's rewards only through their order, so each task's rewards are
// replaced by their ranks (equal rewards, equal rank) and compared as
// floats: 1000000.000000000001 beats 1000000, which as float64s would tie.
func ComputeExact(pool map[string]map[string]*big.Rat, domainOf map[string]string, agg Aggregation) (*Result, error) {
	ranked := make(map[string]map[string]float64, len(pool))
	byTask := map[string][]*big.Rat{}
	for l, vals := range pool {
		ranked[l] = make(map[string]float64, len(vals))
		for t, v := range vals {
			byTask[t] = append(byTask[t], v)
		}
	}
	for t, vs := range byTask {
		sort.Slice(vs, func(i, j int) bool { return vs[i].Cmp(vs[j]) < 0 })
		for l, vals := range pool {
			v, ok := vals[t]
			if !ok {
				continue
			}
			// rank: the number of distinct smaller rewards
			k := sort.Search(len(vs), func(i int) bool { return vs[i].Cmp(v) >= 0 })
			rank := 0
			for i := 1; i <= k && i < len(vs); i++ {
				if vs[i].Cmp(vs[i-1]) != 0 {
					rank++
				}
			}
			ranked[l][t] = float64(rank)
		}
	}
	return Compute(ranked, domainOf, agg)
}
