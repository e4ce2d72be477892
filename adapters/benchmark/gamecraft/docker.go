package gamecraft

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/hoh-research/hoh/adapters/benchmark"
	"github.com/hoh-research/hoh/adapters/benchmark/harbor"
	"github.com/hoh-research/hoh/adapters/harness"
	"github.com/hoh-research/hoh/adapters/harness/classify"
	"github.com/hoh-research/hoh/adapters/sandbox"
	"github.com/hoh-research/hoh/adapters/sandbox/docker"
	"github.com/hoh-research/hoh/runrecord"
)

// DockerBenchmark is GameCraft-Bench with agent_environment: docker: each
// task's environment/Dockerfile is built and started through the Harbor
// adapter (its limits, network and env), every role works in that
// container, and the upstream verifier (tests/test.sh) runs in the agents'
// environment as committed at each checkpoint, as Harbor's shared mode does.
//
// The container shows the artifact at /workspace/game (the trial's
// workspace is the Godot project itself), the checkout's asset libraries at
// /workspace/assets/library and library-oga and its public tools at
// /workspace/tools, read-only; the task's tests/ and the checkout are never
// in the image or mounted, so no rubric reaches a role. Only the verifier's
// container gets /tests and the gamecraft_bench package (at VerifierLib).
//
// The verifier needs Godot 4, python3, bash, Xvfb, ffmpeg and xdotool in the
// image: Prepare builds each selected task's image before any trial and
// refuses the run when one fails to build or lacks them (unless godot_bin:
// none asks for a plumbing run), as a host run without Godot is refused.
type DockerBenchmark struct {
	host    *Benchmark // the loaded checkout: tasks, rubrics, scoring
	harbor  *harbor.Benchmark
	docker  *docker.Client
	mu      sync.Mutex
	probes  map[string]imageProbe // image id -> what it has
	plumbed bool                  // godot_bin: none
}

// VerifierLib is where the verifier's container gets the gamecraft_bench
// package (PYTHONPATH), as upstream's runner puts the checkout on it.
const VerifierLib = "/opt/hoh-gamecraft"

// NewDocker wraps a loaded checkout for agent_environment: docker; c is the
// run's Docker client (nil when only planning: tasks list, nothing builds).
func NewDocker(b *Benchmark, c *docker.Client) *DockerBenchmark {
	b.Opts.AgentEnvironment = EnvDocker
	return &DockerBenchmark{host: b, docker: c, plumbed: b.Opts.GodotBin == "none",
		harbor: &harbor.Benchmark{Dataset: Name, Root: b.Root, Docker: c, WorkspacePath: GamePath}}
}

var _ benchmark.Benchmark = (*DockerBenchmark)(nil)

// Name implements benchmark.Benchmark.
func (d *DockerBenchmark) Name() string { return Name }

// Tasks implements benchmark.Benchmark.
func (d *DockerBenchmark) Tasks(ctx context.Context) ([]benchmark.Task, error) {
	return d.host.Tasks(ctx)
}

// LoadNotes implements benchmark.LoadNotes.
func (d *DockerBenchmark) LoadNotes() []string { return d.host.LoadNotes() }

// Task returns the loaded data of one task, including its rubric.
func (d *DockerBenchmark) Task(id string) (*TaskData, bool) { return d.host.Task(id) }

// Rescore implements benchmark.Rescorer, as on the host.
func (d *DockerBenchmark) Rescore(t benchmark.Task, outputDir string, ev runrecord.Evaluation) (runrecord.Evaluation, error) {
	return d.host.Rescore(t, outputDir, ev)
}

// InitialWorkspace writes A_0: the empty Godot project folder (the
// workspace itself is /workspace/game in the container).
func (d *DockerBenchmark) InitialWorkspace(_ context.Context, t benchmark.Task, dir string) error {
	_, err := d.host.lookup(t)
	return err
}

// ContainerImage implements environment.ContainerBenchmark: the task's
// environment/Dockerfile built through the Harbor adapter, with the
// artifact at /workspace/game.
func (d *DockerBenchmark) ContainerImage(ctx context.Context, t benchmark.Task) (string, string, error) {
	return d.harbor.ContainerImage(ctx, t)
}

// ContainerSpec implements environment.ContainerSpecer: the Harbor task
// container plus the public asset libraries and tools, read-only.
func (d *DockerBenchmark) ContainerSpec(ctx context.Context, t benchmark.Task) (docker.Spec, error) {
	spec, err := d.harbor.ContainerSpec(ctx, t)
	if err != nil {
		return spec, err
	}
	spec.Mounts = append(spec.Mounts, d.publicMounts()...)
	return spec, nil
}

// DecorateSpec implements environment.SpecDecorator (Harbor's network).
func (d *DockerBenchmark) DecorateSpec(ctx context.Context, t benchmark.Task, spec *docker.Spec) error {
	return d.harbor.DecorateSpec(ctx, t, spec)
}

// VerifiesCommittedEnvironment: the verifier runs in the agents'
// environment as committed at each checkpoint (Harbor's shared mode).
func (d *DockerBenchmark) VerifiesCommittedEnvironment() {}

// publicMounts are the checkout's asset libraries and tools, read-only, at
// the paths the tasks address.
func (d *DockerBenchmark) publicMounts() []docker.Mount {
	var ms []docker.Mount
	for _, lib := range []string{"library", "library-oga"} {
		if src := filepath.Join(d.host.Root, "assets", lib); isDir(src) {
			ms = append(ms, docker.Mount{Host: src, Container: AssetsPath + "/" + lib, ReadOnly: true})
		}
	}
	if tools := filepath.Join(d.host.Root, "tools"); isDir(tools) {
		ms = append(ms, docker.Mount{Host: tools, Container: ToolsPath, ReadOnly: true})
	}
	return ms
}

// imageProbe is what a task image has of what the verifier needs.
type imageProbe struct {
	Godot   string   // `godot --version` when it is Godot 4, else ""
	Missing []string // what is absent, each with why
}

// probeScript prints, for the godot binary $1 and the judge's Python module
// $2 (empty: none), what the image has.
const probeScript = `g="$1"
if command -v "$g" >/dev/null 2>&1; then echo "godot=$("$g" --version --headless 2>/dev/null | head -n 1)"; else echo "godot="; fi
for t in python3 bash Xvfb ffmpeg xdotool; do if command -v "$t" >/dev/null 2>&1; then echo "$t=ok"; else echo "$t="; fi; done
if [ -n "$2" ]; then if python3 -c "import $2" >/dev/null 2>&1; then echo "judge=ok"; else echo "judge="; fi; fi
`

func (d *DockerBenchmark) godotName() string {
	if g := d.host.Opts.GodotBin; g != "" && g != "none" {
		return g
	}
	return "godot"
}

// probe starts a throw-away container of img and asks it (cached per image).
func (d *DockerBenchmark) probe(ctx context.Context, t benchmark.Task, img string) (imageProbe, error) {
	d.mu.Lock()
	p, ok := d.probes[img]
	d.mu.Unlock()
	if ok {
		return p, nil
	}
	env, err := d.docker.Start(ctx, docker.Spec{Image: img, Labels: map[string]string{"hoh.task": t.ID, "hoh.role": "probe"}})
	if err != nil {
		return p, err
	}
	defer env.Close(context.WithoutCancel(ctx))
	judge := ""
	if d.host.Opts.Verifier != nil {
		judge = d.host.Opts.Verifier.Judge
		if judge == "" {
			judge = "openai" // upstream's default
		}
		judge = judgeModules[judge]
	}
	var out bytes.Buffer
	ex, err := env.ExecutorAs("0").Run(ctx, sandbox.Command{Args: []string{"/bin/sh", "-c", probeScript, "probe", d.godotName(), judge},
		Stdout: &out, Stderr: &out, WallTimeout: time.Minute})
	if err != nil || ex.Code != 0 {
		return p, fmt.Errorf("probing image %s (/bin/sh): exit %d %v: %s", img, ex.Code, err, classify.LastLines(out.String(), 3))
	}
	got := map[string]string{}
	sc := bufio.NewScanner(&out)
	for sc.Scan() {
		if k, v, ok := strings.Cut(sc.Text(), "="); ok {
			got[k] = strings.TrimSpace(v)
		}
	}
	switch v := got["godot"]; {
	case strings.HasPrefix(v, "4."):
		p.Godot = v
	case v == "":
		p.Missing = append(p.Missing, fmt.Sprintf("Godot 4 (%q is not on the image's PATH)", d.godotName()))
	default:
		p.Missing = append(p.Missing, fmt.Sprintf("Godot 4 (%s --version gave %q)", d.godotName(), v))
	}
	for _, tool := range []string{"python3", "bash", "Xvfb", "ffmpeg", "xdotool"} {
		if got[tool] != "ok" {
			p.Missing = append(p.Missing, tool)
		}
	}
	if v, asked := got["judge"]; asked && v != "ok" {
		p.Missing = append(p.Missing, "the judge's Python client "+judge)
	}
	d.mu.Lock()
	if d.probes == nil {
		d.probes = map[string]imageProbe{}
	}
	d.probes[img] = p
	d.mu.Unlock()
	return p, nil
}

// judgeModules are the Python modules upstream's judges import.
var judgeModules = map[string]string{"stub": "", "claude": "anthropic", "opus": "anthropic",
	"kimi": "openai", "openai": "openai", "gemini": "google.genai"}

// Prepare implements benchmark.Preparer: it builds each task's image and
// checks the verifier can run in it, so a task image that does not build
// (its FROM image absent and unpullable) or lacks Godot 4 refuses the run
// before anything is spent. Without a Docker client (planning only) it
// checks nothing.
func (d *DockerBenchmark) Prepare(ctx context.Context, tasks []benchmark.Task) error {
	if d.docker == nil {
		return nil
	}
	var errs []error
	for _, t := range tasks {
		img, _, err := d.harbor.ContainerImage(ctx, t)
		if err != nil {
			errs = append(errs, fmt.Errorf("task %s: its environment image %s cannot be built here, so its agents and verifier have nowhere to run: %w",
				t.ID, dockerfileBase(t), err))
			continue
		}
		if d.plumbed {
			continue
		}
		p, err := d.probe(ctx, t, img)
		if err != nil {
			errs = append(errs, fmt.Errorf("task %s: %w", t.ID, err))
			continue
		}
		if len(p.Missing) > 0 {
			errs = append(errs, fmt.Errorf("task %s: GameCraft-Bench's verifier cannot run in its environment image %s (agent_environment: docker runs it there), so every checkpoint would score 0: it lacks %s; install them in the task's environment/Dockerfile, or set benchmark option godot_bin: none for a plumbing run without scores",
				t.ID, dockerfileBase(t), strings.Join(p.Missing, ", ")))
		}
	}
	return errors.Join(errs...)
}

// dockerfileBase names a task's environment/Dockerfile and its FROM images.
func dockerfileBase(t benchmark.Task) string {
	p := filepath.Join(t.Dir, "environment", "Dockerfile")
	data, err := os.ReadFile(p)
	if err != nil {
		return p
	}
	var from []string
	for _, l := range strings.Split(string(data), "\n") {
		f := strings.Fields(l)
		if len(f) >= 2 && strings.EqualFold(f[0], "FROM") {
			from = append(from, f[1])
		}
	}
	if len(from) == 0 {
		return p
	}
	return fmt.Sprintf("(%s, FROM %s)", p, strings.Join(from, ", "))
}

// RoleEnvironment implements benchmark.RoleEnvironment for the container:
// screenshots can be taken when the task image has Godot 4 and Xvfb.
func (d *DockerBenchmark) RoleEnvironment(ctx context.Context, t benchmark.Task) string {
	missing := "the task's environment image could not be inspected"
	if d.docker != nil {
		if img, _, err := d.harbor.ContainerImage(ctx, t); err == nil {
			if p, err := d.probe(ctx, t, img); err == nil {
				missing = ""
				for _, m := range p.Missing {
					if strings.HasPrefix(m, "Godot") || m == "Xvfb" {
						if missing != "" {
							missing += "; "
						}
						missing += m + " is not installed"
					}
				}
			}
		}
	}
	return screenshotText(missing, "outside the project; they stay in this container")
}

// Check implements benchmark.Check in a throw-away container of the task
// image: Godot's headless launch of the project, as the verifier's build
// gate does.
func (d *DockerBenchmark) Check(ctx context.Context, t benchmark.Task, dir string) ([]runrecord.CheckResult, error) {
	if _, err := d.host.lookup(t); err != nil {
		return nil, err
	}
	res := runrecord.CheckResult{Name: buildCheckName, ExitCode: -1,
		Command: d.godotName() + " --headless --path " + GamePath + " --quit-after 5"}
	spec, err := d.ContainerSpec(ctx, t)
	if err != nil {
		return nil, err
	}
	if p, err := d.probe(ctx, t, spec.Image); err != nil {
		return nil, err
	} else if p.Godot == "" {
		res.Unavailable, res.Output = true, godotMissing+" (the task's environment image has none)"
		return []runrecord.CheckResult{res}, nil
	}
	if _, err := os.Stat(filepath.Join(dir, "project.godot")); err != nil {
		res.Output = "no project.godot in " + GamePath
		return []runrecord.CheckResult{res}, nil
	}
	spec.Labels = map[string]string{"hoh.task": t.ID, "hoh.role": "check"}
	if err := d.DecorateSpec(ctx, t, &spec); err != nil {
		return nil, err
	}
	env, err := d.startWithGame(ctx, spec, dir)
	if err != nil {
		return nil, err
	}
	defer env.Close(context.WithoutCancel(ctx))
	timeout := d.host.Opts.BuildTimeout
	if timeout <= 0 {
		timeout = 60 * time.Second
	}
	var out bytes.Buffer
	ex, err := env.Executor().Run(ctx, sandbox.Command{Args: []string{d.godotName(), "--headless", "--path", GamePath, "--quit-after", "5"},
		Dir: GamePath, Env: []string{"GODOT_SILENCE_ROOT_WARNING=1"}, Stdout: &out, Stderr: &out, WallTimeout: timeout})
	if err != nil {
		return nil, err
	}
	res.ExitCode = ex.Code
	text := out.String()
	if ex.TimedOut {
		text += fmt.Sprintf("\n[build check timed out after %s]", timeout)
	}
	fatal := fatalLine(text)
	res.Passed = ex.Code == 0 && !ex.TimedOut && fatal == ""
	if ex.Code == 0 && fatal != "" {
		text += "\n[build check failed: fatal error line: " + fatal + "]"
	}
	if len(text) > maxCheckOutput {
		text = "[... output truncated ...]\n" + text[len(text)-maxCheckOutput:]
	}
	res.Output = text
	return []runrecord.CheckResult{res}, nil
}

// startWithGame starts spec and puts the project in dir at /workspace/game
// (replacing the committed environment's link to the agents' workspace).
func (d *DockerBenchmark) startWithGame(ctx context.Context, spec docker.Spec, dir string) (*docker.Environment, error) {
	env, err := d.docker.Start(ctx, spec)
	if err != nil {
		return nil, err
	}
	var setup bytes.Buffer
	ex, err := env.ExecutorAs("0").Run(ctx, sandbox.Command{
		Args:   []string{"/bin/sh", "-c", `rm -rf "$1" "$2" "$3" && mkdir -p "$1" "$3" && chmod 777 "$1" "$3"`, "setup", GamePath, TestsPath, LogsPath + "/verifier"},
		Stdout: &setup, Stderr: &setup, WallTimeout: time.Minute,
	})
	if err == nil && ex.Code != 0 {
		err = &docker.InfraError{Stage: "verifier setup", Err: fmt.Errorf("preparing %s: exit %d: %s", GamePath, ex.Code, strings.TrimSpace(setup.String()))}
	}
	if err == nil {
		err = env.CopyContentsIn(ctx, dir, GamePath)
	}
	if err != nil {
		env.Close(context.WithoutCancel(ctx))
		return nil, err
	}
	return env, nil
}

// Evaluate runs the task's tests/test.sh (upstream's `python3 -m
// gamecraft_bench.verifier`) in the agents' environment committed at this
// checkpoint (benchmark.EnvironmentImage), else in the task image, with the
// checkpoint's project at /workspace/game, tests/ at /tests and
// gamecraft_bench at VerifierLib, and scores its breakdown.json with the
// rubric. /logs/verifier is kept in benchmark.OutputDir and test.sh's output
// beside it; no breakdown.json is an error (no verification), never a 0.
func (d *DockerBenchmark) Evaluate(ctx context.Context, t benchmark.Task, dir string) (runrecord.Evaluation, error) {
	td, err := d.host.lookup(t)
	if err != nil {
		return runrecord.Evaluation{}, err
	}
	v := d.host.Opts.Verifier
	if v == nil {
		v = &Verifier{}
	}
	out, done, err := verifierOutput(ctx, dir)
	if err != nil {
		return runrecord.Evaluation{}, err
	}
	defer done()
	testsDir := filepath.Join(td.Task.Dir, "tests")
	if _, err := os.Stat(filepath.Join(testsDir, "test.sh")); err != nil {
		return runrecord.Evaluation{}, fmt.Errorf("task %s: %w: %v", t.ID, errEvaluationUnavailable, err)
	}
	spec, err := d.ContainerSpec(ctx, t)
	if err != nil {
		return runrecord.Evaluation{}, err
	}
	where := "the task's environment image with the checkpoint's project"
	if img := benchmark.EnvironmentImage(ctx); img != "" {
		spec.Image, where = img, "the agents' environment committed at this checkpoint"
	}
	spec.User = ""
	spec.Labels = map[string]string{"hoh.task": t.ID, "hoh.role": "verifier"}
	if err := d.DecorateSpec(ctx, t, &spec); err != nil {
		return runrecord.Evaluation{}, err
	}
	env, err := d.startWithGame(ctx, spec, dir)
	if err != nil {
		return runrecord.Evaluation{}, err
	}
	defer env.Close(context.WithoutCancel(ctx))
	// The evaluator's files arrive only now, in the verifier's container.
	if err := env.CopyIn(ctx, testsDir, "/"); err != nil {
		return runrecord.Evaluation{}, err
	}
	venv, secrets, err := d.verifierEnv(ctx, env, v)
	if err != nil {
		return runrecord.Evaluation{}, err
	}
	timeout := v.Timeout
	if timeout <= 0 {
		timeout = td.Task.Limits.VerifierTimeout
	}
	var log bytes.Buffer
	ex, runErr := env.ExecutorAs("0").Run(ctx, sandbox.Command{Args: []string{"bash", TestsPath + "/test.sh"}, Dir: GamePath, Env: venv,
		Stdout: &log, Stderr: &log, WallTimeout: timeout})
	text := redactSecrets(log.String(), secrets)
	if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
		return runrecord.Evaluation{}, err
	}
	if err := os.WriteFile(out+".log", []byte(text), 0o644); err != nil {
		return runrecord.Evaluation{}, err
	}
	if runErr != nil {
		return runrecord.Evaluation{}, fmt.Errorf("task %s: %w: %v", t.ID, errEvaluationUnavailable, runErr)
	}
	if ex.TimedOut {
		return runrecord.Evaluation{}, fmt.Errorf("task %s: %w: timed out after %s", t.ID, errEvaluationUnavailable, timeout)
	}
	if err := keepVerifierLogs(ctx, env, out); err != nil {
		return runrecord.Evaluation{}, err
	}
	data, err := os.ReadFile(filepath.Join(out, BreakdownFile))
	if err != nil {
		return runrecord.Evaluation{}, fmt.Errorf("task %s: %w: it wrote no %s in the container (exit %d; see %s.log): %s",
			t.ID, errEvaluationUnavailable, BreakdownFile, ex.Code, out, classify.LastLines(text, 5))
	}
	ev, err := scoreBreakdown(td, data)
	if err != nil {
		return ev, err
	}
	ev.Details["environment"] = where
	return ev, nil
}

// verifierEnv is the environment of the verifier's test.sh in env; it copies
// gamecraft_bench in at VerifierLib when there is one to put on PYTHONPATH.
// secrets are the values to redact from test.sh's output (the judge's key).
func (d *DockerBenchmark) verifierEnv(ctx context.Context, env *docker.Environment, v *Verifier) (venv, secrets []string, err error) {
	venv = []string{"LANG=C.UTF-8", "GODOT_SILENCE_ROOT_WARNING=1"}
	lib := v.PythonPath
	if lib == "" {
		lib = d.host.Root
	}
	if isDir(filepath.Join(lib, "gamecraft_bench")) {
		if err := env.CopyIn(ctx, filepath.Join(lib, "gamecraft_bench"), VerifierLib); err != nil {
			return nil, nil, err
		}
		venv = append(venv, "PYTHONPATH="+VerifierLib)
	}
	if d.host.Opts.GodotBin != "" {
		venv = append(venv, "GAMECRAFT_BENCH_GODOT_BIN="+d.host.Opts.GodotBin)
	}
	if v.Judge != "" {
		venv = append(venv, "GAMECRAFT_BENCH_JUDGE="+v.Judge)
	}
	if v.JudgeModel != "" {
		venv = append(venv, "GAMECRAFT_BENCH_JUDGE_MODEL="+v.JudgeModel)
	}
	if v.JudgeKeyEnv != "" {
		if val, ok := os.LookupEnv(v.JudgeKeyEnv); ok {
			venv = append(venv, v.JudgeKeyEnv+"="+val)
			secrets = append(secrets, val)
		}
	}
	return venv, secrets, nil
}

// redactSecrets replaces each secret of at least 4 characters in text
// (shorter ones would redact ordinary text).
func redactSecrets(text string, secrets []string) string {
	for _, s := range secrets {
		if len(s) >= 4 {
			text = strings.ReplaceAll(text, s, harness.Redacted)
		}
	}
	return text
}

// keepVerifierLogs copies the container's /logs/verifier to out: it becomes
// out itself (CopyOutFiles keeps the base name; a link left there is a
// note, never read through).
func keepVerifierLogs(ctx context.Context, env *docker.Environment, out string) error {
	stage := out + ".copy"
	os.RemoveAll(stage)
	defer os.RemoveAll(stage)
	if err := env.CopyOutFiles(ctx, LogsPath+"/verifier", stage); err != nil {
		return err
	}
	return os.Rename(filepath.Join(stage, "verifier"), out)
}
