package runner

import (
	"context"
	"fmt"

	"github.com/hoh-research/hoh/adapters/benchmark"
	"github.com/hoh-research/hoh/adapters/sandbox"
	"github.com/hoh-research/hoh/experiments/config"
	"github.com/hoh-research/hoh/experiments/plan"
)

// CheckOptions say what Check checks beyond what every run needs.
type CheckOptions struct {
	// Exec is the executor the run's roles get (nil: each invocation
	// confined on the host, which needs namespaces).
	Exec sandbox.Executor
	// InView also runs each CLI (--version) in its role's view, offline:
	// hoh run --check does; a run's preflight does it with a model turn.
	InView bool
	// Earlier are problems the caller found first (the harnesses' own
	// checks); listed before Check's, and they skip the in-view check.
	Earlier config.Problems
}

// Check is the one place that refuses a plan before anything is spent,
// for hoh run --check and for a run alike: roles that could not be
// confined, a benchmark's own preparation (gamecraft's task images), tasks
// whose tools are missing and, with InView, a CLI a role's view hides. It
// returns config.Problems when every problem can be listed at once.
func Check(ctx context.Context, p *plan.Plan, o CheckOptions) error {
	if err := hostIsolation(p.Bench, o.Exec); err != nil {
		return err
	}
	if pr, ok := p.Bench.(benchmark.Preparer); ok {
		if err := pr.Prepare(ctx, p.Tasks); err != nil {
			return fmt.Errorf("%s: benchmark %s refused: %w", p.Experiment.File, p.Bench.Name(), err)
		}
	}
	problems := append(append(config.Problems{}, o.Earlier...), checkTaskTools(p)...)
	if o.InView && len(problems) == 0 {
		problems = checkInView(ctx, p.Experiment, p.Bench)
	}
	if len(problems) > 0 {
		return problems
	}
	return nil
}
