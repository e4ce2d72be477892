package power

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/hoh-research/hoh/analysis/bootstrap"
)

// The estimated power matches the rejection rate observed on fresh
// synthetic studies drawn from the true population, within Monte Carlo
// error: per-task differences Normal(effect, 1) plus repetition noise.
func TestEstimatedPowerMatchesObservedRejectionRate(t *testing.T) {
	const (
		effect, between, within = 0.5, 1.0, 2.0
		pilotTasks, pilotReps   = 300, 2
		tasks, reps             = 20, 2
		studies                 = 300
	)
	rng := rand.New(rand.NewPCG(3, 4))
	study := func(n, k int) []float64 {
		d := make([]float64, n)
		for i := range d {
			d[i] = effect + math.Sqrt(between)*rng.NormFloat64() + math.Sqrt(within/float64(k))*rng.NormFloat64()
		}
		return d
	}
	pilot := Pilot{Diffs: study(pilotTasks, pilotReps), Within: within, Reps: pilotReps}
	opt := Options{Effect: effect, Sims: studies, Resamples: 500, Seed: 9}
	est, err := Estimate(pilot, tasks, reps, opt)
	if err != nil {
		t.Fatal(err)
	}
	hits := 0
	for range studies {
		d := study(tasks, reps)
		ci, err := bootstrap.PairedDifference(d, make([]float64, tasks), bootstrap.Options{Resamples: 500, Seed: 11})
		if err != nil {
			t.Fatal(err)
		}
		if ci.Lo > 0 || ci.Hi < 0 {
			hits++
		}
	}
	obs := float64(hits) / studies
	t.Logf("estimated %.3f ± %.3f, observed %.3f", est.Power, est.SE, obs)
	se := math.Sqrt(est.SE*est.SE + obs*(1-obs)/studies)
	if math.Abs(est.Power-obs) > 3*se+0.03 { // +0.03: the pilot's own sampling error
		t.Errorf("estimated power %.3f ± %.3f, observed rejection rate %.3f", est.Power, est.SE, obs)
	}
	if est.Power < 0.2 || est.Power > 0.95 {
		t.Errorf("power %.3f: the design should sit on the slope, where a wrong model shows", est.Power)
	}
}

// Solve returns the smallest number of tasks reaching the target, more
// tasks for fewer repetitions, and is deterministic.
func TestSolveFindsTheBoundary(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	d := make([]float64, 100)
	for i := range d {
		d[i] = rng.NormFloat64()
	}
	pilot := Pilot{Diffs: d, Within: 1, Reps: 1}
	opt := Options{Effect: 0.6, Sims: 200, Resamples: 400, Seed: 1, Reps: []int{1, 4}}
	plan, err := Solve(pilot, opt)
	if err != nil {
		t.Fatal(err)
	}
	if len(plan.Points) != 2 {
		t.Fatalf("points %+v", plan.Points)
	}
	one, four := plan.Points[0], plan.Points[1]
	t.Logf("plan %+v", plan.Points)
	if one.Tasks == 0 || four.Tasks == 0 || one.Tasks <= four.Tasks || one.Power < 0.8 || four.Power < 0.8 {
		t.Errorf("plan %+v: want tasks(1 rep) > tasks(4 reps), both reaching 0.8", plan.Points)
	}
	below, err := Estimate(pilot, one.Tasks-2, 1, opt)
	if err != nil {
		t.Fatal(err)
	}
	if below.Power >= 0.8+2*below.SE {
		t.Errorf("%d tasks already reach %.3f: the boundary %d is not the smallest", one.Tasks-2, below.Power, one.Tasks)
	}
	again, _ := Solve(pilot, opt)
	if again.Points[0] != one {
		t.Errorf("not deterministic: %+v then %+v", one, again.Points[0])
	}
}
