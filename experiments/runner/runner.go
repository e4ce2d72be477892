// Package runner schedules a whole experiment: it opens the benchmark
// (connecting to Docker first when its kind runs agents in containers) and
// lays out the plan, takes the run directory's lock, starts the scripted
// test-double provider where a configuration asks for it, runs trials in a
// worker pool with overall and per-configuration limits, stops starting
// trials once the token budget is spent, and keeps scores.csv and
// trials.jsonl current after every trial. Each trial's attempts run under
// the replacement policy of package attempt (paper B.2); what the run shows
// and what hoh status/show read back is package status.
// Container benchmarks (Harbor, ProgramBench) get one Docker client and one
// model-relay binary per run; every trial attempt opens its own task
// container (experiments/environment), a container that cannot start is an
// infrastructure failure, and every container and image of the run is
// removed when Run returns (or on SIGINT/SIGTERM).
// Rerunning the same command resumes: finished trials are skipped and
// interrupted ones continue from their last committed stage.
package runner

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/hoh-research/hoh/adapters/benchmark"
	"github.com/hoh-research/hoh/adapters/sandbox"
	"github.com/hoh-research/hoh/experiments/config"
	"github.com/hoh-research/hoh/experiments/environment"
	"github.com/hoh-research/hoh/experiments/plan"
	"github.com/hoh-research/hoh/experiments/provider"
	"github.com/hoh-research/hoh/experiments/runner/status"
	"github.com/hoh-research/hoh/runrecord"
)

// Options adjust a run.
type Options struct {
	Shard              plan.Shard
	AllowChangedConfig bool
	// Out receives progress and the summary table; Terminal selects the
	// progress bar instead of plain log lines.
	Out      io.Writer
	Terminal bool
	// Agents builds each configuration's CLI and provider; nil:
	// provider.Open (tests: provider.Offline for an in-process harness).
	Agents provider.Opener
	// Bench replaces the config's benchmark (tests); nil: plan.Build.
	Bench benchmark.Benchmark
	// Preflight runs one trivial turn of every configuration before any
	// trial (experiments/preflight); a failure stops the run unstarted.
	Preflight bool
	// Exec runs the CLIs of host benchmarks (tests); nil: sandbox.Local.
	// Container benchmarks always run them in the trial's task container.
	Exec sandbox.Executor
}

// Result of a run.
type Result struct {
	Plan     *plan.Plan
	Outcomes []status.Outcome
	// Stopped are the configurations stopped in this run (no model turn
	// possible, or the circuit breaker), with why; stops.jsonl keeps them.
	Stopped map[string]string
	// DockerRun is the hoh.run label of the run's containers and images
	// (empty when its benchmark needs none); all are removed when Run returns.
	DockerRun string
}

// Count returns how many outcomes are in state s.
func (r *Result) Count(s runrecord.State) int {
	n := 0
	for _, o := range r.Outcomes {
		if o.State == s {
			n++
		}
	}
	return n
}

// Prepare validates everything a run needs and returns its plan, without
// touching the output directory (hoh run --check).
func Prepare(ctx context.Context, e *config.Experiment, bench benchmark.Benchmark) (*plan.Plan, error) {
	if bench != nil {
		return plan.BuildWith(ctx, e, bench)
	}
	return plan.Build(ctx, e)
}

// hostIsolation refuses host trials where each role invocation cannot be
// confined to its contract (sandbox.Confined needs unprivileged user, mount
// and PID namespaces): a container benchmark, or a caller's own executor,
// does not need them.
func hostIsolation(bench benchmark.Benchmark, exec sandbox.Executor) error {
	if _, inContainers := bench.(environment.ContainerBenchmark); inContainers {
		return nil
	}
	if _, local := exec.(sandbox.Local); exec != nil && !local {
		return nil
	}
	if err := sandbox.NamespacesAvailable(); err != nil {
		return fmt.Errorf("benchmark %s runs its roles on the host, where each invocation must be confined to its role's files; refused: %w", bench.Name(), err)
	}
	return nil
}

// Run executes the experiment (or the shard of it) to completion, or until
// ctx ends. Trial failures are outcomes; the error is for the run itself.
func Run(ctx context.Context, e *config.Experiment, opts Options) (res *Result, err error) {
	if opts.Out == nil {
		opts.Out = io.Discard
	}
	// Every path a run hands on (CLI state, views, container mounts) is
	// absolute: a CLI resolves a relative one from its own directory.
	out, err := filepath.Abs(e.Output)
	if err != nil {
		return nil, err
	}
	r := &run{exp: e, opts: opts, out: out, outcomes: newOutcomeBook(), trialSpent: map[string]runrecord.Usage{}, breaker: newBreaker(out)}
	dockerRun := ""
	defer func() {
		if cerr := r.closeContainers(); cerr != nil {
			err = errors.Join(err, cerr)
		}
		if res != nil {
			res.DockerRun = dockerRun
		}
	}()
	// A container benchmark gets the run's Docker client when it opens.
	bench := opts.Bench
	if err := r.connectDocker(ctx, bench); err != nil {
		return nil, err
	}
	dockerRun = r.dockerRun()
	if r.plan, err = r.buildPlan(ctx, bench); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return nil, err
	}
	unlock, err := lockDir(out)
	if err != nil {
		return nil, err
	}
	defer unlock()
	defer r.close()
	if err := r.prepare(ctx); err != nil {
		return nil, err
	}
	// A persistent local fault (full disk) stops every trial, not just one.
	ctx, stop := context.WithCancelCause(ctx)
	defer stop(nil)
	r.stop = func(reason string) { stop(errors.New("run stopped: " + reason)) }
	return r.execute(ctx)
}

// buildPlan opens the benchmark (unless given) and plans the run, refusing
// a plan whose roles could not be confined or whose tasks lack tools.
func (r *run) buildPlan(ctx context.Context, bench benchmark.Benchmark) (*plan.Plan, error) {
	if bench == nil {
		var err error
		if bench, err = plan.OpenBenchmark(r.exp, r.dockerClient()); err != nil {
			return nil, err
		}
	}
	p, err := plan.BuildWith(ctx, r.exp, bench)
	if err != nil {
		return nil, err
	}
	if err := Check(ctx, p, CheckOptions{Exec: r.opts.Exec}); err != nil {
		return nil, err
	}
	return p, nil
}

// prepare starts the harnesses and containers, checks a resume and runs
// the preflight, then writes the lock and keeps the run's inputs.
func (r *run) prepare(ctx context.Context) error {
	p := r.plan
	if err := r.startHarnesses(); err != nil {
		return err
	}
	if err := r.startContainers(ctx); err != nil {
		return err
	}
	for label, rt := range r.configs {
		p.Lock.Harnesses[label] = rt.agent.Harness.Name() + "@" + rt.agent.Harness.Version()
		// A role team's own agents too: a resume must find each role's CLI
		// at the version it ran.
		for role, a := range rt.team {
			if a != rt.agent {
				p.Lock.Harnesses[runrecord.RoleLockKey(label, role)] = a.Harness.Name() + "@" + a.Harness.Version()
			}
		}
	}
	p.LockShard(r.opts.Shard)
	// A resume that will be refused is refused before the preflight spends
	// a token; what it will extend is said once it is accepted.
	notes, err := ResumeCheck(r.out, p.Lock, r.opts.AllowChangedConfig)
	if err != nil {
		return err
	}
	switch {
	case r.opts.Preflight && r.nothingLeft():
		// A rerun of a finished run reaches no model: nothing would use the turn.
		fmt.Fprintln(r.opts.Out, "preflight: skipped, every trial finished in an earlier run")
	case r.opts.Preflight:
		if err := r.preflight(ctx); err != nil {
			return err
		}
	}
	for _, n := range notes {
		fmt.Fprintln(r.opts.Out, n)
	}
	if err := writeLock(r.out, p); err != nil {
		return err
	}
	return keepInputs(r.out, r.exp)
}

// nothingLeft reports whether an earlier run finished every trial of the
// shard.
func (r *run) nothingLeft() bool {
	for _, t := range r.plan.Select(r.opts.Shard) {
		if _, done := r.previous(t); !done {
			return false
		}
	}
	return true
}

// ResumeCheck compares the lock of an existing run directory out with the
// lock cur a run would write: it refuses a resume with a different
// configuration (unless allowChanged) or fewer steps, and otherwise returns
// what the run will say about the resume (extensions, warnings, moved
// endpoints). A directory without a lock is a new run: no notes.
func ResumeCheck(out string, cur runrecord.Lock, allowChanged bool) ([]string, error) {
	old, err := plan.ReadLock(out)
	switch {
	case os.IsNotExist(err):
		return nil, nil
	case err != nil:
		return nil, err
	}
	var notes []string
	raised, lowered := plan.ArmChanges(old, cur)
	if len(lowered) > 0 {
		return nil, fmt.Errorf("%s: lowering the number of iterations or passes is refused (the run's checkpoints are never discarded; use a new output directory):\n  %s",
			out, strings.Join(lowered, "\n  "))
	}
	if diff := plan.Diff(old, cur); len(diff) > 0 {
		if !allowChanged {
			return nil, fmt.Errorf("%s was started with a different configuration; refusing to resume (use --allow-changed-config to override, or another --output):\n  %s",
				out, strings.Join(diff, "\n  "))
		}
		notes = append(notes, fmt.Sprintf("warning: resuming %s with a changed configuration:\n  %s", out, strings.Join(diff, "\n  ")))
	}
	if len(raised) > 0 {
		notes = append(notes, fmt.Sprintf("extending %s: finished trials continue from their last checkpoint:\n  %s", out, strings.Join(raised, "\n  ")))
	}
	for _, c := range plan.EndpointChanges(old, cur) {
		notes = append(notes, fmt.Sprintf("note: resuming with a moved endpoint (same provider, API and model): %s", c))
	}
	return notes, nil
}

// writeLock writes lock.json and plan.json (after ResumeCheck).
func writeLock(out string, p *plan.Plan) error {
	if err := runrecord.WriteJSON(runrecord.RunLayout{Dir: out}.Lock(), p.Lock); err != nil {
		return err
	}
	return runrecord.WriteJSON(runrecord.RunLayout{Dir: out}.Plan(), p.Trials)
}

// configRuntime is one configuration as the run holds it: its agent (the
// CLI and its provider, cfg with the provider's served endpoint) and its
// concurrency limit.
type configRuntime struct {
	cfg   config.HarnessModel
	agent *provider.Agent
	limit int
	// team, for a role team (docs/roles.md), is the agent each role runs:
	// its own, opened from the config with the role's agent swapped in
	// (config.HarnessModel.ForRole), or agent for a role without one.
	team map[runrecord.Role]*provider.Agent
	// of, for a role's own agent as the preflight checks it (labelled
	// LABEL.ROLE), is the configuration whose trials it plays in.
	of string
}

// trialsLabel is the configuration label of the trials rt plays in.
func (rt *configRuntime) trialsLabel() string {
	if rt.of != "" {
		return rt.of
	}
	return rt.cfg.Label
}

type run struct {
	exp     *config.Experiment
	plan    *plan.Plan
	opts    Options
	out     string
	configs map[string]*configRuntime
	docker  *containers // nil unless the benchmark runs tasks in containers

	stop    func(reason string)
	breaker *breaker
	// trialSpent caches the usage spent on finished trials (spent).
	trialSpent map[string]runrecord.Usage
	outcomes   *outcomeBook
	// writing serializes rewriting the run's records.
	writing  sync.Mutex
	progress *status.Progress
}

func (r *run) close() {
	for _, c := range r.configs {
		c.agent.Close()
		for _, a := range c.team {
			a.Close()
		}
	}
}

func (r *run) startHarnesses() error {
	r.configs = map[string]*configRuntime{}
	open := r.opts.Agents
	if open == nil {
		open = provider.Open
	}
	for _, c := range r.exp.Configs {
		a, err := open(c, provider.Files{Resolve: r.exp.Resolve, ProviderLog: runrecord.RunLayout{Dir: r.out}.ProviderLog(c.Label)})
		if err != nil {
			return fmt.Errorf("config %s: %w", c.Label, err)
		}
		rt := &configRuntime{cfg: a.Config, agent: a, limit: c.Concurrency}
		r.configs[c.Label] = rt
		if err := r.openTeam(open, c, rt); err != nil {
			return err
		}
	}
	return nil
}

// secrets are every key the configuration's agents hold: its own and, in a
// role team, each role's.
func (rt *configRuntime) secrets() []string {
	out := slices.Clone(rt.agent.Secrets)
	for _, a := range rt.team {
		out = append(out, a.Secrets...)
	}
	return out
}

// openTeam opens the agent of each role of a role team with the
// configuration's opener: each its own provider (a scripted one logging to
// its own provider log), CLI and key; nothing without a team.
func (r *run) openTeam(open provider.Opener, c config.HarnessModel, rt *configRuntime) error {
	if !c.HasTeam() {
		return nil
	}
	rt.team = map[runrecord.Role]*provider.Agent{}
	for _, role := range runrecord.Roles {
		if c.Roles.Agent(role) == nil {
			rt.team[role] = rt.agent
			continue
		}
		log := runrecord.RunLayout{Dir: r.out}.ProviderLog(runrecord.RoleLockKey(c.Label, role))
		a, err := open(c.ForRole(role), provider.Files{Resolve: r.exp.Resolve, ProviderLog: log})
		if err != nil {
			return fmt.Errorf("config %s role %s: %w", c.Label, role, err)
		}
		rt.team[role] = a
	}
	return nil
}

func (r *run) trialDir(t plan.Trial) string { return runrecord.RunLayout{Dir: r.out}.Trial(t.Dir).Dir }
