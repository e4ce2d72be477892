package runner

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"

	"github.com/hoh-research/hoh/experiments/history"
	"github.com/hoh-research/hoh/experiments/plan"
	"github.com/hoh-research/hoh/experiments/runner/status"
	"github.com/hoh-research/hoh/runrecord"
)

// MergeReport says what a merge found.
type MergeReport struct {
	Trials     int
	Missing    []plan.Trial // planned, finished in no shard
	Duplicates []string     // trial dirs finished in more than one shard (first kept)
}

// Merge combines shard run directories into one run directory out: it
// checks that they share the same lock (config digest, tasks, harnesses),
// copies the finished trial directories, writes a merged lock, plan,
// scores.csv, trials.jsonl and replacements.jsonl.
func Merge(dirs []string, out string) (*MergeReport, error) {
	if len(dirs) == 0 {
		return nil, fmt.Errorf("merge: no run directories given")
	}
	if _, err := os.Stat(out); err == nil {
		return nil, fmt.Errorf("merge: %s exists; give a new output directory", out)
	}
	base, trials, err := sameLock(dirs)
	if err != nil {
		return nil, err
	}
	rep := &MergeReport{}
	finished, shards, replacements, err := copyFinished(dirs, out, rep)
	if err != nil {
		return nil, err
	}
	for _, t := range trials {
		if _, ok := finished[t.Key]; !ok {
			rep.Missing = append(rep.Missing, t)
		}
	}
	rep.Trials = len(finished)
	merged := base
	// The merged run is whole: no shard, no deal.
	merged.Shard, merged.ShardBy, merged.ShardOf = "", "", nil
	sort.Strings(shards)
	merged.Shards = shards
	if err := runrecord.WriteJSON(runrecord.RunLayout{Dir: out}.Lock(), merged); err != nil {
		return nil, err
	}
	if err := runrecord.WriteJSON(runrecord.RunLayout{Dir: out}.Plan(), trials); err != nil {
		return nil, err
	}
	if err := mergeReplacements(out, replacements, finished); err != nil {
		return nil, err
	}
	return rep, writeRecords(out, trials, finished, merged.Notice)
}

// sameLock checks that every shard ran the first one's configuration (its
// shard aside) and returns that lock and plan.
func sameLock(dirs []string) (runrecord.Lock, []plan.Trial, error) {
	var base runrecord.Lock
	var trials []plan.Trial
	for i, d := range dirs {
		l, err := plan.ReadLock(d)
		if err != nil {
			return base, nil, fmt.Errorf("merge: %s: %w", d, err)
		}
		ts, err := status.ReadPlan(d)
		if err != nil {
			return base, nil, fmt.Errorf("merge: %w", err)
		}
		if i == 0 {
			base, trials = l, ts
			continue
		}
		shardless := l
		shardless.Shard = base.Shard
		if diff := plan.Diff(base, shardless); len(diff) > 0 {
			return base, nil, fmt.Errorf("merge: %s was run with a different configuration than %s:\n  %v", d, dirs[0], diff)
		}
	}
	return base, trials, nil
}

// copyFinished copies each shard's finished trial directories into out
// (the first shard's when several finished one, noted in rep) and returns
// their outcomes, the shards' names and their replacements.
func copyFinished(dirs []string, out string, rep *MergeReport) (map[string]status.Outcome, []string, []runrecord.Replacement, error) {
	finished := map[string]status.Outcome{}
	owner := map[string]string{}
	var shards []string
	var replacements []runrecord.Replacement
	for _, d := range dirs {
		l, _ := plan.ReadLock(d)
		shards = append(shards, l.Shard)
		in, err := status.Inspect(d)
		if err != nil {
			return nil, nil, nil, err
		}
		for _, st := range in.Trials {
			if st.State != runrecord.StateDone && (st.State != runrecord.StateFailed || st.Status == "") {
				continue
			}
			if prev, dup := owner[st.Trial.Key]; dup {
				rep.Duplicates = append(rep.Duplicates, fmt.Sprintf("%s (in %s and %s)", st.Trial.Dir, prev, d))
				continue
			}
			owner[st.Trial.Key] = d
			if err := history.CopyTree(filepath.Join(d, st.Trial.Dir), filepath.Join(out, st.Trial.Dir)); err != nil {
				return nil, nil, nil, err
			}
			finished[st.Trial.Key] = status.Outcome{Trial: st.Trial, State: st.State, Status: st.Status, Reason: st.Reason, Usage: st.Usage}
		}
		rs, err := runrecord.ReadReplacements(runrecord.RunLayout{Dir: d}.Replacements())
		if err != nil {
			return nil, nil, nil, err
		}
		replacements = append(replacements, rs...)
	}
	return finished, shards, replacements, nil
}

// mergeReplacements writes the shards' replacements into out's
// replacements.jsonl, keeping each shard's supersession, and counts the
// standing ones in the finished trials' outcomes.
func mergeReplacements(out string, replacements []runrecord.Replacement, finished map[string]status.Outcome) error {
	lastSuperseded := map[string]int{}
	for i, r := range replacements {
		if r.Superseded {
			lastSuperseded[r.Key] = i
		}
	}
	for i, r := range replacements {
		if o, ok := finished[r.Key]; ok && !r.Superseded {
			o.Replacements++
			finished[r.Key] = o
		}
		if err := runrecord.Append(runrecord.RunLayout{Dir: out}.Replacements(), r); err != nil {
			return err
		}
		if j, ok := lastSuperseded[r.Key]; ok && j == i { // keep the shard's supersession
			if err := runrecord.Append(runrecord.RunLayout{Dir: out}.Replacements(), runrecord.Replacement{Key: r.Key, Dir: r.Dir, Supersedes: true, Time: r.Time}); err != nil {
				return err
			}
		}
	}
	return nil
}
