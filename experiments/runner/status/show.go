package status

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"github.com/hoh-research/hoh/analysis/results"
	"github.com/hoh-research/hoh/experiments/history"
	"github.com/hoh-research/hoh/experiments/records"
	"github.com/hoh-research/hoh/experiments/runner/attempt"
	"github.com/hoh-research/hoh/experiments/trial"
)

// TrialView is what happened in one trial (hoh show).
type TrialView struct {
	Dir     string
	Spec    trial.Spec
	Stages  []trial.StageRecord
	Summary *trial.Summary
	History []history.Entry
	Diffs   map[string]string // commit -> diffstat against its parent
	Scores  []results.Row
	Failure *attempt.Failure
}

// ViewTrial reads a trial directory.
func ViewTrial(dir string) (*TrialView, error) {
	l := trial.Layout{Dir: dir}
	v := &TrialView{Dir: dir, Diffs: map[string]string{}}
	if err := records.ReadJSON(l.Spec(), &v.Spec); err != nil {
		if os.IsNotExist(err) {
			return nil, fmt.Errorf("%s is not a trial directory (no trial.json): the trial has not started", dir)
		}
		return nil, err
	}
	if _, err := records.ReadLines(l.Stages(), func(b []byte) error {
		var s trial.StageRecord
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		v.Stages = append(v.Stages, s)
		return nil
	}); err != nil {
		return nil, err
	}
	var s trial.Summary
	if err := records.ReadJSON(l.Summary(), &s); err == nil {
		v.Summary = &s
	} else if !os.IsNotExist(err) {
		return nil, err
	}
	var f attempt.Failure
	if records.ReadJSON(filepath.Join(dir, attempt.FailureFile), &f) == nil {
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
	if rows, err := results.ReadFile(l.Scores()); err == nil {
		v.Scores = rows
	} else if !os.IsNotExist(err) {
		return nil, err
	}
	return v, nil
}
