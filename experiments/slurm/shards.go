package slurm

import (
	"errors"
	"fmt"
	"os"

	"github.com/hoh-research/hoh/experiments/plan"
	"github.com/hoh-research/hoh/experiments/runner/status"
	"github.com/hoh-research/hoh/runrecord"
)

// ShardState is one shard as its run directory shows it: hoh's trial
// counts over the trials of the shard only.
type ShardState struct {
	K                                        int
	Dir                                      string
	Started                                  bool // the shard's run directory has a lock
	Planned                                  int
	Done, Running, Failed, Remaining, NotRun int
	Tokens                                   int64
}

// Complete says every trial of the shard finished (done, failed with a
// verdict, or not run once the budget was spent): another job would run
// nothing.
func (s ShardState) Complete() bool { return s.Started && s.Running == 0 && s.Remaining == 0 }

// InspectShard reads shard k of n from its run directory.
func InspectShard(l Layout, k, n int) (ShardState, error) {
	st := ShardState{K: k, Dir: l.Shard(k)}
	if _, err := plan.ReadLock(st.Dir); errors.Is(err, os.ErrNotExist) {
		return st, nil
	} else if err != nil {
		return st, err
	}
	in, err := status.Inspect(st.Dir)
	if err != nil {
		return st, err
	}
	want := plan.Shard{K: k, N: n}
	if in.Lock.Shard != want.String() {
		return st, fmt.Errorf("%s was run as shard %q, not %s", st.Dir, in.Lock.Shard, want)
	}
	st.Started = true
	for _, t := range in.Trials {
		// The shard's own lock says which trials it was dealt.
		if runrecord.ShardOf(in.Lock, t.Trial.Key, n) != k {
			continue
		}
		st.Planned++
		st.Tokens += t.Usage.Total
		switch t.State {
		case runrecord.StateDone:
			st.Done++
		case runrecord.StateRunning:
			st.Running++
		case runrecord.StateFailed:
			st.Failed++
		case runrecord.StateBudget:
			st.NotRun++
		default:
			st.Remaining++
		}
	}
	return st, nil
}

// PlannedIn counts the trials of shard k of n in a plan (for a shard not
// started yet, which will deal the plan afresh).
func PlannedIn(trials []plan.Trial, k, n int) int {
	c := 0
	for _, sh := range plan.Deal(trials, n) {
		if sh == k {
			c++
		}
	}
	return c
}
