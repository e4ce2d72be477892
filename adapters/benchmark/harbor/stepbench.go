package harbor

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/hoh-research/hoh/adapters/benchmark"
	"github.com/hoh-research/hoh/adapters/sandbox"
	"github.com/hoh-research/hoh/adapters/sandbox/docker"
	"github.com/hoh-research/hoh/internal/fstree"
	"github.com/hoh-research/hoh/runrecord"
)

// stepBenchmark is the task's benchmark as step i of a multi-step task runs
// it: its containers as the step declares them ([steps.agent] user and
// network over [agent]'s), its checkpoints verified by the step's verifier
// (ForStep). Everything else is the task's.
type stepBenchmark struct {
	*Benchmark
	step int
	// a0, once the step has started, holds its prepared workspace: the
	// step's A_0.
	a0 string
}

// InitialWorkspace is the workspace the step's start prepared, else the
// task's.
func (s stepBenchmark) InitialWorkspace(ctx context.Context, t benchmark.Task, dir string) error {
	if s.a0 == "" {
		return s.Benchmark.InitialWorkspace(ctx, t, dir)
	}
	return fstree.Copy(s.a0, dir, fstree.Options{})
}

func (s stepBenchmark) file(t benchmark.Task) (TaskFile, error) {
	f, err := taskFile(t)
	if err != nil {
		return f, err
	}
	if s.step >= len(f.Steps) {
		return f, fmt.Errorf("task %s: %s has no step %d", t.ID, filepath.Join(t.Dir, "task.toml"), s.step+1)
	}
	return f.ForStep(s.step), nil
}

// Evaluate runs the step's verifier on a checkpoint of the step, as Evaluate
// runs the task's: tests/ and then the step's tests/ at /tests, the step's
// test.sh when it has one, its timeout, env, user and environment mode.
func (s stepBenchmark) Evaluate(ctx context.Context, t benchmark.Task, dir string) (runrecord.Evaluation, error) {
	f, err := s.file(t)
	if err != nil {
		return runrecord.Evaluation{}, err
	}
	return s.evaluateFile(ctx, t, dir, f)
}

// ContainerSpec is the task container as the step runs it.
func (s stepBenchmark) ContainerSpec(ctx context.Context, t benchmark.Task) (docker.Spec, error) {
	f, err := s.file(t)
	if err != nil {
		return docker.Spec{}, err
	}
	return s.containerSpec(ctx, t, f)
}

// DecorateSpec is DecorateSpec with the step's agent network.
func (s stepBenchmark) DecorateSpec(ctx context.Context, t benchmark.Task, spec *docker.Spec) error {
	f, err := s.file(t)
	if err != nil {
		return err
	}
	return s.decorate(ctx, t, f, spec, AgentPhase)
}

// Steps implements benchmark.Stepped: each [[steps]] entry as a task of its
// own (its instruction, its agent and verifier timeouts), started, verified
// and gated as Harbor does.
func (b *Benchmark) Steps(t benchmark.Task) ([]benchmark.Step, error) {
	f, err := taskFile(t)
	if err != nil || len(f.Steps) == 0 {
		return nil, err
	}
	instr := make([]string, len(f.Steps))
	for i, s := range f.Steps {
		data, err := os.ReadFile(filepath.Join(stepDir(t.Dir, s.Name), "instruction.md"))
		if err != nil {
			return nil, err
		}
		instr[i] = string(data)
	}
	out := make([]benchmark.Step, len(f.Steps))
	for i, s := range f.Steps {
		v := f.ForStep(i)
		st := t
		st.Spec = instr[i]
		st.Limits.AgentTimeout = timeoutOr(v.Agent.TimeoutSec, DefaultAgentTimeout)
		st.Limits.VerifierTimeout = timeoutOr(v.Verifier.TimeoutSec, defaultVerifierTimeout)
		sb := stepBenchmark{Benchmark: b, step: i}
		out[i] = benchmark.Step{Name: s.Name, Task: st, Context: stepContext(f, i, instr), Bench: sb, Gate: stepGate(s),
			Start: func(ctx context.Context, image, ws string, labels map[string]string) (benchmark.StepStart, error) {
				return sb.start(ctx, st, image, ws, labels)
			}}
	}
	return out, nil
}

func timeoutOr(n *Num, def time.Duration) time.Duration {
	if n == nil || *n <= 0 {
		return def
	}
	return seconds(float64(*n))
}

// StepsReward implements benchmark.Stepped: Harbor's
// multi_step_reward_strategy over the steps that ran.
func (b *Benchmark) StepsReward(t benchmark.Task, steps []runrecord.Evaluation) runrecord.Evaluation {
	f, err := taskFile(t)
	if err != nil {
		return runrecord.Evaluation{Metrics: map[string]float64{"reward": 0}, Error: err.Error()}
	}
	return stepsReward(f.MultiStepRewardStrategy, steps)
}

// start prepares the step's start in Harbor's order: its workdir/ files are
// copied into the workspace (Harbor uploads them to WORKDIR, which is hoh's
// workspace); when it has workdir/setup.sh or a [steps.healthcheck], a
// container of the environment (image, else the task's) with that
// workspace runs setup.sh with bash from the workspace as the step's agent
// user, then polls the health check, and is committed (labels) as the image
// the step starts from, its workspace taken back. A setup.sh or health check
// that fails is the step's own failure, not an infrastructure one.
func (s stepBenchmark) start(ctx context.Context, t benchmark.Task, image, ws string, labels map[string]string) (benchmark.StepStart, error) {
	f, err := s.file(t)
	if err != nil {
		return benchmark.StepStart{}, err
	}
	step := f.Steps[s.step]
	wd := filepath.Join(stepDir(t.Dir, step.Name), "workdir")
	if dirExists(wd) {
		if err := fstree.Copy(wd, ws, fstree.Options{}); err != nil {
			return benchmark.StepStart{}, fmt.Errorf("step %s: upload %s: %w", step.Name, wd, err)
		}
	}
	started := s
	started.a0 = ws
	_, serr := os.Stat(filepath.Join(wd, "setup.sh"))
	if serr != nil && step.Healthcheck == nil {
		return benchmark.StepStart{Image: image, Bench: started}, nil
	}
	st, err := s.runStart(ctx, t, f, image, ws, serr == nil, labels)
	st.Bench = started
	return st, err
}

// runStart runs the step's setup.sh (when setup) and health check in a
// container of the environment and commits it (start).
func (s stepBenchmark) runStart(ctx context.Context, t benchmark.Task, f TaskFile, image, ws string, setup bool, labels map[string]string) (benchmark.StepStart, error) {
	step := f.Steps[s.step]
	spec, err := s.containerSpec(ctx, t, f)
	if err != nil {
		return benchmark.StepStart{}, err
	}
	wp, err := s.workspacePath(ctx, t, spec.Image)
	if err != nil {
		return benchmark.StepStart{}, err
	}
	if image != "" {
		spec.Image = image
	}
	spec.Labels = map[string]string{"hoh.task": t.ID, "hoh.role": "step-start"}
	if err := s.decorate(ctx, t, f, &spec, AgentPhase); err != nil {
		return benchmark.StepStart{}, err
	}
	env, err := s.Docker.Start(ctx, spec)
	if err != nil {
		return benchmark.StepStart{}, err
	}
	defer env.Close(context.WithoutCancel(ctx))
	if err := placeWorkspace(ctx, env, ws, wp, spec.User); err != nil {
		return benchmark.StepStart{}, err
	}
	if setup {
		var out bytes.Buffer
		ex, err := env.ExecutorAs(spec.User).Run(ctx, sandbox.Command{Args: []string{"bash", wp + "/setup.sh"}, Dir: wp,
			Stdout: &out, Stderr: &out, WallTimeout: t.Limits.AgentTimeout})
		if err != nil {
			return benchmark.StepStart{}, err
		}
		if ex.Code != 0 || ex.TimedOut {
			return benchmark.StepStart{Failure: fmt.Sprintf("step %s: %s exited %d: %s", step.Name,
				filepath.Join(stepDir(t.Dir, step.Name), "workdir", "setup.sh"), ex.Code, tailString(strings.TrimSpace(out.String()), 2000))}, nil
		}
	}
	if step.Healthcheck != nil {
		failure, err := pollHealth(ctx, env.ExecutorAs(spec.User), wp, step.Healthcheck)
		if err != nil || failure != "" {
			return benchmark.StepStart{Failure: failure}, err
		}
	}
	if err := takeWorkspace(ctx, env, wp, ws); err != nil {
		return benchmark.StepStart{}, err
	}
	img, err := env.Commit(ctx, labels)
	return benchmark.StepStart{Image: img}, err
}

// placeWorkspace replaces the container's workspace wp with ws's files,
// given to user (when set).
func placeWorkspace(ctx context.Context, env *docker.Environment, ws, wp, user string) error {
	var out bytes.Buffer
	ex, err := env.ExecutorAs("0").Run(ctx, sandbox.Command{
		Args:   []string{"/bin/sh", "-c", `{ [ "$1" = / ] || rm -rf "$1"; } && mkdir -p "$1"`, "setup", filepath.Clean(wp)},
		Stdout: &out, Stderr: &out, WallTimeout: time.Minute,
	})
	if err == nil && ex.Code != 0 {
		err = fmt.Errorf("preparing %s: exit %d: %s", wp, ex.Code, strings.TrimSpace(out.String()))
	}
	if err == nil {
		err = env.CopyContentsIn(ctx, ws, wp)
	}
	if err == nil && user != "" {
		_, err = env.ExecutorAs("0").Run(ctx, sandbox.Command{Args: []string{"chown", "-R", user, wp}, WallTimeout: time.Minute})
	}
	if err != nil {
		return &docker.InfraError{Stage: "step start", Err: err}
	}
	return nil
}

// takeWorkspace makes ws hold the container's workspace wp.
func takeWorkspace(ctx context.Context, env *docker.Environment, wp, ws string) error {
	tmp, err := os.MkdirTemp(filepath.Dir(filepath.Clean(ws)), ".hoh-step-start-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	if err := env.CopyOut(ctx, filepath.Clean(wp), tmp); err != nil {
		return err
	}
	if err := sandbox.EmptyDir(ws); err != nil {
		return err
	}
	return fstree.Copy(filepath.Join(tmp, filepath.Base(filepath.Clean(wp))), ws, fstree.Options{})
}

// pollHealth runs a [steps.healthcheck] with Docker's HEALTHCHECK rules
// (defaults: interval and timeout 30 s, 3 retries; failures within the
// start period do not count) until it passes or fails; the failure says
// why.
func pollHealth(ctx context.Context, ex sandbox.Executor, dir string, h *Healthcheck) (string, error) {
	hc := healthConfig(h)
	if hc == nil {
		return "", nil
	}
	interval, timeout, retries := hc.Interval, hc.Timeout, hc.Retries
	if interval <= 0 {
		interval = 30 * time.Second
	}
	if timeout <= 0 {
		timeout = 30 * time.Second
	}
	if retries <= 0 {
		retries = 3
	}
	began, failures := time.Now(), 0
	for {
		var out bytes.Buffer
		x, err := ex.Run(ctx, sandbox.Command{Args: []string{"/bin/sh", "-c", h.Command}, Dir: dir, Stdout: &out, Stderr: &out, WallTimeout: timeout})
		if err != nil {
			return "", err
		}
		if x.Code == 0 && !x.TimedOut {
			return "", nil
		}
		wait := interval
		if time.Since(began) < hc.StartPeriod {
			wait = max(hc.StartInterval, time.Second)
		} else if failures++; failures >= retries {
			return fmt.Sprintf("[steps.healthcheck] %q failed %d time(s) in a row (last: exit %d: %s)", h.Command, failures, x.Code, tailString(strings.TrimSpace(out.String()), 500)), nil
		}
		select {
		case <-ctx.Done():
			return "", ctx.Err()
		case <-time.After(wait):
		}
	}
}
