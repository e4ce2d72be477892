package runner

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hoh-research/hoh/adapters/benchmark"
	"github.com/hoh-research/hoh/adapters/benchmark/harbor"
	"github.com/hoh-research/hoh/experiments/config"
	"github.com/hoh-research/hoh/experiments/plan"
	"github.com/hoh-research/hoh/internal/testenv"
)

// preparing is a host benchmark whose own preparation refuses.
type preparing struct {
	*harbor.Benchmark
	refusal  error
	prepared int
}

func (p *preparing) Prepare(context.Context, []benchmark.Task) error {
	p.prepared++
	return p.refusal
}

// Check is what both hoh run --check and a run refuse with: a benchmark's
// own preparation (it was only the run's), the tasks' tools and the
// harnesses' problems listed together (the tool check was only the
// --check's and the run's separately), and the in-view CLI check only once
// nothing else is wrong.
func TestCheckIsOneRefusalForCheckAndRun(t *testing.T) {
	dir := testenv.SharedPath(t, "benchmarks", "harbor-tasks", "harbor-examples", "tasks")
	l, err := harbor.LoadTask("harbor", filepath.Join(dir, "hello-mcp"), "")
	if err != nil {
		t.Fatal(err)
	}
	e := &config.Experiment{File: "exp.yaml", Configs: []config.HarnessModel{
		{Label: "cmd", AgentSpec: config.AgentSpec{Harness: "command", Binary: "/nonexistent/cli"}},
	}}
	bench := &preparing{Benchmark: &harbor.Benchmark{Dataset: "harbor"}, refusal: errors.New("task hello-mcp: its image cannot be built")}
	p := &plan.Plan{Experiment: e, Bench: bench, Tasks: []benchmark.Task{l.Task}}
	for _, inView := range []bool{false, true} {
		err := Check(context.Background(), p, CheckOptions{InView: inView})
		if err == nil || !strings.Contains(err.Error(), "exp.yaml: benchmark harbor refused: task hello-mcp: its image cannot be built") {
			t.Errorf("in view %v: the preparation's refusal is not the check's: %v", inView, err)
		}
	}
	if bench.prepared != 2 {
		t.Errorf("prepared %d times, want once per check", bench.prepared)
	}

	bench.refusal = nil
	earlier := config.Problems{e.Problem("configs[0].harness", "its CLI is not installed")}
	err = Check(context.Background(), p, CheckOptions{InView: true, Earlier: earlier})
	var ps config.Problems
	if !errors.As(err, &ps) || len(ps) != 2 || ps[0].Msg != earlier[0].Msg ||
		!strings.Contains(ps[1].Msg, `config "cmd" cannot be given task hello-mcp's tools`) {
		t.Errorf("want the harness problem then the tools' problem (and no in-view check), got %v", err)
	}
}
