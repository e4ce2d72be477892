// Package estimate says what a planned run will spend before it starts:
// tokens, dollars and wall time per configuration and arm and for the whole
// run, each with an interval, from what pilot trials of the same
// configurations spent (their ledgers) or, without a pilot, from the
// paper's per-task token data as a prior (docs/planning.md).
//
// Method: every planned trial is a draw from its source's samples (one per
// pilot trial or paper task). One simulated run first resamples the
// source's samples with replacement (the uncertainty of a small pilot),
// then draws each planned trial from that resample and adds up tokens,
// dollars and trial times; the run's wall time schedules the drawn trial
// times in plan order on the run's and each configuration's concurrency.
// The interval is the central Level share of the simulated runs; the
// point estimate is the planned count times the source's mean.
package estimate

import (
	"errors"
	"fmt"
	"math"
	"math/big"
	"math/rand/v2"
	"slices"
	"sort"
	"time"

	"github.com/hoh-research/hoh/runrecord"
)

// Sample is what one source trial (a pilot trial, or a task of the paper's
// data) spent to reach the checkpoint of the arm it stands for.
type Sample struct {
	Usage runrecord.Usage
	// Split: Usage carries the input / cached / output / reasoning split,
	// so a price applies; false when only Usage.Total is known (the paper).
	Split bool
	// Time is the trial's time to the checkpoint: its wall time when Wall
	// (the CLIs' time and hoh's own, from the records' phase timings),
	// else the sum of its role invocations' durations; 0 when unknown.
	Time time.Duration
	Wall bool
	// ByRole splits Usage by role (a pilot's records), so a role team's
	// dollars are priced per role; nil when unknown.
	ByRole map[runrecord.Role]runrecord.Usage
}

// Source is where the samples of one configuration and arm come from.
type Source struct {
	What    string // e.g. "pilot runs/x (3 trials)"
	Samples []Sample
	Note    string // an assumption the reader should know of, or ""
}

// Planned is one planned trial.
type Planned struct {
	Config string
	Arm    runrecord.Arm   // the arm the trial runs
	Serves []runrecord.Arm // the configured arms it serves (vanilla beside vanilla-continuation@3)
}

// Input is a planned run and what is known of its configurations.
type Input struct {
	Trials      []Planned // in plan order
	Concurrency int       // the run's
	// ConfigConcurrency is each configuration's own limit (0: the run's).
	ConfigConcurrency map[string]int
	// Prices by configuration label; a label without one is unknown.
	Prices map[string]runrecord.Price
	// RolePrices, for a role team whose roles talk to different models,
	// prices each role (every role priced, else leave the team out): its
	// dollars are known from samples split by role.
	RolePrices map[string]map[runrecord.Role]runrecord.Price
	// Source finds the samples of a configuration's arm; nil: unknown.
	Source func(config string, arm runrecord.Arm) *Source
}

// Options are the simulation's.
type Options struct {
	Sims  int     // simulated runs (default 2000)
	Level float64 // interval level (default 0.9)
	Seed  uint64
}

// Range is an estimate with its interval; Known false when it cannot be
// estimated (no source, no price, no durations).
type Range struct {
	Known         bool
	Point, Lo, Hi float64
	// Bounds, for dollars of samples without a token split: Lo and Hi are
	// the cost of every token at the cheapest and at the dearest rate.
	Bounds bool
}

// Group is the estimate for the planned trials of one configuration and arm.
type Group struct {
	Config string
	Arm    runrecord.Arm
	Serves []runrecord.Arm
	Trials int
	Source *Source // nil: unknown
	Priced bool
	Tokens Range // all the group's trials together
	USD    Range
	// RoleUSD, for a team priced per role, is each role's share of USD's
	// point (nil otherwise).
	RoleUSD map[runrecord.Role]float64
	Time    Range // one trial's time to its checkpoint
	// WallTime: Time is whole trials' wall time (every sample's Wall),
	// not only their role invocations'.
	WallTime bool
}

// Estimate is the whole planned run's.
type Estimate struct {
	Groups []Group
	Trials int
	Tokens Range
	USD    Range
	Wall   Range // seconds
	Sims   int
	Level  float64
}

type groupKey struct {
	config string
	arm    runrecord.Arm
}

// Run estimates the planned run.
func Run(in Input, opt Options) (*Estimate, error) {
	if opt.Sims <= 0 {
		opt.Sims = 2000
	}
	if opt.Level <= 0 || opt.Level >= 1 {
		opt.Level = 0.9
	}
	if in.Concurrency <= 0 {
		in.Concurrency = 1
	}
	if len(in.Trials) == 0 {
		return nil, errors.New("estimate: the plan has no trials")
	}
	e := &estimator{in: in, opt: opt, est: &Estimate{Trials: len(in.Trials), Sims: opt.Sims, Level: opt.Level}}
	e.groupTrials()
	e.costSamples()
	e.simulate()
	e.summarise()
	return e.est, nil
}

// sampleCost is one source sample's cost, worked out once: tokens, exact
// dollars as a float, dollar bounds from token rates, seconds.
type sampleCost struct {
	tokens, usd, lo, hi, secs float64
}

// estimator carries Run's state between its steps.
type estimator struct {
	in  Input
	opt Options
	est *Estimate

	trialGroup []int          // trial -> its group in est.Groups
	costs      [][]sampleCost // group -> its source's samples
	trialSecs  []float64      // trial -> seconds, for the makespan

	// Simulated totals: per group, and the whole run's.
	gTokens, gUSD, gTime        [][]float64
	runTokens, runUSD, runWall  []float64
	allTokens, allUSD, allTimed bool
}

// groupTrials gathers the trials into groups of one configuration and arm,
// in order of first appearance, each with its source and whether it is priced.
func (e *estimator) groupTrials() {
	in, est := e.in, e.est
	index := map[groupKey]int{}
	e.trialGroup = make([]int, len(in.Trials))
	for i, t := range in.Trials {
		k := groupKey{t.Config, t.Arm}
		g, ok := index[k]
		if !ok {
			g = len(est.Groups)
			index[k] = g
			var src *Source
			if in.Source != nil {
				src = in.Source(t.Config, t.Arm)
			}
			if src != nil && len(src.Samples) == 0 {
				src = nil
			}
			_, priced := in.Prices[t.Config]
			if _, team := in.RolePrices[t.Config]; team {
				priced = true
			}
			est.Groups = append(est.Groups, Group{Config: t.Config, Arm: t.Arm, Serves: t.Serves, Source: src, Priced: priced})
		}
		est.Groups[g].Trials++
		e.trialGroup[i] = g
	}
}

// costSamples works out each group's sample costs once, so the simulation
// only draws them, and records what the group's estimates can know.
func (e *estimator) costSamples() {
	in, est := e.in, e.est
	e.costs = make([][]sampleCost, len(est.Groups))
	for gi := range est.Groups {
		g := &est.Groups[gi]
		if g.Source == nil {
			continue
		}
		price, priced := in.Prices[g.Config]
		lo, hi := rateBounds(price)
		rolePrices, team := in.RolePrices[g.Config]
		if team {
			priced = true
			lo, hi = teamRateBounds(rolePrices)
			g.RoleUSD = map[runrecord.Role]float64{}
		}
		allSplit, allTimed, allWall := true, true, true
		for _, s := range g.Source.Samples {
			allWall = allWall && s.Wall
			c := sampleCost{tokens: float64(s.Usage.Total), secs: s.Time.Seconds()}
			split := s.Split && (!team || s.ByRole != nil)
			switch {
			case team && split:
				for role, u := range s.ByRole {
					usd, _ := rolePrices[role].Cost(u).Float64()
					c.usd += usd
					g.RoleUSD[role] += usd * float64(g.Trials) / float64(len(g.Source.Samples))
				}
			case priced && split:
				c.usd, _ = price.Cost(s.Usage).Float64()
			}
			c.lo, c.hi = c.tokens*lo/1e6, c.tokens*hi/1e6
			allSplit = allSplit && split
			allTimed = allTimed && s.Time > 0
			e.costs[gi] = append(e.costs[gi], c)
		}
		g.Tokens.Known = true
		g.USD.Known = priced
		g.USD.Bounds = priced && !allSplit
		g.Time.Known = allTimed
		g.WallTime = allWall
	}
}

// simulate runs opt.Sims bootstrap replicates of the plan: each group's
// samples are resampled, then every trial draws from its group's resample.
func (e *estimator) simulate() {
	est, costs := e.est, e.costs
	rng := rand.New(rand.NewPCG(e.opt.Seed, 0x657374696d617465))
	sims := e.opt.Sims
	e.gTokens = make([][]float64, len(est.Groups))
	e.gUSD = make([][]float64, len(est.Groups))
	e.gTime = make([][]float64, len(est.Groups))
	e.allTokens, e.allUSD, e.allTimed = true, true, true
	for _, g := range est.Groups {
		e.allTokens = e.allTokens && g.Tokens.Known
		e.allUSD = e.allUSD && g.USD.Known && !g.USD.Bounds
		e.allTimed = e.allTimed && g.Time.Known
	}
	resample := make([][]int, len(est.Groups))
	e.trialSecs = make([]float64, len(e.in.Trials))
	for s := 0; s < sims; s++ {
		for gi := range est.Groups {
			c := costs[gi]
			if len(c) == 0 {
				continue
			}
			r := resample[gi][:0]
			for range c {
				r = append(r, rng.IntN(len(c)))
			}
			resample[gi] = r
		}
		e.drawTrials(rng, resample)
	}
}

// drawTrials is one replicate: every trial draws a sample from its group's
// resample, and the group and run totals are recorded.
func (e *estimator) drawTrials(rng *rand.Rand, resample [][]int) {
	est, costs := e.est, e.costs
	sumTok := make([]float64, len(est.Groups))
	sumUSD := make([]float64, len(est.Groups))
	for i, gi := range e.trialGroup {
		c := costs[gi]
		if len(c) == 0 {
			continue
		}
		d := c[resample[gi][rng.IntN(len(c))]]
		sumTok[gi] += d.tokens
		sumUSD[gi] += d.usd
		e.trialSecs[i] = d.secs
		e.gTime[gi] = append(e.gTime[gi], d.secs)
	}
	tt, tu := 0.0, 0.0
	for gi := range est.Groups {
		if len(costs[gi]) == 0 {
			continue
		}
		e.gTokens[gi] = append(e.gTokens[gi], sumTok[gi])
		e.gUSD[gi] = append(e.gUSD[gi], sumUSD[gi])
		tt += sumTok[gi]
		tu += sumUSD[gi]
	}
	e.runTokens = append(e.runTokens, tt)
	e.runUSD = append(e.runUSD, tu)
	if e.allTimed {
		e.runWall = append(e.runWall, makespan(e.in, e.trialGroup, est.Groups, e.trialSecs))
	}
}

// summarise turns the samples' means into each group's and the run's
// points, and the simulations into their intervals.
func (e *estimator) summarise() {
	est, costs, opt := e.est, e.costs, e.opt
	var pointTok, pointUSD, pointLo, pointHi float64
	for gi := range est.Groups {
		g := &est.Groups[gi]
		c := costs[gi]
		if len(c) == 0 {
			continue
		}
		var mTok, mUSD, mLo, mHi, mSecs float64
		for _, x := range c {
			mTok += x.tokens
			mUSD += x.usd
			mLo += x.lo
			mHi += x.hi
			mSecs += x.secs
		}
		n, m := float64(g.Trials), float64(len(c))
		g.Tokens = interval(n*mTok/m, e.gTokens[gi], opt.Level)
		pointTok += n * mTok / m
		switch {
		case g.USD.Bounds:
			g.USD = Range{Known: true, Bounds: true, Point: n * (mLo + mHi) / 2 / m, Lo: n * mLo / m, Hi: n * mHi / m}
			pointLo += n * mLo / m
			pointHi += n * mHi / m
		case g.USD.Known:
			g.USD = interval(n*mUSD/m, e.gUSD[gi], opt.Level)
			pointUSD += n * mUSD / m
		}
		if g.Time.Known {
			g.Time = interval(mSecs/m, e.gTime[gi], opt.Level)
		}
	}
	if e.allTokens {
		est.Tokens = interval(pointTok, e.runTokens, opt.Level)
	}
	if e.allUSD {
		est.USD = interval(pointUSD, e.runUSD, opt.Level)
	} else if e.allTokens && !slices.ContainsFunc(est.Groups, func(g Group) bool { return !g.USD.Known }) {
		// Some groups give only bounds: the run's dollars are bounds too.
		est.USD = Range{Known: true, Bounds: true, Lo: pointUSD + pointLo, Hi: pointUSD + pointHi, Point: pointUSD + (pointLo+pointHi)/2}
	}
	if e.allTimed {
		e.wall()
	}
}

// wall sets the run's wall time: the point is the schedule of every trial
// taking its source's mean.
func (e *estimator) wall() {
	for i, gi := range e.trialGroup {
		c := e.costs[gi]
		m := 0.0
		for _, x := range c {
			m += x.secs
		}
		e.trialSecs[i] = m / float64(len(c))
	}
	e.est.Wall = interval(makespan(e.in, e.trialGroup, e.est.Groups, e.trialSecs), e.runWall, e.opt.Level)
}

// interval is the point with the central level share of sims.
func interval(point float64, sims []float64, level float64) Range {
	if len(sims) == 0 {
		return Range{Known: true, Point: point, Lo: point, Hi: point}
	}
	x := slices.Clone(sims)
	sort.Float64s(x)
	q := func(p float64) float64 {
		i := int(math.Floor(p * float64(len(x)-1)))
		return x[min(max(i, 0), len(x)-1)]
	}
	a := (1 - level) / 2
	return Range{Known: true, Point: point, Lo: q(a), Hi: q(1 - a)}
}

// makespan schedules the trials in plan order, each as soon as a slot of
// the run and one of its configuration are free (the runner starts trials
// in plan order up to both limits), and returns when the last ends.
func makespan(in Input, trialGroup []int, groups []Group, secs []float64) float64 {
	run := make([]float64, in.Concurrency)
	cfg := map[string][]float64{}
	end := 0.0
	for i, gi := range trialGroup {
		label := groups[gi].Config
		slots, ok := cfg[label]
		if !ok {
			n := in.ConfigConcurrency[label]
			if n <= 0 || n > in.Concurrency {
				n = in.Concurrency
			}
			slots = make([]float64, n)
			cfg[label] = slots
		}
		ri, ci := argmin(run), argmin(slots)
		start := max(run[ri], slots[ci])
		run[ri] = start + secs[i]
		slots[ci] = start + secs[i]
		end = max(end, start+secs[i])
	}
	return end
}

func argmin(x []float64) int {
	j := 0
	for i := range x {
		if x[i] < x[j] {
			j = i
		}
	}
	return j
}

// rateBounds are a price's cheapest and dearest rate, USD per million
// tokens.
func rateBounds(p runrecord.Price) (lo, hi float64) {
	lo, hi = math.Inf(1), 0
	for _, r := range []*big.Rat{p.Input, p.CachedInput, p.Output, p.Reasoning} {
		if r == nil {
			continue
		}
		f, _ := r.Float64()
		lo, hi = min(lo, f), max(hi, f)
	}
	if math.IsInf(lo, 1) {
		return 0, 0
	}
	return lo, hi
}

// teamRateBounds are the cheapest and the dearest rate of any role's price.
func teamRateBounds(ps map[runrecord.Role]runrecord.Price) (lo, hi float64) {
	lo = math.Inf(1)
	for _, p := range ps {
		l, h := rateBounds(p)
		lo, hi = min(lo, l), max(hi, h)
	}
	if math.IsInf(lo, 1) {
		return 0, 0
	}
	return lo, hi
}

// String names an arm group for messages.
func (g Group) String() string { return fmt.Sprintf("%s %s", g.Config, g.Arm) }
