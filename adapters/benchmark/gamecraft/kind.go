package gamecraft

import (
	"context"
	"errors"
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
	List:      list,
	Check:     checkConformance,
	Reporting: reporting(),
}

// list is strict, as kind.List asks: `hoh tasks list` names every malformed
// task instead of listing the others silently (a run excludes them with a note).
func list(path string) ([]benchmark.Task, error) {
	b, errs := Scan(path)
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return b.Tasks(context.Background())
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
	for _, s := range b.Skipped {
		r.Problems = append(r.Problems, conformance.Problem{Severity: conformance.Notice, Path: s.Dir, Message: "skipped, " + s.Reason})
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
