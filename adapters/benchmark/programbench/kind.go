package programbench

import (
	"context"
	"os"
	"path/filepath"

	"github.com/hoh-research/hoh/adapters/benchmark"
	"github.com/hoh-research/hoh/adapters/benchmark/conformance"
	"github.com/hoh-research/hoh/adapters/benchmark/kind"
	"github.com/hoh-research/hoh/runrecord"
)

// Kind registers ProgramBench checkouts. Agents work in a container of
// agent_image; each checkpoint is scored in fresh containers of eval_image
// with the hidden tests of tests_root.
var Kind = kind.Kind{
	Name:        Name,
	NeedsPath:   true,
	NeedsDocker: true,
	Options: []kind.Option{
		{Name: "agent_image", Type: kind.String, Doc: "local image the agent's task container runs (required to run trials)"},
		{Name: "eval_image", Type: kind.String, Doc: "local image with the toolchain compile.sh needs and the tests' runtime (default agent_image)"},
		{Name: "instance_images", Type: kind.String, Doc: "repository of upstream's per-instance images <repo>/<owner>_1776_<name>.<commit>:task_cleanroom (agent) and :task (evaluation), used when present locally instead of agent_image/eval_image (default programbench; none: never)"},
		{Name: "tests_root", Type: kind.Path, Doc: "evaluator-only <instance>/<branch>/ test trees (relative to the config file; required to run trials)"},
		{Name: "cleanroom_root", Type: kind.Path, Doc: "<instance>/ folders with the executable and docs for A_0 (default <task>/cleanroom)"},
		{Name: "compile_timeout", Type: kind.Duration, Doc: "wall limit of ./compile.sh during evaluation, e.g. 10m"},
		{Name: "test_timeout", Type: kind.Duration, Doc: "wall limit of one test branch during evaluation, e.g. 10m"},
		{Name: "eval_cpus", Type: kind.Number, Doc: "CPUs of each evaluation container"},
		{Name: "eval_memory_mb", Type: kind.Number, Doc: "memory of each evaluation container in MB"},
	},
	Open:      open,
	List:      kind.ListOf(Load),
	Check:     checkConformance,
	Reporting: reporting(),
}

func reporting() runrecord.Reporting { r, _ := runrecord.ReportingOf(Name); return r }

// open loads the checkout; with the run's Docker client it also requires
// what running needs, so a run fails before any agent spends tokens.
func open(o kind.Opening) (benchmark.Benchmark, error) {
	b, err := Load(o.Path)
	if err != nil {
		return nil, err
	}
	b.Opts.CleanroomRoot = o.Options.Str("cleanroom_root")
	if o.Docker == nil {
		return b, nil
	}
	ev := evaluator(o.Options)
	agentImage := o.Options.Str("agent_image")
	if agentImage == "" {
		return nil, &kind.OptionError{Option: "agent_image", Msg: "benchmark option agent_image is missing: ProgramBench agents run in a container from that local image"}
	}
	// Without the hidden tests every checkpoint would fail evaluation only
	// after the agents had spent their tokens.
	if ev.TestsRoot == "" {
		return nil, &kind.OptionError{Option: "tests_root", Msg: "benchmark option tests_root is missing: ProgramBench evaluation runs the <instance>/<branch>/ test trees found there"}
	}
	if fi, err := os.Stat(ev.TestsRoot); err != nil || !fi.IsDir() {
		return nil, &kind.OptionError{Option: "tests_root", Msg: "benchmark option tests_root: " + ev.TestsRoot + " is not a directory of <instance>/<branch>/ test trees"}
	}
	ev.Docker = o.Docker
	if o.Docker.API != nil {
		ev.Images.Exists = func(ctx context.Context, ref string) bool {
			_, err := o.Docker.API.ImageInspect(ctx, ref)
			return err == nil
		}
	}
	b.Opts.Images = ev.Images
	b.Opts.AgentImage = agentImage
	b.Opts.Runner = ev.Run
	return b, nil
}

// evaluator is the DockerEvaluator the options describe, without a client.
func evaluator(v kind.Values) DockerEvaluator {
	ev := DockerEvaluator{Image: v.Str("eval_image"), TestsRoot: v.Str("tests_root"),
		CompileTimeout: v.Duration("compile_timeout"), TestTimeout: v.Duration("test_timeout"),
		CPUs: v.Number("eval_cpus"), MemoryMB: int64(v.Number("eval_memory_mb")),
		Images: InstanceImages{Repo: v.Str("instance_images")}}
	switch ev.Images.Repo {
	case "":
		ev.Images.Repo = "programbench"
	case "none":
		ev.Images.Repo = ""
	}
	if ev.Image == "" {
		ev.Image = v.Str("agent_image")
	}
	return ev
}

// checkConformance reports files that do not load and instances without
// tests.json.
func checkConformance(r *conformance.Report) {
	insts, errs := scan(r.Root)
	r.AddLoadErrors(errs)
	for _, in := range insts {
		r.Tasks = append(r.Tasks, taskOf(in))
		if in.Tests == nil {
			r.Problems = append(r.Problems, conformance.Problem{Severity: conformance.Warning, Path: filepath.Join(in.Dir, "tests.json"), Task: in.ID,
				Message: "no tests.json: ignored tests cannot be dropped when scoring this instance"})
		}
	}
}
