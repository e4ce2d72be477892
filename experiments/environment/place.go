package environment

import (
	"context"

	"github.com/hoh-research/hoh/adapters/benchmark"
	"github.com/hoh-research/hoh/adapters/harness"
	"github.com/hoh-research/hoh/experiments/trial"
)

// Keep says to keep the whole environment of each checkpoint of a trial
// (a benchmark that verifies the environment, not only the workspace).
type Keep struct {
	// Trial names the trial's checkpoint images (its directory in the run).
	Trial string
	// HandOn keeps the last checkpoint's image when the others are
	// forgotten: a step of a multi-step task hands it on to the next step.
	HandOn bool
}

// Place is where an attempt runs in this environment: its executor and
// exchange and, in task containers, the Planner's and the QA Tester's own
// containers (RoleContainers) and, with keep, each checkpoint's kept
// environment, where those roles start. On the host it is the executor.
func (e *Env) Place(bench benchmark.Benchmark, task benchmark.Task, keep *Keep) trial.Place {
	p := trial.Place{Bench: bench, Task: task, Exec: e.Exec, Exchange: e.Exchange}
	if e.Container == nil {
		return p
	}
	var image func(ctx context.Context, after int) (string, error)
	if keep != nil && e.opts.Docker != nil {
		cp := &containerCheckpoints{client: e.opts.Docker, env: e, trial: keep.Trial, handOn: keep.HandOn}
		p.Checkpoints, image = cp, cp.Image
	}
	p.RoleEnvironment = RoleContainers(bench, task, e.TrialDir, e.opts, image)
	return p
}

// CLI is the harness that runs in this environment and reaches p (as the
// host reaches it): built, when it runs on the host and was built from
// spec for p, else one build makes from spec for p as reached from here,
// with the task's tools, knowing when a task container is its sandbox.
func (e *Env) CLI(built harness.Harness, spec harness.Spec, p harness.Provider, build func(harness.Spec) (harness.Harness, error)) (harness.Harness, error) {
	if e.Container == nil && spec.Provider == p {
		return built, nil
	}
	spec.Provider, spec.InContainer, spec.Tools = e.Reached(p), e.Container != nil, e.Tools
	return build(spec)
}
