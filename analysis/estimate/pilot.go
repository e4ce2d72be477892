package estimate

import (
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/hoh-research/hoh/runrecord"
)

// Pilot is what the finished trials of pilot run directories spent, by
// configuration label, condition family and checkpoint.
type Pilot struct {
	dirs    []string
	samples map[pilotKey][]Sample
}

type pilotKey struct {
	config, family string
	checkpoint     int
}

// family puts Vanilla with Vanilla Continuation: a vanilla-continuation@3
// trial's first pass is a Vanilla run, so it stands for both.
func family(condition string) string {
	if condition == runrecord.Vanilla {
		return runrecord.VanillaContinuation
	}
	return condition
}

// LoadPilot reads the finished trials of run directories. A trial run to
// checkpoint T gives one sample for each checkpoint t <= T its ledger
// reaches: the usage of iterations 1..t, including the attempts that were
// retried or replaced (they were spent), and their time: the trial's wall
// time to t from its phase timings (wallTimes) when its records have them,
// else the role invocations' durations only.
func LoadPilot(dirs ...string) (*Pilot, error) {
	p := &Pilot{dirs: dirs, samples: map[pilotKey][]Sample{}}
	for _, dir := range dirs {
		rp, err := runrecord.ReadRunProgress(dir)
		if err != nil {
			return nil, fmt.Errorf("pilot %s: %w", dir, err)
		}
		run := runrecord.RunLayout{Dir: dir}
		for _, t := range rp.Trials {
			if t.State != runrecord.StateDone && t.State != runrecord.StateFailed {
				continue
			}
			if _, err := os.Stat(run.Trial(t.Trial.Dir).Summary()); err != nil {
				continue // given up by the runner: no summary, no complete ledger
			}
			arm := t.Trial.Arm
			l := run.Trial(t.Trial.Dir)
			var invs []runrecord.LedgerLine
			for _, u := range l.Units() { // a multi-step trial's steps: each ran iterations 1..T
				for _, path := range []string{u.Usage(), u.ReplacedUsage()} {
					lines, err := runrecord.ReadLedger(path)
					if err != nil {
						return nil, fmt.Errorf("pilot %s: %w", dir, err)
					}
					invs = append(invs, lines...)
				}
			}
			reached := 0
			for _, inv := range invs {
				if inv.Outcome == runrecord.OutcomeCompleted {
					reached = max(reached, inv.Iteration)
				}
			}
			wall := wallTimes(l, reached)
			for cp := 1; cp <= min(arm.Checkpoint, reached); cp++ {
				s := Sample{Split: true, Wall: wall != nil, ByRole: map[runrecord.Role]runrecord.Usage{}}
				for _, inv := range invs {
					if inv.Iteration <= cp {
						s.Usage = s.Usage.Add(inv.Usage)
						s.ByRole[inv.Role] = s.ByRole[inv.Role].Add(inv.Usage)
						s.Time += inv.Duration
					}
				}
				if wall != nil {
					s.Time = wall[cp]
				}
				k := pilotKey{t.Trial.Config, family(arm.Condition), cp}
				p.samples[k] = append(p.samples[k], s)
			}
		}
	}
	return p, nil
}

// Source returns the pilot's samples for a configuration's arm, nil when
// the pilot has none.
func (p *Pilot) Source(config string, arm runrecord.Arm) *Source {
	ss := p.samples[pilotKey{config, family(arm.Condition), arm.Checkpoint}]
	if len(ss) == 0 {
		return nil
	}
	return &Source{What: fmt.Sprintf("pilot %s (%d trial(s))", strings.Join(p.dirs, ", "), len(ss)), Samples: ss}
}

// wallTimes is a trial's wall time to each checkpoint 1..reached (index 0
// unused) from its stage records' phase timings: every stage's of
// iterations 1..t (the CLIs' time and hoh's own: set-up, views, digests,
// commits, checks) plus the share t/reached of what came after the loop
// (evaluation, which exports and scores each checkpoint alike, and
// clean-up). A multi-step trial's steps' stages count together. nil when
// a stage or the summary lacks timings (records from before they were
// kept).
func wallTimes(l runrecord.TrialLayout, reached int) []time.Duration {
	if reached < 1 {
		return nil
	}
	var sum runrecord.Summary // the trial's: its timings count its steps'
	if runrecord.ReadJSON(l.Summary(), &sum) != nil || len(sum.Timings) == 0 {
		return nil
	}
	stage := make([]time.Duration, reached+1)
	var staged time.Duration
	for _, u := range l.Units() {
		stages, err := runrecord.ReadStages(u.Stages())
		if err != nil || len(stages) == 0 {
			return nil
		}
		for _, st := range stages {
			if len(st.Timings) == 0 {
				return nil
			}
			if st.Iteration >= 1 && st.Iteration <= reached {
				stage[st.Iteration] += st.Timings.Total()
			}
			staged += st.Timings.Total()
		}
	}
	// After the loop: the summary's time beyond its stages' (evaluation
	// and clean-up), at least its evaluation phase.
	evaluate := max(sum.Timings.Total()-staged, time.Duration(sum.Timings[runrecord.PhaseEvaluate])*time.Millisecond)
	out := make([]time.Duration, reached+1)
	var upTo time.Duration
	for t := 1; t <= reached; t++ {
		upTo += stage[t]
		out[t] = upTo + evaluate*time.Duration(t)/time.Duration(reached)
	}
	return out
}
