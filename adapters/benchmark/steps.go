package benchmark

import (
	"context"

	"github.com/hoh-research/hoh/runrecord"
)

// Step is one step of a multi-step task (Harbor's [[steps]]): a task of its
// own, run in order on the environment and artifact the previous step left,
// verified by its own verifier.
type Step struct {
	Name string
	// Task is the step as a task: the task's ID and folder, Spec the step's
	// own instruction (what a plain agent pass gets), Limits its timeouts.
	Task Task
	// Context is what a condition with a Planner gets before the
	// instruction: the step list and the earlier steps' instructions.
	Context string
	// Bench verifies the step's checkpoints (Evaluate runs the step's
	// verifier) and starts its containers as the step declares them.
	Bench Benchmark
	// Start prepares the step's start from the environment image the
	// previous step left ("" : the task's) and its workspace, a directory
	// it may change in place (files the step uploads, what a setup script
	// writes there). It returns the image the step starts from and the
	// step's benchmark started there, or a failure of the task's own (a
	// setup script or health check that fails), after which the step and
	// the ones after it do not run. An error is an infrastructure failure.
	// labels go on a committed image.
	Start func(ctx context.Context, image, workspace string, labels map[string]string) (StepStart, error)
	// Gate says why the steps after this one do not run, given the
	// evaluation of the artifact it hands on ("" : they run).
	Gate func(ev runrecord.Evaluation) string
}

// StepStart is where a step starts.
type StepStart struct {
	Image   string // "" : the image it was given
	Failure string // the task's own failure before the agent ran
	// Bench is Step.Bench whose InitialWorkspace is the prepared workspace.
	Bench Benchmark
}

// Stepped is a benchmark whose tasks may be sequences of steps.
type Stepped interface {
	// Steps lists the task's steps in order; nil for a one-step task.
	Steps(t Task) ([]Step, error)
	// StepsReward is the task's evaluation from the evaluations of the
	// artifacts its steps handed on, in order, for the steps that ran
	// (one with Error set gave no reward).
	StepsReward(t Task, steps []runrecord.Evaluation) runrecord.Evaluation
}

// MultiStep reports whether b runs t as a sequence of steps.
func MultiStep(b Benchmark, t Task) bool {
	s, ok := b.(Stepped)
	if !ok {
		return false
	}
	steps, err := s.Steps(t)
	return err == nil && len(steps) > 0
}
