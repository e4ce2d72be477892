package runrecord

import (
	"fmt"
	"path/filepath"
)

// A trial of a multi-step task (Harbor's [[steps]]) holds, besides its
// summary.json and scores.csv, one trial directory per step that started
// (steps/NN-<name>/, each a whole TrialLayout with its own trial.json,
// stages, ledger and evaluations, but no scores.csv) and steps.json.
const (
	StepsDir         = "steps"
	StepsFile        = "steps.json"
	StepStartFailure = "start-failure.json"
)

// Step is the trial directory of step i (from 0) named name.
func (l TrialLayout) Step(i int, name string) TrialLayout {
	return TrialLayout{filepath.Join(l.Dir, StepsDir, fmt.Sprintf("%02d-%s", i+1, name))}
}

// StepsRecord is steps.json: one StepRecord per step of the task.
func (l TrialLayout) StepsRecord() string { return filepath.Join(l.Dir, StepsFile) }

// StartFailure is start-failure.json of a step's directory (Failure): the
// step's start (a setup script, a health check) failed before its agent
// ran.
func (l TrialLayout) StartFailure() string { return filepath.Join(l.Dir, StepStartFailure) }

// StepRecord is one step of a multi-step trial, in steps.json.
type StepRecord struct {
	Name string `json:"name"`
	// Dir is the step's trial directory relative to the trial's; "" when
	// the step did not start.
	Dir string `json:"dir,omitempty"`
	// StartFailure: the step's start failed before its agent ran.
	StartFailure string `json:"start_failure,omitempty"`
	// Checkpoint is the step's last checkpoint, the artifact it handed on;
	// Metrics and EvalError are its evaluation by the step's verifier.
	Checkpoint int                `json:"checkpoint,omitempty"`
	Metrics    map[string]float64 `json:"metrics,omitempty"`
	EvalError  string             `json:"evaluation_error,omitempty"`
	// Stopped says why the steps after this one did not run (its
	// min_reward gate, or no reward).
	Stopped string `json:"stopped,omitempty"`
	// NotRun: an earlier step stopped the sequence.
	NotRun bool `json:"not_run,omitempty"`
}
