package status

import (
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
	budget := runrecord.BudgetReasons(runrecord.RunLayout{Dir: out})
	in := &Inspection{Dir: out, Lock: lock, Runner: ReadRunner(out)}
	for _, t := range ts {
		in.Trials = append(in.Trials, inspectTrial(out, t, budget))
	}
	return in, nil
}

func inspectTrial(out string, t plan.Trial, budget map[string]string) TrialState {
	reason, ok := budget[t.Key]
	p := runrecord.ReadTrialProgress(runrecord.RunLayout{Dir: out}.Trial(t.Dir), reason, ok)
	return TrialState{Trial: t, State: p.State, Status: p.Status, Reason: p.Reason, Usage: p.Usage}
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
