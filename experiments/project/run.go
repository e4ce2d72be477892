package project

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/hoh-research/hoh/adapters/benchmark"
	"github.com/hoh-research/hoh/adapters/harness"
	"github.com/hoh-research/hoh/adapters/sandbox"
	"github.com/hoh-research/hoh/experiments/history"
	"github.com/hoh-research/hoh/experiments/provider"
	"github.com/hoh-research/hoh/experiments/served"
	"github.com/hoh-research/hoh/experiments/trial"
	"github.com/hoh-research/hoh/runrecord"
)

// RunLimits are the stop conditions of one `hoh project run`. Zero values
// mean no limit, except Loops.
type RunLimits struct {
	// Loops is the loop count to reach (total, not additional): a project
	// at loop 40 run with Loops 70 runs loops 41..70.
	Loops int `json:"loops"`
	// Tokens stops before a loop once the project's cumulative tokens
	// (replaced attempts included) reach it.
	Tokens int64 `json:"tokens,omitempty"`
	// Deadline stops before a loop once it has passed.
	Deadline time.Time `json:"deadline,omitzero"`
}

// RunOptions adjust a run.
type RunOptions struct {
	Limits RunLimits
	// Force accepts a changed harness or model (recorded in runs.jsonl).
	Force bool
	// Agents builds the project's CLI and provider; nil: provider.Open
	// (tests: provider.Double for an in-process harness). Exec runs the
	// CLIs (tests).
	Agents provider.Opener
	Exec   sandbox.Executor
	// Env and Secrets are given to every invocation in addition to the
	// provider key (tests).
	Env, Secrets []string
	Out          io.Writer
	// AfterLoop is called when loop t and its derived files are written
	// (tests use it to stop a run at a chosen point).
	AfterLoop func(t int)
}

// Stop reasons.
const (
	StopLoops     = "loop count reached"
	StopTokens    = "token budget reached"
	StopDeadline  = "deadline passed"
	StopFile      = "stop file found"
	StopDone      = "no open issues and QA passed in two loops in a row"
	StopInterrupt = "interrupted"
)

// Result of a run.
type Result struct {
	Loops  int    // loops completed in the project
	Ran    int    // loops completed by this run
	Reason string // why the run stopped
}

// Run runs (or resumes) the project's loops until a stop condition holds.
// A loop interrupted at any point (Ctrl-C, SIGKILL, reboot) is resumed at
// its next unfinished stage; a new loop starts only if no stop condition
// holds. Only one run per project at a time (a lock held for the process's
// life; the kernel releases it when the process dies).
func Run(ctx context.Context, project string, o RunOptions) (*Result, error) {
	project, err := filepath.Abs(project)
	if err != nil {
		return nil, err
	}
	l := runrecord.ProjectLayout{Project: project}
	c, err := LoadConfig(project)
	if err != nil {
		return nil, err
	}
	if o.Out == nil {
		o.Out = io.Discard
	}
	unlock, err := lock(l)
	if err != nil {
		return nil, err
	}
	defer unlock()
	specText, err := os.ReadFile(c.resolve(project, c.Spec))
	if err != nil {
		return nil, fmt.Errorf("specification: %w", err)
	}
	w, err := buildHarness(l, c, o)
	if err != nil {
		return nil, err
	}
	defer w.close()
	if err := checkIdentity(l, w.id, o.Force); err != nil {
		return nil, err
	}
	limits := o.Limits
	if err := appendEvent(l, Event{Kind: "start", Options: &limits}); err != nil {
		return nil, err
	}
	// A kill between a stage commit and the derived files: repair first.
	if err := writeDerived(l, c); err != nil {
		return nil, err
	}
	r := &projectRun{project: project, l: l, c: c, o: o, limits: limits, h: w.h, env: w.env, secrets: w.secrets,
		relay: w.relay, served: w.served, team: w.team, bench: &checks{list: c.Checks, secrets: w.secrets},
		task: benchmark.Task{Benchmark: "project", ID: c.Name, Spec: string(specText)},
		res:  &Result{}}
	return r.loops(ctx)
}

// projectRun is one Run's state between its loops.
type projectRun struct {
	project      string
	l            runrecord.ProjectLayout
	c            *Config
	o            RunOptions
	limits       RunLimits
	h            harness.Harness
	env, secrets []string
	// relay is hoh's relay to the provider (nil for an agent without an
	// endpoint, provider.Offline): its log gives every loop the
	// no-model-turn verdict.
	relay *served.Relay
	// served is the relays' one log; team each role's agent in a role
	// team (nil: h for every role).
	served   string
	team     map[runrecord.Role]trial.RoleAgent
	bench    *checks
	task     benchmark.Task
	res      *Result
	replaced int // infrastructure replacements in a row
}

// loops runs loop after loop until a stop condition holds or one fails.
func (r *projectRun) loops(ctx context.Context) (*Result, error) {
	for {
		st, err := stages(r.l)
		if err != nil {
			return nil, err
		}
		done := completedLoops(st)
		r.res.Loops = done
		t := done + 1
		if ctx.Err() != nil {
			return r.stop(StopInterrupt, done)
		}
		// A loop already under way is always finished; a new one starts
		// only within the limits.
		if find(st, t, runrecord.RolePlanner) == nil && find(st, t, runrecord.RoleDeveloper) == nil {
			if reason, err := stopBefore(r.l, r.limits, st, done); err != nil || reason != "" {
				if err != nil {
					return nil, err
				}
				return r.stop(reason, done)
			}
		}
		if err := runrecord.WriteJSON(r.l.TrialFiles().Spec(), trialSpec(r.c, t)); err != nil {
			return nil, err
		}
		fmt.Fprintf(r.o.Out, "loop %d of %d: %s\n", t, r.limits.Loops, progressText(r.l, r.limits, st))
		if _, err := trial.Run(ctx, r.l.Trial(), trialSpec(r.c, t), r.trialEnv(t, st)); err != nil {
			retry, res, err := r.failed(ctx, t, done, err)
			if retry {
				continue
			}
			return res, err
		}
		r.replaced = 0
		if err := r.finish(t); err != nil {
			return nil, err
		}
	}
}

// stop records why the run stops before loop t+1.
func (r *projectRun) stop(reason string, t int) (*Result, error) {
	r.res.Reason = reason
	if err := appendEvent(r.l, Event{Kind: "stop", Loop: t, Reason: reason}); err != nil {
		return nil, err
	}
	return r.res, nil
}

// trialEnv is loop t's trial: the project's checks, its workspace and
// history, and the loop's budget and issue sections (st: the stages
// before it).
func (r *projectRun) trialEnv(t int, st []runrecord.StageRecord) trial.Env {
	l, c, o, limits := r.l, r.c, r.o, r.limits
	pol := trial.Policy{
		OnRole: func(_ int, role runrecord.Role, attempt int) {
			if o.Out == io.Discard {
				return // nobody watches: no issue table to rebuild per role
			}
			again := ""
			if attempt > 1 {
				again = fmt.Sprintf(" (attempt %d)", attempt)
			}
			fmt.Fprintf(o.Out, "loop %d %s%s: %s\n", t, role, again, progressText(l, limits, nil))
		},
		ContractRetries: c.contractRetries(), Timeouts: trial.Timeouts(c.Timeouts),
		// The state directory (issue table, transcripts, the provider's
		// log, hoh's own state) is in no role's view beyond its contract.
		RunDir: l.State(),
	}
	route := trial.Route{Env: r.env, Secrets: r.secrets, ServedLog: r.served, Relay: r.relay, Team: r.team}
	mode := trial.ProjectMode{Workspace: r.project, GitDir: l.GitDir(), Exclude: exclude, Loop: &trial.LoopContext{
		PlannerFiles: []string{l.IssuesMD()},
		Budget:       func(int) string { return budgetText(l, limits, st, t) },
		PlannerIssues: func(int) (string, error) {
			issues, err := ReadIssues(r.project)
			if err != nil {
				return "", err
			}
			return PlannerSection(issues, c.plannerIssues(), l.IssuesMD()), nil
		},
		QAIssues: func(int) (string, error) {
			issues, err := ReadIssues(r.project)
			if err != nil {
				return "", err
			}
			return QASection(issues, c.plannerIssues()), nil
		},
	}}
	return trial.NewEnv(pol, trial.Place{Bench: r.bench, Task: r.task, Exec: o.Exec}, route, r.h, trial.Mode{Project: &mode})
}

// failed handles loop t's error: an infrastructure failure within the
// retries is replaced after a backoff (retry), anything else ends the run.
func (r *projectRun) failed(ctx context.Context, t, done int, err error) (retry bool, res *Result, _ error) {
	if ctx.Err() != nil {
		res, err := r.stop(StopInterrupt, done)
		return false, res, err
	}
	if trial.IsInfra(err) && r.replaced < r.c.infraRetries() {
		wait := r.c.infraBackoff() << r.replaced
		r.replaced++
		if err := appendEvent(r.l, Event{Kind: "replaced", Loop: t, Reason: err.Error()}); err != nil {
			return false, nil, err
		}
		fmt.Fprintf(r.o.Out, "loop %d: %v; replacing the attempt in %s\n", t, err, wait)
		select {
		case <-time.After(wait):
			return true, nil, nil
		case <-ctx.Done():
			res, err := r.stop(StopInterrupt, done)
			return false, res, err
		}
	}
	appendEvent(r.l, Event{Kind: "error", Loop: t, Reason: err.Error()})
	return false, r.res, fmt.Errorf("loop %d: %w (rerun `hoh project run` to resume at this stage)", t, err)
}

// finish ends loop t (derived files, the loop's record) and counts it once
// its stages are complete.
func (r *projectRun) finish(t int) error {
	if err := endLoop(r.l, r.c, t); err != nil {
		return err
	}
	st, err := stages(r.l)
	if err != nil {
		return err
	}
	if completedLoops(st) >= t {
		r.res.Ran++
		r.res.Loops = t
		if r.o.AfterLoop != nil {
			r.o.AfterLoop(t)
		}
	}
	return nil
}

// progressText is the state a watcher wants between roles: issues open
// and closed, tokens so far, and the budget left (st nil: read afresh).
func progressText(l runrecord.ProjectLayout, lim RunLimits, st []runrecord.StageRecord) string {
	if st == nil {
		var err error
		if st, err = stages(l); err != nil {
			return ""
		}
	}
	var parts []string
	if issues, err := ReadIssues(l.Project); err == nil {
		open, closed := 0, 0
		for _, is := range issues {
			if is.State == runrecord.IssueClosed {
				closed++
			} else {
				open++
			}
		}
		parts = append(parts, fmt.Sprintf("issues %d open, %d closed", open, closed))
	}
	if spent, err := spentTokens(l, st); err == nil {
		tok := fmt.Sprintf("tokens %d", spent)
		if lim.Tokens > 0 {
			tok += fmt.Sprintf(" of %d", lim.Tokens)
		}
		parts = append(parts, tok)
	}
	if !lim.Deadline.IsZero() {
		parts = append(parts, "time left "+max(time.Until(lim.Deadline), 0).Round(time.Second).String())
	}
	return strings.Join(parts, "; ")
}

// endLoop writes the derived files, tags the loop's last commit and drops
// the QA Tester's copy of the candidate (identical to the tagged commit).
func endLoop(l runrecord.ProjectLayout, c *Config, t int) error {
	if err := writeDerived(l, c); err != nil {
		return err
	}
	st, err := stages(l)
	if err != nil {
		return err
	}
	qa := find(st, t, runrecord.RoleQA)
	if qa == nil {
		return nil
	}
	repo, err := history.Open(l.GitDir(), l.Project)
	if err != nil {
		return err
	}
	if err := repo.Tag(fmt.Sprintf("loop-%d", t), qa.Commit); err != nil {
		return err
	}
	return os.RemoveAll(filepath.Join(runrecord.TrialLayout{Dir: l.Trial()}.Stage(t, runrecord.RoleQA), "candidate"))
}

// stopBefore checks the stop conditions before loop done+1 starts.
func stopBefore(l runrecord.ProjectLayout, lim RunLimits, st []runrecord.StageRecord, done int) (string, error) {
	if _, err := os.Stat(l.StopFile()); err == nil {
		if err := os.Remove(l.StopFile()); err != nil {
			return "", err
		}
		return StopFile, nil
	}
	if done >= lim.Loops {
		return StopLoops, nil
	}
	if lim.Tokens > 0 {
		spent, err := spentTokens(l, st)
		if err != nil {
			return "", err
		}
		if spent >= lim.Tokens {
			return StopTokens, nil
		}
	}
	if !lim.Deadline.IsZero() && !time.Now().Before(lim.Deadline) {
		return StopDeadline, nil
	}
	if done >= 2 {
		issues, err := ReadIssues(l.Project)
		if err != nil {
			return "", err
		}
		dyn, err := runrecord.ReadDynamics(l.Dynamics())
		if err != nil {
			return "", err
		}
		unresolved := 0
		for _, is := range issues {
			if is.Unresolved() {
				unresolved++
			}
		}
		if n := len(dyn); unresolved == 0 && n >= 2 && dyn[n-1].QAStatus == "pass" && dyn[n-2].QAStatus == "pass" {
			return StopDone, nil
		}
	}
	return "", nil
}

// budgetText is what the prompts say is left: never a fixed total T.
func budgetText(l runrecord.ProjectLayout, lim RunLimits, st []runrecord.StageRecord, t int) string {
	parts := []string{fmt.Sprintf("this run may continue to loop %d (%d more after this one)", lim.Loops, max(lim.Loops-t, 0))}
	if lim.Tokens > 0 {
		spent, _ := spentTokens(l, st) // the prompt's note only; stopBefore checked the file
		parts = append(parts, fmt.Sprintf("%d tokens", max(lim.Tokens-spent, 0)))
	}
	if !lim.Deadline.IsZero() {
		parts = append(parts, "until "+lim.Deadline.UTC().Format(time.RFC3339))
	}
	return strings.Join(parts, "; ")
}

// checkIdentity refuses a changed harness or model unless forced; a forced
// change is recorded and becomes the new identity.
func checkIdentity(l runrecord.ProjectLayout, now Identity, force bool) error {
	old, err := readIdentity(l)
	if err != nil {
		return err
	}
	if old == nil {
		return runrecord.WriteJSON(l.Identity(), now)
	}
	d := old.diff(now)
	if len(d) == 0 {
		return nil
	}
	if !force {
		return fmt.Errorf("the project ran with a different harness-model configuration (%s); a changed configuration changes what the loops measure: pass --force to continue anyway (recorded in %s)",
			strings.Join(d, ", "), l.Runs())
	}
	if err := appendEvent(l, Event{Kind: "forced-change", Changes: d}); err != nil {
		return err
	}
	return runrecord.WriteJSON(l.Identity(), now)
}

// lock takes the project's run lock.
func lock(l runrecord.ProjectLayout) (func(), error) {
	if err := os.MkdirAll(l.State(), 0o755); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(l.Lock(), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		pid, _ := os.ReadFile(l.Lock())
		return nil, fmt.Errorf("another hoh project run holds %s (pid %s)", l.Lock(), strings.TrimSpace(string(pid)))
	}
	f.Truncate(0)
	fmt.Fprintf(f, "%d\n", os.Getpid())
	// Unlock before closing: a child forked by another goroutine holds a
	// copy of f until its exec, and with it the lock, so Close alone can
	// leave the project locked for a moment (seen under a CPU hog).
	return func() { syscall.Flock(int(f.Fd()), syscall.LOCK_UN); f.Close() }, nil
}

// wiring is the agent a project runs (provider.Agent) and its route to
// the provider: the environment and secrets it is given, hoh's relay (whose
// log gives every loop the no-model-turn verdict) and what to close. In a
// role team these are the Developer's, team each role's own, and secrets
// every role's.
type wiring struct {
	h            harness.Harness
	env, secrets []string
	relay        *served.Relay
	// served is the relays' one log ("" without a relay).
	served string
	team   map[runrecord.Role]trial.RoleAgent
	id     Identity
	close  func()
}

// buildHarness opens the project's agent and, in a role team, each role's
// own (each scripted provider logging to its own provider log), through
// the constructor the runner uses too; then routes them (routeRoles).
func buildHarness(l runrecord.ProjectLayout, c *Config, o RunOptions) (wiring, error) {
	open := o.Agents
	if open == nil {
		open = provider.Open
	}
	files := func(log string) provider.Files {
		return provider.Files{Resolve: func(p string) string { return c.resolve(l.Project, p) }, ProviderLog: log}
	}
	a, err := open(c.Harness, files(l.ProviderLog()))
	if err != nil {
		return wiring{}, err
	}
	agents := map[runrecord.Role]*provider.Agent{}
	closeAgents := func() {
		a.Close()
		for _, ra := range agents {
			ra.Close() // Close is idempotent: the entry's agent may be here too
		}
	}
	for _, role := range runrecord.Roles {
		agents[role] = a
		if c.Harness.Roles.Agent(role) == nil {
			continue
		}
		if agents[role], err = open(c.Harness.ForRole(role), files(l.RoleProviderLog(role))); err != nil {
			delete(agents, role)
			closeAgents()
			return wiring{}, fmt.Errorf("role %s: %w", role, err)
		}
	}
	w, err := routeRoles(l, agents, o)
	if err != nil {
		closeAgents()
		return wiring{}, err
	}
	closeRoutes := w.close
	w.close = func() { closeRoutes(); closeAgents() }
	w.id = identityOf(c, a.Harness.Version())
	if c.Harness.HasTeam() {
		w.id.Team = map[runrecord.Role]Identity{}
		for role, ra := range w.team {
			if c.Harness.Roles.Agent(role) != nil {
				m := ra.Member
				w.id.Team[role] = Identity{Harness: m.Harness, Model: m.Model, Provider: agents[role].Config.Provider.Name, API: m.API, Version: m.Version}
			}
		}
	} else {
		w.team = nil // one agent: trial.Env runs it for every role
	}
	return w, nil
}

// routeRoles routes the agents as the runner does (provider.RouteTeam:
// relays on loopback, the only way out of a role's network namespace, and
// placeholder keys; the keys live in the relays only), every relay logging
// to the project's one relay log under each request's attempt. The
// Developer's seat is the project's own.
func routeRoles(l runrecord.ProjectLayout, agents map[runrecord.Role]*provider.Agent, o RunOptions) (wiring, error) {
	team, err := provider.RouteTeam(agents, filepath.Join(l.State(), "relay.jsonl"), o.Env, o.Secrets)
	if err != nil {
		return wiring{}, err
	}
	w := wiring{team: map[runrecord.Role]trial.RoleAgent{}, secrets: team.Secrets, served: team.ServedLog, close: team.Close}
	for role, seat := range team.Seats {
		w.team[role] = trial.RoleAgent{Harness: seat.Harness, Env: seat.Route.Env, Relay: seat.Route.Relay, Member: seat.Member}
	}
	dev := team.Seats[runrecord.RoleDeveloper]
	w.h, w.env, w.relay = dev.Harness, dev.Route.Env, dev.Route.Relay
	return w, nil
}

// checks runs the project's configured runtime checks; a project has no
// evaluator, so Evaluate is never used (trial.ProjectMode). They are
// the user's commands run on the agent's code, in hoh's environment minus
// every variable holding one of secrets (the provider key): what the
// checks print is recorded and shown to QA.
type checks struct {
	list    []Check
	secrets []string
}

// env is hoh's environment without the variables that hold a secret.
func (c *checks) env() []string {
	var out []string
	for _, kv := range os.Environ() {
		_, v, _ := strings.Cut(kv, "=")
		if !slices.ContainsFunc(c.secrets, func(s string) bool { return s != "" && strings.Contains(v, s) }) {
			out = append(out, kv)
		}
	}
	return out
}

func (c *checks) Name() string { return "project" }
func (c *checks) Tasks(context.Context) ([]benchmark.Task, error) {
	return nil, errors.New("a project has no task list")
}
func (c *checks) InitialWorkspace(context.Context, benchmark.Task, string) error {
	return errors.New("a project's A_0 is committed by hoh project init")
}
func (c *checks) Evaluate(context.Context, benchmark.Task, string) (runrecord.Evaluation, error) {
	return runrecord.Evaluation{}, errors.New("a project has no evaluator")
}

const maxCheckOutput = 8 << 10

func (c *checks) Check(ctx context.Context, _ benchmark.Task, dir string) ([]runrecord.CheckResult, error) {
	out := []runrecord.CheckResult{}
	for _, ch := range c.list {
		timeout := ch.Timeout
		if timeout == 0 {
			timeout = 10 * time.Minute
		}
		cctx, cancel := context.WithTimeout(ctx, timeout)
		cmd := exec.CommandContext(cctx, "sh", "-c", ch.Command)
		cmd.Dir, cmd.Env = dir, c.env()
		b, err := cmd.CombinedOutput()
		cancel()
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		r := runrecord.CheckResult{Name: ch.Name, Command: ch.Command, Passed: err == nil}
		if len(b) > maxCheckOutput {
			b = append(b[:maxCheckOutput], "\n[output clipped]"...)
		}
		r.Output = string(b)
		var ee *exec.ExitError
		switch {
		case errors.As(err, &ee):
			r.ExitCode = ee.ExitCode()
		case err != nil:
			r.ExitCode, r.Unavailable = -1, true
			r.Output += err.Error()
		}
		out = append(out, r)
	}
	return out, nil
}
