package status

import (
	"os"

	"github.com/hoh-research/hoh/adapters/harness"
	"github.com/hoh-research/hoh/experiments/plan"
	"github.com/hoh-research/hoh/runrecord"
)

// TrialState is one trial as its run directory shows it.
type TrialState struct {
	Trial  plan.Trial
	State  runrecord.State
	Status runrecord.Status
	Reason string
	Usage  harness.Usage
}

// Inspection is a run directory's state (hoh status).
type Inspection struct {
	Dir    string
	Lock   plan.Lock
	Trials []TrialState
	Runner Runner
}

// Inspect reads the state of every planned trial from the files of out.
// Trials outside the directory's shard count as remaining.
func Inspect(out string) (*Inspection, error) {
	ts, err := ReadPlan(out)
	if err != nil {
		return nil, err
	}
	lock, err := plan.ReadLock(out)
	if err != nil {
		return nil, err
	}
	budget := map[string]string{}
	lines, _ := runrecord.ReadTrialLines(runrecord.RunLayout{Dir: out}.Trials())
	for _, l := range lines {
		if l.State == runrecord.StateBudget {
			budget[l.Key] = l.Reason
		}
	}
	in := &Inspection{Dir: out, Lock: lock, Runner: ReadRunner(out)}
	for _, t := range ts {
		in.Trials = append(in.Trials, inspectTrial(out, t, budget))
	}
	return in, nil
}

func inspectTrial(out string, t plan.Trial, budget map[string]string) TrialState {
	st := TrialState{Trial: t, State: runrecord.StateRemaining}
	l := runrecord.RunLayout{Dir: out}.Trial(t.Dir)
	var s runrecord.Summary
	if err := runrecord.ReadJSON(l.Summary(), &s); err == nil {
		o := OutcomeOf(t, &s)
		st.State, st.Status, st.Reason, st.Usage = o.State, o.Status, o.Reason, o.Usage
		return st
	} else if !os.IsNotExist(err) {
		st.State, st.Reason = runrecord.StateFailed, err.Error()
		return st
	}
	var f runrecord.Failure
	if err := runrecord.ReadJSON(l.RunnerFailure(), &f); err == nil {
		st.State, st.Reason = runrecord.StateFailed, f.Reason
	} else if _, err := os.Stat(l.Spec()); err == nil {
		st.State = runrecord.StateRunning
	} else if r, ok := budget[t.Key]; ok {
		st.State, st.Reason = runrecord.StateBudget, r
	}
	u, err := runrecord.LedgerUsage(l.Usage())
	if err != nil && st.State != runrecord.StateFailed {
		st.State, st.Reason = runrecord.StateFailed, err.Error()
	}
	st.Usage = u
	return st
}

// Group is one configuration x condition row of a status report.
type Group struct {
	Config, Arm                              string
	Done, Running, Failed, Remaining, NotRun int
	Tokens                                   int64
}

// Groups tallies the inspection per configuration and condition, in plan
// order.
func (in *Inspection) Groups() []Group {
	idx := map[[2]string]int{}
	var gs []Group
	for _, t := range in.Trials {
		k := [2]string{t.Trial.Config, t.Trial.Arm}
		i, ok := idx[k]
		if !ok {
			i = len(gs)
			idx[k] = i
			gs = append(gs, Group{Config: k[0], Arm: k[1]})
		}
		g := &gs[i]
		switch t.State {
		case runrecord.StateDone:
			g.Done++
		case runrecord.StateRunning:
			g.Running++
		case runrecord.StateFailed:
			g.Failed++
		case runrecord.StateBudget:
			g.NotRun++
		default:
			g.Remaining++
		}
		g.Tokens += t.Usage.Total
	}
	return gs
}
