// Package runner runs a whole experiment: it lays out the plan, takes the
// run directory's lock, starts the scripted test-double provider where a
// configuration asks for it, runs trials in a worker pool with overall and
// per-configuration limits, replaces attempts lost to infrastructure
// failures (paper B.2), stops starting trials once the token budget is
// spent, and keeps scores.csv and trials.jsonl current after every trial.
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
	"strings"
	"sync"
	"time"

	"github.com/hoh-research/hoh/adapters/benchmark"
	"github.com/hoh-research/hoh/adapters/harness"
	"github.com/hoh-research/hoh/adapters/harness/registry"
	"github.com/hoh-research/hoh/adapters/sandbox"
	"github.com/hoh-research/hoh/adapters/scripted"
	"github.com/hoh-research/hoh/experiments/config"
	"github.com/hoh-research/hoh/experiments/plan"
	"github.com/hoh-research/hoh/experiments/records"
	"github.com/hoh-research/hoh/experiments/trial"
)

// ScriptedKeyValue is the dummy key handed to a CLI talking to the scripted
// provider (the CLIs refuse to start without one).
const ScriptedKeyValue = "hoh-scripted-dummy-key"

// Options adjust a run.
type Options struct {
	Shard              plan.Shard
	AllowChangedConfig bool
	// Out receives progress and the summary table; Terminal selects the
	// progress bar instead of plain log lines.
	Out      io.Writer
	Terminal bool
	// NewHarness builds a configuration's harness; nil: registry.New.
	NewHarness func(c config.HarnessModel, spec registry.Spec) (harness.Harness, error)
	// Bench replaces the config's benchmark (tests); nil: plan.Build.
	Bench benchmark.Benchmark
	// Exec runs the CLIs of host benchmarks (tests); nil: sandbox.Local.
	// Container benchmarks always run them in the trial's task container.
	Exec sandbox.Executor
}

// State of a trial in a run directory.
type State string

const (
	StateDone      State = "done"
	StateFailed    State = "failed"
	StateRunning   State = "running"
	StateRemaining State = "remaining"
	StateBudget    State = "not run (budget)"
)

// Outcome is what became of one trial in this run.
type Outcome struct {
	Trial        plan.Trial
	State        State
	Status       trial.Status
	Reason       string
	Usage        harness.Usage
	Replacements int
	Skipped      bool // finished by an earlier run
}

// Result of a run.
type Result struct {
	Plan     *plan.Plan
	Outcomes []Outcome
	// DockerRun is the hoh.run label of the run's containers and images
	// (empty when its benchmark needs none); all are removed when Run returns.
	DockerRun string
}

// Count returns how many outcomes are in state s.
func (r *Result) Count(s State) int {
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

// Run executes the experiment (or the shard of it) to completion, or until
// ctx ends. Trial failures are outcomes; the error is for the run itself.
func Run(ctx context.Context, e *config.Experiment, opts Options) (res *Result, err error) {
	if opts.Out == nil {
		opts.Out = io.Discard
	}
	out := e.Output
	r := &run{exp: e, opts: opts, out: out, finished: map[string]Outcome{}}
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
	if bench == nil {
		if bench, err = plan.OpenBenchmark(e, r.dockerClient()); err != nil {
			return nil, err
		}
	}
	p, err := plan.BuildWith(ctx, e, bench)
	if err != nil {
		return nil, err
	}
	r.plan = p
	if err := os.MkdirAll(out, 0o755); err != nil {
		return nil, err
	}
	unlock, err := lockDir(out)
	if err != nil {
		return nil, err
	}
	defer unlock()
	defer r.close()
	if err := r.startHarnesses(); err != nil {
		return nil, err
	}
	if err := r.startContainers(ctx); err != nil {
		return nil, err
	}
	for label, rt := range r.configs {
		p.Lock.Harnesses[label] = rt.harness.Name() + "@" + rt.harness.Version()
	}
	if err := writeLock(out, p, opts); err != nil {
		return nil, err
	}
	return r.execute(ctx)
}

// writeLock writes lock.json and plan.json, or refuses a resume whose lock
// differs.
func writeLock(out string, p *plan.Plan, opts Options) error {
	cur := p.Lock
	cur.Shard = opts.Shard.String()
	old, err := plan.ReadLock(out)
	switch {
	case err == nil:
		if diff := plan.Diff(old, cur); len(diff) > 0 {
			if !opts.AllowChangedConfig {
				return fmt.Errorf("%s was started with a different configuration; refusing to resume (use --allow-changed-config to override):\n  %s",
					out, strings.Join(diff, "\n  "))
			}
			fmt.Fprintf(opts.Out, "warning: resuming %s with a changed configuration:\n  %s\n", out, strings.Join(diff, "\n  "))
		}
		for _, c := range plan.EndpointChanges(old, cur) {
			fmt.Fprintf(opts.Out, "note: resuming with a moved endpoint (same provider, API and model): %s\n", c)
		}
	case !os.IsNotExist(err):
		return err
	}
	if err := records.WriteJSON(plan.LockPath(out), cur); err != nil {
		return err
	}
	return records.WriteJSON(PlanPath(out), p.Trials)
}

// PlanPath is where a run directory lists its full plan.
func PlanPath(out string) string { return filepath.Join(out, "plan.json") }

type configRuntime struct {
	cfg     config.HarnessModel
	harness harness.Harness
	env     []string
	secrets []string
	server  *scripted.Server
	limit   int
}

type run struct {
	exp     *config.Experiment
	plan    *plan.Plan
	opts    Options
	out     string
	configs map[string]*configRuntime
	docker  *containers // nil unless the benchmark runs tasks in containers

	mu       sync.Mutex
	finished map[string]Outcome // by key, for records
	progress *progress
}

func (r *run) close() {
	for _, c := range r.configs {
		if c.server != nil {
			c.server.Close()
		}
	}
}

func (r *run) startHarnesses() error {
	r.configs = map[string]*configRuntime{}
	for _, c := range r.exp.Configs {
		rt := &configRuntime{cfg: c, limit: c.Concurrency}
		if c.IsScripted() {
			script, err := scripted.LoadScript(r.exp.Resolve(c.Scripted.Script))
			if err != nil {
				return err
			}
			srv, err := scripted.Start(script, scripted.Options{LogPath: filepath.Join(r.out, "provider-"+c.Label+".jsonl")})
			if err != nil {
				return fmt.Errorf("config %s: start the scripted provider: %w", c.Label, err)
			}
			rt.server = srv
			c.Provider.BaseURL = srv.URL() + "/v1"
			rt.env = []string{c.Provider.KeyEnv + "=" + ScriptedKeyValue}
		} else {
			key := os.Getenv(c.Provider.KeyEnv)
			if key == "" {
				return fmt.Errorf("config %s: the provider key variable %s is not set", c.Label, c.Provider.KeyEnv)
			}
			rt.env = []string{c.Provider.KeyEnv + "=" + key}
			rt.secrets = []string{key}
		}
		rt.cfg = c
		h, err := r.buildHarness(c, c.HarnessSpec())
		if err != nil {
			return fmt.Errorf("config %s: %w", c.Label, err)
		}
		rt.harness = h
		r.configs[c.Label] = rt
	}
	return nil
}

func (r *run) trialDir(t plan.Trial) string { return filepath.Join(r.out, t.Dir) }

// execute schedules the shard's trials.
func (r *run) execute(ctx context.Context) (*Result, error) {
	trials := r.plan.Select(r.opts.Shard)
	res := &Result{Plan: r.plan}
	outcomes := make([]Outcome, len(trials))
	var pending []int
	for i, t := range trials {
		o, done := r.previous(t)
		if done {
			outcomes[i] = o
			r.finished[t.Key] = o
			continue
		}
		outcomes[i] = Outcome{Trial: t, State: StateRemaining}
		pending = append(pending, i)
	}
	r.progress = newProgress(r.opts.Out, r.opts.Terminal, len(trials), r.exp.Scripted())
	for _, o := range outcomes {
		if o.Skipped {
			r.progress.finished(o)
		}
	}
	if err := r.writeOutputs(trials); err != nil {
		return nil, err
	}

	var (
		mu         sync.Mutex
		cond       = sync.NewCond(&mu)
		running    int
		perConfig  = map[string]int{}
		runningSet = map[string]plan.Trial{}
		wg         sync.WaitGroup
	)
	stop := context.AfterFunc(ctx, func() { mu.Lock(); cond.Broadcast(); mu.Unlock() })
	defer stop()
	limit := max(r.exp.Concurrency, 1)
	for len(pending) > 0 {
		mu.Lock()
		pick := -1
		for ctx.Err() == nil {
			if running < limit {
				for j, i := range pending {
					rt := r.configs[trials[i].Config]
					if rt.limit <= 0 || perConfig[trials[i].Config] < rt.limit {
						pick = j
						break
					}
				}
				if pick >= 0 {
					break
				}
			}
			cond.Wait()
		}
		if ctx.Err() != nil {
			mu.Unlock()
			break
		}
		if b := r.exp.Budget.Tokens; b > 0 {
			if spent := r.spent(runningSet); spent >= b {
				r.mu.Lock()
				for _, i := range pending {
					outcomes[i].State = StateBudget
					outcomes[i].Reason = fmt.Sprintf("token budget %d reached (%d spent)", b, spent)
					r.finished[trials[i].Key] = outcomes[i] // listed in trials.jsonl
					r.progress.finished(outcomes[i])
				}
				r.mu.Unlock()
				pending = nil
				mu.Unlock()
				break
			}
		}
		i := pending[pick]
		pending = append(pending[:pick], pending[pick+1:]...)
		t := trials[i]
		running++
		perConfig[t.Config]++
		runningSet[t.Key] = t
		mu.Unlock()
		wg.Add(1)
		go func() {
			defer wg.Done()
			o := r.runTrial(ctx, t)
			mu.Lock()
			outcomes[i] = o
			running--
			perConfig[t.Config]--
			delete(runningSet, t.Key)
			cond.Broadcast()
			mu.Unlock()
		}()
	}
	wg.Wait()
	res.Outcomes = outcomes
	r.progress.end()
	if err := r.writeOutputs(trials); err != nil {
		return res, err
	}
	if err := ctx.Err(); err != nil {
		return res, err
	}
	return res, nil
}

// previous reports a trial an earlier run finished (or whose records are
// corrupt, which counts as failed without stopping the others).
func (r *run) previous(t plan.Trial) (Outcome, bool) {
	l := trial.Layout{Dir: r.trialDir(t)}
	var s trial.Summary
	err := records.ReadJSON(l.Summary(), &s)
	switch {
	case err == nil:
		o := outcomeOf(t, &s)
		o.Skipped = true
		o.Replacements = countReplacements(r.out, t.Key)
		return o, true
	case os.IsNotExist(err):
		return Outcome{}, false
	default:
		return Outcome{Trial: t, State: StateFailed, Reason: err.Error(), Skipped: true}, true
	}
}

func outcomeOf(t plan.Trial, s *trial.Summary) Outcome {
	o := Outcome{Trial: t, State: StateDone, Status: s.Status, Reason: s.Reason, Usage: s.Usage}
	if s.Status != trial.StatusCompleted {
		o.State = StateFailed
	}
	return o
}

// spent sums the tokens of finished trials and of running ones so far.
func (r *run) spent(running map[string]plan.Trial) int64 {
	r.mu.Lock()
	var n int64
	for _, o := range r.finished {
		n += o.Usage.Total
	}
	r.mu.Unlock()
	for _, t := range running {
		u, _ := LedgerUsage(trial.Layout{Dir: r.trialDir(t)}.Usage())
		n += u.Total
	}
	return n
}

// runTrial runs one trial, replacing attempts lost to infrastructure
// failures with exponential back-off.
func (r *run) runTrial(ctx context.Context, t plan.Trial) Outcome {
	rt := r.configs[t.Config]
	dir := r.trialDir(t)
	logf := func(format string, args ...any) {}
	if !r.opts.Terminal {
		logf = func(format string, args ...any) { r.progress.logf(t.Dir+": "+format, args...) }
	}
	env := trial.Env{
		Bench: r.plan.Bench, Task: t.Task, Exec: r.opts.Exec,
		ContractRetries: r.exp.Retries.Contract,
		Timeouts:        trial.Timeouts(r.exp.Timeouts),
		Env:             rt.env, Secrets: rt.secrets, Logf: logf,
	}
	if env.ContractRetries == 0 {
		env.ContractRetries = -1 // explicit zero: no contract retries
	}
	o := Outcome{Trial: t}
	backoff := r.exp.Retries.Backoff
	for replaced := 0; ; replaced++ {
		s, err := r.attempt(ctx, t, rt, env)
		if err == nil {
			o = outcomeOf(t, s)
			o.Replacements = countReplacements(r.out, t.Key) // across resumed runs too
			break
		}
		if ctx.Err() != nil {
			o.State, o.Reason = StateRunning, "interrupted: "+ctx.Err().Error()
			return o
		}
		if trial.IsInfra(err) && replaced < r.exp.Retries.Infrastructure {
			attempt := countReplacements(r.out, t.Key) + 1
			rep := Replacement{Key: t.Key, Dir: t.Dir, Attempt: attempt, Reason: err.Error(), Time: time.Now().UTC()}
			if werr := records.Append(ReplacementsPath(r.out), rep); werr != nil {
				o.State, o.Reason = StateFailed, werr.Error()
				break
			}
			wait := backoff << replaced
			r.progress.logf("%s: %v; replacing the attempt in %s (replacement %d of at most %d)", t.Dir, err, wait, replaced+1, r.exp.Retries.Infrastructure)
			select {
			case <-time.After(wait):
				continue
			case <-ctx.Done():
				o.State, o.Reason = StateRunning, "interrupted"
				return o
			}
		}
		o.State, o.Reason, o.Replacements = StateFailed, err.Error(), replaced
		if trial.IsInfra(err) {
			o.Reason = fmt.Sprintf("infrastructure failure persisted after %d replacement(s): %v", replaced, err)
		}
		records.WriteJSON(filepath.Join(dir, FailureFile), Failure{Key: t.Key, Reason: o.Reason, Time: time.Now().UTC()})
		break
	}
	if o.State == StateDone || o.State == StateFailed && o.Status != "" {
		os.Remove(filepath.Join(dir, FailureFile))
	}
	r.mu.Lock()
	r.finished[t.Key] = o
	r.mu.Unlock()
	r.progress.finished(o)
	if err := r.writeOutputs(r.plan.Select(r.opts.Shard)); err != nil {
		r.progress.logf("warning: %v", err)
	}
	return o
}

// FailureFile marks a trial the runner gave up on (not a trial result).
const FailureFile = "runner-failure.json"

// Failure is the content of FailureFile.
type Failure struct {
	Key    string    `json:"key"`
	Reason string    `json:"reason"`
	Time   time.Time `json:"time"`
}

// Replacement is one line of replacements.jsonl.
type Replacement struct {
	Key     string    `json:"key"`
	Dir     string    `json:"dir"`
	Attempt int       `json:"attempt"`
	Reason  string    `json:"reason"`
	Time    time.Time `json:"time"`
}

// ReplacementsPath is the run directory's replacement log.
func ReplacementsPath(out string) string { return filepath.Join(out, "replacements.jsonl") }

// ReadReplacements reads the replacement log.
func ReadReplacements(out string) ([]Replacement, error) {
	var reps []Replacement
	_, err := records.ReadLines(ReplacementsPath(out), func(b []byte) error {
		var rep Replacement
		if err := jsonUnmarshal(b, &rep); err != nil {
			return err
		}
		reps = append(reps, rep)
		return nil
	})
	return reps, err
}

func countReplacements(out, key string) int {
	reps, _ := ReadReplacements(out)
	n := 0
	for _, r := range reps {
		if r.Key == key {
			n++
		}
	}
	return n
}

// LedgerUsage sums a trial's usage.jsonl.
func LedgerUsage(path string) (harness.Usage, error) {
	var u harness.Usage
	_, err := records.ReadLines(path, func(b []byte) error {
		var inv trial.Invocation
		if err := jsonUnmarshal(b, &inv); err != nil {
			return err
		}
		u = u.Add(inv.Usage)
		return nil
	})
	return u, err
}

var errLocked = errors.New("locked")
