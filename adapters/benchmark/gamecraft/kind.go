package gamecraft

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"

	"github.com/hoh-research/hoh/adapters/benchmark"
	"github.com/hoh-research/hoh/adapters/benchmark/conformance"
	"github.com/hoh-research/hoh/adapters/benchmark/kind"
	"github.com/hoh-research/hoh/runrecord"
)

// Kind registers GameCraft-Bench checkouts. Each checkpoint is scored by
// the task's own tests/test.sh in a private user+mount namespace.
var Kind = kind.Kind{
	Name:      Name,
	NeedsPath: true,
	Options: []kind.Option{
		{Name: "godot_bin", Type: kind.Path, Doc: "Godot 4.6 binary the verifier builds and replays with (default godot from PATH, in docker the image's PATH; none: every build gate fails, score 0)"},
		{Name: "judge", Type: kind.String, Doc: "judge backend, GAMECRAFT_BENCH_JUDGE (stub, claude, opus, kimi, openai, gemini; default upstream's, openai)"},
		{Name: "judge_model", Type: kind.String, Doc: "judge model, GAMECRAFT_BENCH_JUDGE_MODEL (default upstream's)"},
		{Name: "judge_key_env", Type: kind.String, Doc: "NAME of the environment variable holding the judge's key, passed to the verifier (the value is never recorded)"},
		{Name: "verifier_timeout", Type: kind.Duration, Doc: "wall limit of one verification (default the task's verifier timeout_sec)"},
		{Name: "verifier_pythonpath", Type: kind.Path, Doc: "folder holding gamecraft_bench (default the checkout itself)"},
		{Name: "agent_environment", Type: kind.String, Doc: "where agents run: host (default, the paper's setting: each invocation in a user+mount namespace showing /workspace/game, /workspace/assets, /workspace/tools and /logs) or docker (the task's environment/Dockerfile built and started through the Harbor code: every role works in that container, seeing /workspace/game, the asset libraries and tools read-only, never tests/; each checkpoint's verifier runs in the agents' committed container with /tests and gamecraft_bench added; a run is refused before it starts when an image does not build or lacks Godot 4, python3, bash, Xvfb, ffmpeg or xdotool, unless godot_bin: none)"},
	},
	DockerWhen: func(v kind.Values) bool { return v.Str("agent_environment") == EnvDocker },
	Open:       open,
	List:       list,
	Check:      checkConformance,
	Reporting:  reporting(),
}

func open(o kind.Opening) (benchmark.Benchmark, error) {
	b, err := Load(o.Path)
	if err != nil {
		return nil, err
	}
	v := o.Options
	env := v.Str("agent_environment")
	switch env {
	case "", EnvHost:
		b.Opts.AgentEnvironment = EnvHost
	case EnvDocker:
	default:
		return nil, fmt.Errorf("gamecraft: agent_environment %q: want host or docker", env)
	}
	b.Opts.GodotBin = v.Str("godot_bin")
	b.Opts.Verifier = &Verifier{GodotBin: v.Str("godot_bin"), Judge: v.Str("judge"), JudgeModel: v.Str("judge_model"),
		JudgeKeyEnv: v.Str("judge_key_env"), Timeout: v.Duration("verifier_timeout"), PythonPath: v.Str("verifier_pythonpath")}
	if env == EnvDocker {
		return NewDocker(b, o.Docker), nil
	}
	return b, nil
}

// list is strict, as kind.List asks: `hoh tasks list` names every malformed
// task instead of listing the others silently (a run excludes them with a note).
func list(path string) ([]benchmark.Task, error) {
	b, errs := scan(path)
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return b.Tasks(context.Background())
}

func reporting() runrecord.Reporting { r, _ := runrecord.ReportingOf(Name); return r }

// checkConformance reports files that do not load, tasks the host cannot
// run, build commands hoh does not run, and rubric weights that differ from
// the paper's.
func checkConformance(r *conformance.Report) {
	b, errs := scan(r.Root)
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
		if !td.Weights.Equal(paperWeights) {
			r.Problems = append(r.Problems, conformance.Problem{Severity: conformance.Warning, Path: filepath.Join(t.Dir, "tests", "rubric.json"), Task: t.ID,
				Message: fmt.Sprintf("score_formula weights %s differ from the paper's %s", td.Weights, paperWeights)})
		}
	}
}
