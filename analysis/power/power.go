// Package power plans an experiment: how many tasks (and repetitions per
// task) a paired comparison of two arms needs for the paired percentile
// bootstrap CI of the mean difference (the CI hoh's tables print) to exclude
// 0 with a given probability, when the true mean difference is Effect.
//
// Method (docs/planning.md): a pilot gives per-task differences treated -
// baseline, each the mean of its repetitions, and, where tasks have several
// repetitions, the pooled within-task variance W of one repetition's
// difference. A pilot task's difference spreads by both the between-task
// variance B and W/k0 (k0 the pilot's repetitions), so B = var(d) - W/k0
// (at least 0). A simulated study of n tasks with k repetitions draws n
// pilot differences with replacement, centres them, scales them to spread
// by B alone, adds Effect and a normal repetition noise of variance W/k,
// and runs the same bootstrap test; power is the share of Sims studies
// whose CI excludes 0. Everything is seeded: the same inputs give the same
// plan.
package power

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/hoh-research/hoh/analysis/bootstrap"
)

// Pilot is what a plan is made from.
type Pilot struct {
	// Diffs are per-task differences treated - baseline, rep-averaged.
	Diffs []float64
	// Within is the pooled within-task variance of one repetition's
	// difference; NaN when no task has two repetitions.
	Within float64
	// Reps is the pilot's repetitions per task (the smallest over tasks).
	Reps int
}

// Options set the effect sought and the test.
type Options struct {
	Effect    float64 // true mean difference to detect (the metric's units)
	Alpha     float64 // 1 - CI level; default 0.05
	Power     float64 // target probability that the CI excludes 0; default 0.8
	Sims      int     // simulated studies per point; default 400
	Resamples int     // bootstrap resamples per study; default 1000
	Seed      uint64
	MaxTasks  int   // largest number of tasks searched; default 1000
	Reps      []int // repetition counts to plan for; default the pilot's (and 1..3 when Within is known)
}

func (o Options) withDefaults(p Pilot) Options {
	if o.Alpha == 0 {
		o.Alpha = 0.05
	}
	if o.Power == 0 {
		o.Power = 0.8
	}
	if o.Sims == 0 {
		o.Sims = 400
	}
	if o.Resamples == 0 {
		o.Resamples = 1000
	}
	if o.MaxTasks == 0 {
		o.MaxTasks = 1000
	}
	if len(o.Reps) == 0 {
		o.Reps = []int{max(1, p.Reps)}
		if !math.IsNaN(p.Within) {
			o.Reps = []int{1, 2, 3}
		}
	}
	return o
}

// Point is the estimated power of one design, with its Monte Carlo
// standard error sqrt(p(1-p)/Sims).
type Point struct {
	Tasks, Reps int
	Power, SE   float64
}

// Plan is the smallest number of tasks reaching the target power, per
// repetition count; Tasks is 0 when MaxTasks does not reach it.
type Plan struct {
	Effect, Alpha, Target float64
	Between, Within       float64 // variance components used
	Points                []Point
}

func (p Pilot) check() error {
	if len(p.Diffs) < 2 {
		return fmt.Errorf("power: the pilot has %d task(s) with both arms, need at least 2", len(p.Diffs))
	}
	for i, d := range p.Diffs {
		if math.IsNaN(d) || math.IsInf(d, 0) {
			return fmt.Errorf("power: pilot difference %d is not finite", i)
		}
	}
	return nil
}

// between is the between-task variance: the pilot's variance of task
// differences less the share its repetition noise adds.
func (p Pilot) between() float64 {
	m := 0.0
	for _, d := range p.Diffs {
		m += d
	}
	m /= float64(len(p.Diffs))
	v := 0.0
	for _, d := range p.Diffs {
		v += (d - m) * (d - m)
	}
	v /= float64(len(p.Diffs) - 1)
	if !math.IsNaN(p.Within) && p.Reps > 0 {
		v -= p.Within / float64(p.Reps)
	}
	return math.Max(0, v)
}

// Estimate is the power of a study of tasks tasks and reps repetitions.
func Estimate(p Pilot, tasks, reps int, opt Options) (Point, error) {
	if err := p.check(); err != nil {
		return Point{}, err
	}
	if tasks < 2 || reps < 1 {
		return Point{}, errors.New("power: need at least 2 tasks and 1 repetition")
	}
	opt = opt.withDefaults(p)
	return estimate(p, p.between(), tasks, reps, opt)
}

func estimate(p Pilot, between float64, tasks, reps int, opt Options) (Point, error) {
	mean := 0.0
	for _, d := range p.Diffs {
		mean += d
	}
	mean /= float64(len(p.Diffs))
	raw := 0.0
	for _, d := range p.Diffs {
		raw += (d - mean) * (d - mean)
	}
	raw /= float64(len(p.Diffs) - 1)
	scale := 0.0
	if raw > 0 {
		scale = math.Sqrt(between / raw)
	}
	noise := 0.0
	if !math.IsNaN(p.Within) {
		noise = math.Sqrt(p.Within / float64(reps))
	}
	// One generator per design, seeded by the design: any subset of
	// designs gives the same estimates.
	rng := rand.New(rand.NewPCG(opt.Seed, uint64(tasks)<<20|uint64(reps)))
	d := make([]float64, tasks)
	zero := make([]float64, tasks)
	hits := 0
	for range opt.Sims {
		for i := range d {
			d[i] = opt.Effect + scale*(p.Diffs[rng.IntN(len(p.Diffs))]-mean) + noise*rng.NormFloat64()
		}
		ci, err := bootstrap.PairedDifference(d, zero, bootstrap.Options{Resamples: opt.Resamples, Level: 1 - opt.Alpha, Seed: opt.Seed})
		if err != nil {
			return Point{}, err
		}
		if ci.Lo > 0 || ci.Hi < 0 {
			hits++
		}
	}
	pw := float64(hits) / float64(opt.Sims)
	return Point{Tasks: tasks, Reps: reps, Power: pw, SE: math.Sqrt(pw * (1 - pw) / float64(opt.Sims))}, nil
}

// Solve finds, for each repetition count, the smallest number of tasks whose
// estimated power reaches the target: doubling, then bisection (power grows
// with the number of tasks; Monte Carlo noise can make the boundary differ
// by a task or two, see Point.SE).
func Solve(p Pilot, opt Options) (*Plan, error) {
	if err := p.check(); err != nil {
		return nil, err
	}
	if opt.Effect == 0 {
		return nil, errors.New("power: --effect must be nonzero")
	}
	opt = opt.withDefaults(p)
	plan := &Plan{Effect: opt.Effect, Alpha: opt.Alpha, Target: opt.Power, Between: p.between(), Within: p.Within}
	for _, k := range opt.Reps {
		at := func(n int) (Point, error) { return estimate(p, plan.Between, n, k, opt) }
		lo, hi := 1, 2
		var best Point
		for {
			pt, err := at(hi)
			if err != nil {
				return nil, err
			}
			if pt.Power >= opt.Power {
				best = pt
				break
			}
			if hi >= opt.MaxTasks {
				hi = 0
				break
			}
			lo, hi = hi, min(2*hi, opt.MaxTasks)
		}
		if hi == 0 {
			plan.Points = append(plan.Points, Point{Reps: k})
			continue
		}
		for hi-lo > 1 {
			mid := (lo + hi) / 2
			pt, err := at(mid)
			if err != nil {
				return nil, err
			}
			if pt.Power >= opt.Power {
				hi, best = mid, pt
			} else {
				lo = mid
			}
		}
		plan.Points = append(plan.Points, best)
	}
	return plan, nil
}
