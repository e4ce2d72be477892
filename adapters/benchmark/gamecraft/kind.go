package gamecraft

import (
	"context"
	"fmt"
	"path/filepath"

	"github.com/hoh-research/hoh/adapters/benchmark"
	"github.com/hoh-research/hoh/adapters/benchmark/conformance"
	"github.com/hoh-research/hoh/adapters/benchmark/kind"
)

// Kind registers GameCraft-Bench checkouts (no options).
var Kind = kind.Kind{
	Name:      Name,
	NeedsPath: true,
	Open:      func(o kind.Opening) (benchmark.Benchmark, error) { return Load(o.Path) },
	List:      kind.ListOf(Load),
	Check:     checkConformance,
	Reporting: reporting(),
}

func reporting() benchmark.Reporting { r, _ := benchmark.ReportingOf(Name); return r }

// checkConformance reports files that do not load, tasks the host cannot
// run, build commands hoh does not run, and rubric weights that differ from
// the paper's.
func checkConformance(r *conformance.Report) {
	b, errs := Scan(r.Root)
	r.AddLoadErrors(errs)
	if b == nil {
		return
	}
	r.Tasks, _ = b.Tasks(context.Background())
	for _, t := range r.Tasks {
		r.HostProblems(t, filepath.Join(t.Dir, "task.toml"))
		td, _ := b.Task(t.ID)
		if cmd := td.Rubric.BuildCheck.Cmd; cmd != "" && cmd != "godot --headless --path /workspace/game --quit-after 5" {
			r.Problems = append(r.Problems, conformance.Problem{Severity: conformance.Warning, Path: filepath.Join(t.Dir, "tests", "rubric.json"), Task: t.ID,
				Message: "build_check.cmd differs from the public build command hoh runs: " + cmd})
		}
		if !td.Weights.Equal(PaperWeights) {
			r.Problems = append(r.Problems, conformance.Problem{Severity: conformance.Warning, Path: filepath.Join(t.Dir, "tests", "rubric.json"), Task: t.ID,
				Message: fmt.Sprintf("score_formula weights %s differ from the paper's %s", td.Weights, PaperWeights)})
		}
	}
}
