package status

import (
	"fmt"
	"os"

	"github.com/hoh-research/hoh/experiments/history"
	"github.com/hoh-research/hoh/runrecord"
)

// TrialView is what happened in one trial (hoh show).
type TrialView struct {
	Dir     string
	Spec    runrecord.TrialSpec
	Stages  []runrecord.StageRecord
	Summary *runrecord.Summary
	History []history.Entry
	Diffs   map[string]string // commit -> diffstat against its parent
	Scores  []runrecord.Row
	Failure *runrecord.Failure
}

// ViewTrial reads a trial directory.
func ViewTrial(dir string) (*TrialView, error) {
	l := runrecord.TrialLayout{Dir: dir}
	v := &TrialView{Dir: dir, Diffs: map[string]string{}}
	if err := runrecord.ReadJSON(l.Spec(), &v.Spec); err != nil {
		if os.IsNotExist(err) {
			return nil, fmt.Errorf("%s is not a trial directory (no trial.json): the trial has not started", dir)
		}
		return nil, err
	}
	stages, err := runrecord.ReadStages(l.Stages())
	if err != nil {
		return nil, err
	}
	v.Stages = stages
	var s runrecord.Summary
	if err := runrecord.ReadJSON(l.Summary(), &s); err == nil {
		v.Summary = &s
	} else if !os.IsNotExist(err) {
		return nil, err
	}
	var f runrecord.Failure
	if runrecord.ReadJSON(l.RunnerFailure(), &f) == nil {
		v.Failure = &f
	}
	repo, err := history.Open(l.GitDir(), l.Workspace())
	if err != nil {
		return nil, err
	}
	if v.History, err = repo.Log(); err != nil {
		return nil, err
	}
	// Log is oldest first: diff each commit against its predecessor.
	for i := 1; i < len(v.History); i++ {
		d, err := repo.DiffStat(v.History[i-1].Commit, v.History[i].Commit)
		if err == nil {
			v.Diffs[v.History[i].Commit] = d
		}
	}
	if rows, err := runrecord.ReadScores(l.Scores()); err == nil {
		v.Scores = rows
	} else if !os.IsNotExist(err) {
		return nil, err
	}
	return v, nil
}
