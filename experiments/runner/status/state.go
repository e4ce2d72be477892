// Package status is the runner's presentation: the states a trial can be
// in, the live progress of a run, the end-of-run summary, and what `hoh
// status` and `hoh show` read back from a run directory.
package status

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"github.com/hoh-research/hoh/adapters/harness"
	"github.com/hoh-research/hoh/experiments/plan"
	"github.com/hoh-research/hoh/experiments/records"
	"github.com/hoh-research/hoh/experiments/trial"
)

// State of a trial in a run directory.
type State string

const (
	StateDone      State = "done"
	StateFailed    State = "failed"
	StateRunning   State = "running"
	StateRemaining State = "remaining"
	StateBudget    State = "not run (budget)"
)

// Outcome is what became of one trial in this run.
type Outcome struct {
	Trial        plan.Trial
	State        State
	Status       trial.Status
	Reason       string
	Usage        harness.Usage
	Replacements int
	Skipped      bool // finished by an earlier run
}

// OutcomeOf is the outcome of a trial that wrote its summary.
func OutcomeOf(t plan.Trial, s *trial.Summary) Outcome {
	o := Outcome{Trial: t, State: StateDone, Status: s.Status, Reason: s.Reason, Usage: s.Usage}
	if s.Status != trial.StatusCompleted {
		o.State = StateFailed
	}
	return o
}

// TrialLine is one line of trials.jsonl.
type TrialLine struct {
	Key          string             `json:"key"`
	Dir          string             `json:"dir"`
	Config       string             `json:"config"`
	Arm          string             `json:"arm"`
	Task         string             `json:"task"`
	Rep          int                `json:"rep"`
	State        State              `json:"state"`
	Status       trial.Status       `json:"status,omitempty"`
	Reason       string             `json:"reason,omitempty"`
	Usage        any                `json:"usage"`
	Replacements int                `json:"replacements"`
	Final        map[string]float64 `json:"final_metrics,omitempty"`
	Notice       string             `json:"notice,omitempty"`
}

// PlanPath is where a run directory lists its full plan.
func PlanPath(out string) string { return filepath.Join(out, "plan.json") }

// ReadPlan reads a run directory's plan.json.
func ReadPlan(out string) ([]plan.Trial, error) {
	var ts []plan.Trial
	if err := records.ReadJSON(PlanPath(out), &ts); err != nil {
		if os.IsNotExist(err) {
			return nil, fmt.Errorf("%s is not a run directory (no plan.json)", out)
		}
		return nil, err
	}
	return ts, nil
}

// LedgerUsage sums a trial's usage.jsonl.
func LedgerUsage(path string) (harness.Usage, error) {
	var u harness.Usage
	_, err := records.ReadLines(path, func(b []byte) error {
		var inv trial.Invocation
		if err := json.Unmarshal(b, &inv); err != nil {
			return err
		}
		u = u.Add(inv.Usage)
		return nil
	})
	return u, err
}
