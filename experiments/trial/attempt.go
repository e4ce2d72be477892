package trial

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/hoh-research/hoh/adapters/harness"
	"github.com/hoh-research/hoh/adapters/sandbox"
	"github.com/hoh-research/hoh/experiments/roles"
	"github.com/hoh-research/hoh/runrecord"
)

// callSpec is one role call: who runs, in which view, with which prompt,
// and how its final message is judged.
type callSpec struct {
	iteration int
	role      runrecord.Role
	access    harness.Access
	workDir   string
	// workSource is shown at workDir instead of its own content
	// (RoleView.WorkSource): the workspace, for a direct read-only view.
	workSource string
	prompt     string
	// session resumes a CLI session in stateDir; "" starts a new one, in
	// the attempt's own state directory when stateDir is "" too.
	session, stateDir string
	shown             []string // the files the prompt lists
	// parse validates the final message and returns its contract
	// violations; nil means no output contract (Vanilla).
	parse func(string) []string
}

// infra is an infrastructure failure of the call's iteration and role.
func (c *callSpec) infra(evidence, cause string) *InfraError {
	return &InfraError{Stage: fmt.Sprintf("iteration %d %s", c.iteration, c.role), Evidence: evidence, Cause: cause, Local: cause == CauseLocal}
}

// fail names the call in an error that is not the role's result.
func (c *callSpec) fail(r *runner, err error) error {
	return fmt.Errorf("trial %s iteration %d %s: %w", r.spec.Key, c.iteration, c.role, err)
}

// reply is what a call returns: the last attempt's result and every
// attempt's ledger line.
type reply struct {
	result  runrecord.Result
	invs    []runrecord.Invocation
	valid   bool
	errs    []string
	session string
	// tools: every tool call of every attempt, as the CLIs reported them
	// (retries continue the session, so a final reply may rest on
	// commands of an earlier attempt).
	tools []runrecord.ToolCall
	// mounts are the task's fixed paths of the last invocation
	// (benchmark.AgentView), to find the files its records cite.
	mounts []sandbox.Mount
}

// attempt is one invocation of a call, in four steps: prepare (its folder,
// state and view), invoke, classify (the relay's verdict outranks the
// CLI's), record (result.json, the ledger line, a replaced attempt's usage).
type attempt struct {
	call              *callSpec
	prompt            string
	session, stateDir string // as asked; stateDir "" is the attempt's own

	n       int
	layout  runrecord.AttemptLayout
	rel     string // layout.Dir relative to the trial
	state   string // the state directory used
	inv     harness.Invocation
	release func()          // ends the role's own environment
	mounts  []sandbox.Mount // the task's fixed paths in its view (reply.mounts)
	back    func() error    // takes the workspace back from the view
	started time.Time
	res     runrecord.Result
	// localFault: the machine failed the attempt (classify); cause and
	// stopsConfig: the class of an infrastructure failure.
	localFault  bool
	cause       string
	stopsConfig bool
	// unstarted: hoh ended the CLI at the first-request deadline.
	unstarted bool
}

// call runs one role call with contract retries. Infrastructure failures
// abort the stage.
func (r *runner) call(ctx context.Context, c callSpec) (reply, error) {
	var out reply
	a := &attempt{call: &c, prompt: c.prompt, session: c.session, stateDir: c.stateDir}
	for retry := 0; ; retry++ {
		if err := r.prepare(ctx, a); err != nil {
			return out, err
		}
		if err := r.invoke(ctx, a); err != nil {
			return out, err
		}
		r.classify(ctx, a)
		if err := r.record(a, &out); err != nil {
			return out, err
		}
		if a.res.Outcome != runrecord.OutcomeCompleted {
			return out, nil // agent failure or timeout: a result, not retried
		}
		if c.parse == nil { // no output contract (Vanilla): whatever it says is fine
			out.valid = true
			return out, nil
		}
		out.errs = c.parse(a.res.FinalMessage)
		if len(out.errs) == 0 {
			out.valid = true
			return out, nil
		}
		if retry >= r.env.ContractRetries {
			return out, nil
		}
		a = a.retry(out.errs)
	}
}

// retry is the next attempt after a reply that violated the contract: in
// the same session when the CLI has one (cheaper, and the work already done
// stays in context), else the full prompt again.
func (a *attempt) retry(errs []string) *attempt {
	next := &attempt{call: a.call, session: a.session, stateDir: a.stateDir}
	if a.res.SessionID != "" {
		next.session, next.stateDir = a.res.SessionID, a.state
		next.prompt = roles.WithRetry("", errs)
	} else {
		next.prompt = roles.WithRetry(a.call.prompt, errs)
	}
	return next
}

// prepare makes the attempt's folder and state directory and the view it
// runs in.
func (r *runner) prepare(ctx context.Context, a *attempt) error {
	defer r.clock.enter(runrecord.PhaseView)()
	c := a.call
	dir := r.stageDir(c.iteration, c.role)
	a.n = nextAttempt(dir)
	a.layout = runrecord.StageLayout{Dir: dir}.Attempt(a.n)
	a.rel = r.rel(a.layout.Dir)
	if err := runrecord.WriteFile(a.layout.Prompt(), []byte(a.prompt)); err != nil {
		return err
	}
	if a.state = a.stateDir; a.state == "" {
		a.state = a.layout.State()
	}
	if err := os.MkdirAll(a.state, 0o755); err != nil {
		return err
	}
	ex, roots, mounts, err := r.invocationExec(c, a.state, dir)
	if err != nil {
		return c.fail(r, err)
	}
	a.mounts = mounts
	a.release = func() {}
	if c.role != runrecord.RoleDeveloper && r.env.RoleEnvironment != nil {
		// The Planner works on A_{t-1}, QA on A_t: each in the
		// environment the Developer left with it.
		after := c.iteration
		if c.role == runrecord.RolePlanner {
			after--
		}
		if ex, a.release, err = r.env.RoleEnvironment(ctx, c.role, after); err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			return c.infra("the role's container: "+err.Error(), CauseEnvironment)
		}
	}
	viewSD, err := r.stateIn(ctx, a.state)
	if err != nil {
		a.release()
		return c.infra(err.Error(), CauseLocal)
	}
	viewWD, back, err := r.placeWork(c.workDir)
	if err != nil {
		a.release()
		return c.infra(err.Error(), CauseLocal)
	}
	a.back = back
	a.inv = harness.Invocation{
		Role: c.role, Access: c.access, Prompt: a.prompt, WorkDir: viewWD,
		StateDir: viewSD, LogDir: a.layout.Logs(), Session: a.session,
		WallTimeout: r.timeout(c.role), IdleTimeout: r.env.Timeouts.Idle,
		Env: r.env.ForRole(c.role).Env, Secrets: r.env.Secrets, Exec: ex, WritableRoots: roots,
	}
	return nil
}

// invoke runs the prepared attempt and takes the workspace and the CLI
// state back from its view.
func (r *runner) invoke(ctx context.Context, a *attempt) error {
	defer r.clock.enter(runrecord.PhaseView)()
	c := a.call
	if r.env.OnRole != nil {
		r.env.OnRole(c.iteration, c.role, a.n)
	} else {
		r.env.Logf("%s: iteration %d %s attempt %d", r.spec.Key, c.iteration, c.role, a.n)
	}
	a.started = time.Now().UTC()
	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	unstarted := func() bool { return false }
	inv := a.inv
	role := r.env.ForRole(c.role)
	if role.Relay != nil {
		role.Relay.SetAttempt(a.rel)
		unstarted = r.firstRequestDeadline(runCtx, role.Relay, cancel)
		// Start-up is not silence: the idle clock starts at the first
		// model request. Set on the command, never by wrapping inv.Exec:
		// a harness reads the executor's type (Codex leaves its own
		// sandbox to hoh's confinement, without which QA's commands fail).
		inv.IdleFrom = sandbox.IdleStart{C: role.Relay.Asked(), What: "the first model request"}
	}
	cli := r.clock.enter(runrecord.PhaseCLI)
	res, err := role.Harness.Run(runCtx, inv)
	cli()
	if a.unstarted = unstarted() && ctx.Err() == nil; a.unstarted {
		// hoh's own kill, not a cancelled run: the attempt's fault.
		err = nil
	}
	a.release()
	if backErr := a.back(); backErr != nil {
		return c.fail(r, fmt.Errorf("taking the workspace back from the container's view: %w", backErr))
	}
	if role.Relay != nil {
		role.Relay.Settle(5 * time.Second)
		role.Relay.SetAttempt("")
	}
	if err != nil {
		return c.fail(r, err)
	}
	a.res = res
	if err := r.stateOut(ctx, a.inv.StateDir, a.state); err != nil {
		return c.infra(err.Error(), CauseLocal)
	}
	return nil
}

// classify settles the attempt's outcome: a local fault, else the relay's
// view of its traffic, else the CLI's word (docs/no-model-turn.md: no
// model turn, no score).
func (r *runner) classify(ctx context.Context, a *attempt) {
	defer r.clock.enter(runrecord.PhaseClassify)()
	if ctx.Err() == nil {
		if why := invocationFault(a.res.Evidence, a.inv.LogDir, a.state, a.layout.Dir); why != "" {
			a.res.Outcome, a.res.Evidence = runrecord.OutcomeInfraFailure, "local fault: "+why
			a.localFault, a.cause = true, CauseLocal
			return
		}
		if a.unstarted {
			r.notStarted(a)
			return
		}
		// In a team, a role whose agent talks to no provider has no verdict.
		if r.env.ServedLog != "" && (r.env.Team == nil || r.env.ForRole(a.call.role).Relay != nil) {
			a.cause, a.stopsConfig = r.relayVerdict(&a.res, a.rel, a.started)
		}
	}
	if a.res.Outcome == runrecord.OutcomeInfraFailure && a.cause == "" {
		a.cause = causeFromWords(a.res.Evidence)
	}
}

// record keeps the attempt: its result.json, its logs and state scrubbed
// of secrets, its ledger line in out; an infrastructure failure's usage
// goes to usage-replaced.jsonl and its error is returned.
func (r *runner) record(a *attempt, out *reply) error {
	defer r.clock.enter(runrecord.PhaseRecord)()
	if a.localFault {
		// Best effort on a failing disk: the attempt is replaced either way.
		_ = runrecord.WriteJSON(a.layout.Result(), a.res)
		for _, d := range []string{a.layout.Dir, a.state} {
			_ = harness.ScrubSecrets(d, r.env.Secrets)
		}
		r.recordReplaced(a.replacedLine())
		return a.call.infra(a.res.Evidence, CauseLocal)
	}
	if err := runrecord.WriteJSON(a.layout.Result(), a.res); err != nil {
		return err
	}
	// Whatever the CLI wrote (logs, its own state), no key stays on disk.
	for _, d := range []string{a.layout.Dir, a.state} {
		if err := harness.ScrubSecrets(d, r.env.Secrets); err != nil {
			return err
		}
	}
	out.invs = append(out.invs, a.ledgerLine())
	out.result, out.mounts = a.res, a.mounts
	out.tools = append(out.tools, a.res.Tools...)
	if a.res.SessionID != "" {
		out.session = a.res.SessionID
	}
	if a.res.Outcome == runrecord.OutcomeInfraFailure {
		r.recordReplaced(a.replacedLine())
		ie := a.call.infra(a.res.Evidence, a.cause)
		ie.StopsConfig = a.stopsConfig
		return ie
	}
	return nil
}

// ledgerLine is the attempt's runrecord.Invocation (its usage.jsonl line).
func (a *attempt) ledgerLine() runrecord.Invocation {
	return runrecord.Invocation{Iteration: a.call.iteration, Role: a.call.role, Attempt: a.n,
		Outcome: a.res.Outcome, Evidence: a.res.Evidence, Usage: a.res.Usage, Duration: a.res.Duration,
		Session: a.res.SessionID, Dir: a.rel}
}

// replacedLine is the attempt's usage-replaced.jsonl line: its ledger line
// without the session, which a replaced attempt's line never names.
func (a *attempt) replacedLine() runrecord.Invocation {
	inv := a.ledgerLine()
	inv.Session = ""
	return inv
}

// nextAttempt is the number of the stage's next attempt folder.
func nextAttempt(dir string) int {
	n := 1
	for {
		if _, err := os.Stat(runrecord.StageLayout{Dir: dir}.Attempt(n).Dir); os.IsNotExist(err) {
			return n
		}
		n++
	}
}

// timeout is the role's wall-clock timeout (Env.Timeouts, else a default).
func (r *runner) timeout(role runrecord.Role) time.Duration {
	d := map[runrecord.Role]time.Duration{runrecord.RolePlanner: r.env.Timeouts.Planner,
		runrecord.RoleDeveloper: r.env.Timeouts.Developer, runrecord.RoleQA: r.env.Timeouts.QA}[role]
	if d == 0 {
		d = map[runrecord.Role]time.Duration{runrecord.RolePlanner: 30 * time.Minute,
			runrecord.RoleDeveloper: 2 * time.Hour, runrecord.RoleQA: time.Hour}[role]
	}
	return d
}
