package main

import (
	"context"
	"fmt"

	"github.com/hoh-research/hoh/adapters/harness/doctor"
	"github.com/hoh-research/hoh/experiments/config"
)

// evaluatorReady refuses a GameCraft-Bench run whose evaluator cannot run
// on this machine: every checkpoint would score 0 and look like a result.
// A config that says godot_bin: none asks for a plumbing run instead,
// which its records and reports mark (config.NoEvaluatorNotice).
func evaluatorReady(ctx context.Context, e *config.Experiment) error {
	if e.Benchmark.Kind != "gamecraft" || e.NoEvaluator() {
		return nil
	}
	opt := func(k string) string { s, _ := e.Benchmark.Options[k].(string); return s }
	g := doctor.GameCraft{Required: true, GodotBin: opt("godot_bin"), Judge: opt("judge"), JudgeKeyEnv: opt("judge_key_env")}
	if g.GodotBin != "" {
		g.GodotBin = e.Resolve(g.GodotBin)
	}
	// In Docker the verifier runs in the task's image, which the run checks
	// once it has built it (gamecraft.DockerBenchmark.Prepare); only the
	// judge's key comes from this host.
	inDocker := opt("agent_environment") == "docker"
	var ps config.Problems
	for _, c := range doctor.GameCraftChecks(ctx, doctor.System(), g) {
		if c.OK || inDocker && c.Name != doctor.JudgeKeyCheck {
			continue
		}
		msg := fmt.Sprintf("GameCraft-Bench's evaluator cannot run here, so every checkpoint would score 0: %s: %s", c.Name, c.Detail)
		if c.Fix != "" {
			msg += "; fix: " + c.Fix
		}
		ps = append(ps, e.Problem("benchmark", "%s", msg))
	}
	if len(ps) > 0 {
		ps = append(ps, e.Problem("benchmark", "hoh doctor --config %s checks these again; for a plumbing run without scores set benchmark option godot_bin: none (its records and reports say so)", e.File))
		return ps
	}
	return nil
}
