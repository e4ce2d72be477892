package trial

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/hoh-research/hoh/adapters/benchmark"
	"github.com/hoh-research/hoh/adapters/harness"
	"github.com/hoh-research/hoh/adapters/sandbox"
	"github.com/hoh-research/hoh/experiments/conditions"
	"github.com/hoh-research/hoh/experiments/history"
	"github.com/hoh-research/hoh/experiments/roles"
	"github.com/hoh-research/hoh/experiments/served"
	"github.com/hoh-research/hoh/runrecord"
)

// FailurePolicy is what the loop does when a role fails after its contract
// retries; every checkpoint 1..T is still produced and evaluated, so every
// task stays in every arm (paper B.2: only infrastructure failures are
// replaced, an agent's own failure is part of the result).
const FailurePolicy = `planner fails: no new D_t; the Developer and QA Tester of t get the last valid D_s (plan_from: s), or none before the first valid one (plan_from: 0);
developer fails (or times out): whatever it wrote is A_t;
QA Tester fails: E_t says qa_status "unavailable" and why, and goes to the next Planner like any evidence;
a continuation pass whose previous pass left no session starts a new session with the task and p_cont (session_note).`

type state struct {
	stages []runrecord.StageRecord
}

func loadState(l runrecord.TrialLayout) (*state, error) {
	stages, err := runrecord.ReadStages(l.Stages())
	return &state{stages: stages}, err
}

func (s *state) find(t int, role string) *runrecord.StageRecord {
	for i := range s.stages {
		if s.stages[i].Iteration == t && s.stages[i].Role == role {
			return &s.stages[i]
		}
	}
	return nil
}

func (s *state) invocations() []runrecord.Invocation {
	var out []runrecord.Invocation
	for _, st := range s.stages {
		out = append(out, st.Invocations...)
	}
	return out
}

type runner struct {
	l    runrecord.TrialLayout
	spec runrecord.TrialSpec
	env  Env
	arm  conditions.Arm
	repo *history.Repo
	st   *state
	ws   string // the workspace (Env.Workspace or <dir>/workspace)
	// viewMounts are the task's fixed paths of the last invocation
	// (benchmark.AgentView), to find the files its records cite.
	viewMounts []sandbox.Mount
}

// executor is the executor of one role invocation. On the host it is
// confined to the role's contract (sandbox.Confined): the run directory and
// /tmp are hidden (a private empty /tmp is the role's scratch space), and
// only its working directory (writable for the Developer, read-only
// otherwise), its CLI state directory and the files its prompt lists are
// bound back. Another trial, withheld evidence, the history repository,
// evaluation outputs and hoh's private directory are not in the view.
// Containers get the view of their mounts (environment package).
func (r *runner) executor(access harness.Access, workDir, stateDir string, shown, writes []string) sandbox.Executor {
	root := r.env.RunDir
	if root == "" {
		root = r.l.Dir
	}
	leftovers := sandbox.Leftovers{Path: r.l.Processes()}
	return RoleExecutor(r.env.Exec, r.env.Harness, root, RoleView{Access: access, WorkDir: workDir, StateDir: stateDir, Shown: shown, Writes: writes,
		Endpoints: r.endpoints()}, func(pid int) { _ = leftovers.Record(pid) })
}

// endpoints are the addresses a host role reaches besides the harness's
// own model endpoint (RoleExecutor): the relay's, and Env.Endpoints.
func (r *runner) endpoints() []string {
	out := append([]string(nil), r.env.Endpoints...)
	if r.env.Relay != nil {
		out = append(out, r.env.Relay.BaseURL())
	}
	return out
}

// ViewScratch is the folder of a stage that a benchmark with fixed task
// paths shows at the task's top level (GameCraft's /workspace): what the
// agent leaves there, screenshots included, stays with the stage's records.
const ViewScratch = "view-workspace"

// invocationExec is the executor of one invocation: r.executor(), plus the
// task's fixed paths mounted in the invocation's namespace when the
// benchmark addresses such paths (benchmark.AgentView), their sources added
// to the view; roots are the writable ones, for a CLI's own sandbox.
func (r *runner) invocationExec(role harness.Role, access harness.Access, workDir, stateDir, stageDir string, shown []string) (ex sandbox.Executor, roots []string, err error) {
	av, ok := r.env.Bench.(benchmark.AgentView)
	if !ok {
		return r.executor(access, workDir, stateDir, shown, nil), nil, nil
	}
	mounts, err := av.AgentMounts(r.env.Task, workDir, filepath.Join(stageDir, ViewScratch), role == harness.RoleDeveloper)
	if err != nil {
		return nil, nil, err
	}
	r.viewMounts = mounts
	var writes []string
	shown = append([]string(nil), shown...)
	for _, m := range mounts {
		if m.Writable {
			roots = append(roots, m.Target)
		}
		switch {
		case m.Source == "":
		case m.Writable:
			writes = append(writes, m.Source)
		default:
			shown = append(shown, m.Source)
		}
	}
	return sandbox.Remapped{Inner: r.executor(access, workDir, stateDir, shown, writes), Mounts: mounts}, roots, nil
}

func (r *runner) digest() (string, error) { return history.Digest(r.ws, r.env.Exclude...) }

func (r *runner) copyWorkspace(dst string) error {
	return history.CopyTree(r.ws, dst, r.env.Exclude...)
}

// slots fills the iteration context of a prompt: the iteration (never a
// total T, so a run can be extended), or in project mode the loop number and
// the budget left.
// roleEnvironment is what the benchmark says this machine lets the
// Developer and the QA Tester observe ("" when it says nothing).
func (r *runner) roleEnvironment(ctx context.Context) string {
	if re, ok := r.env.Bench.(benchmark.RoleEnvironment); ok {
		return re.RoleEnvironment(ctx, r.env.Task)
	}
	return ""
}

func (r *runner) slots(t int, s roles.Slots) roles.Slots {
	s.Iteration = t
	if r.env.Loop != nil {
		s.OpenEnded = true
		if r.env.Loop.Budget != nil {
			s.Budget = r.env.Loop.Budget(t)
		}
	}
	return s
}

// restore brings the workspace back to the last committed stage, dropping
// whatever an interrupted stage left behind.
func (r *runner) restore() error {
	ref := "cp-0"
	if n := len(r.st.stages); n > 0 {
		ref = r.st.stages[n-1].Commit
		// A kill between a stage's line and the ledger rewrite leaves the
		// ledger one stage behind: it is derived from the stages again.
		if err := r.writeLedger(); err != nil {
			return err
		}
	}
	return r.repo.Restore(ref)
}

// scrubArtifact keeps every secret hoh knows (the provider key, the CLIs'
// placeholder for it) out of what a stage keeps: the workspace, before it
// is committed to the history and becomes a checkpoint, and the stage's
// folder (QA's candidate, a task view's scratch). A hit is a recorded
// violation; the secret is redacted from every copy kept.
func (r *runner) scrubArtifact(rec *runrecord.StageRecord) error {
	if len(r.env.Secrets) == 0 {
		return nil
	}
	for _, d := range []struct{ root, what string }{{r.ws, "the artifact"}, {r.l.Stage(rec.Iteration, rec.Role), "the stage's files"}} {
		found, err := harness.ScrubFound(d.root, r.env.Secrets)
		if err != nil {
			return fmt.Errorf("scrub %s: %w", d.what, err)
		}
		if len(found) > 0 {
			if len(found) > 5 {
				found = append(found[:5], fmt.Sprintf("and %d more", len(found)-5))
			}
			v := fmt.Sprintf("iteration %d: the %s left a secret hoh knows (the provider key or its placeholder) in %s (%s); it was redacted from what is kept",
				rec.Iteration, roleName(rec.Role), d.what, strings.Join(found, ", "))
			r.env.Logf("%s: protocol violation: %s", r.spec.Key, v)
			rec.Violations = append(rec.Violations, v)
			if d.root == r.ws {
				rec.Digest = "" // the redaction changed the workspace
			}
		}
	}
	return nil
}

func roleName(role string) string {
	switch role {
	case string(harness.RolePlanner):
		return "Planner"
	case string(harness.RoleDeveloper):
		return "Developer"
	case string(harness.RoleQA):
		return "QA Tester"
	}
	return role
}

func (r *runner) commitStage(rec runrecord.StageRecord) error {
	msg := fmt.Sprintf("iter %d: %s", rec.Iteration, rec.Role)
	if r.env.Loop != nil {
		msg = fmt.Sprintf("hoh loop %d: %s", rec.Iteration, rec.Role)
	}
	if rec.RoleFailure != "" {
		msg += " (failed: " + rec.RoleFailure + ")"
	}
	refused, err := refuseOversized(r.ws, r.env.Exclude, r.env.MaxFileBytes)
	if err != nil {
		return err
	}
	for _, v := range refused {
		v = fmt.Sprintf("iteration %d: the %s left %s; it was removed and is not part of the artifact", rec.Iteration, rec.Role, v)
		r.env.Logf("%s: protocol violation: %s", r.spec.Key, v)
		rec.Violations = append(rec.Violations, v)
		rec.Digest = "" // the removal changed the workspace
	}
	if err := r.scrubArtifact(&rec); err != nil {
		return err
	}
	c, err := r.repo.Commit(msg)
	if err != nil {
		return err
	}
	rec.Commit = c
	if rec.Digest == "" {
		if rec.Digest, err = r.digest(); err != nil {
			return err
		}
	}
	if rec.Role == "developer" {
		if err := r.repo.Tag(fmt.Sprintf("cp-%d", rec.Iteration), c); err != nil {
			return err
		}
	}
	rec.Finished = time.Now().UTC()
	if err := runrecord.AppendStage(r.l.Stages(), rec); err != nil {
		return err
	}
	r.st.stages = append(r.st.stages, rec)
	if err := r.writeLedger(); err != nil {
		return err
	}
	// The stage's CLI state was extracted when each invocation ended and
	// is never resumed (Vanilla Continuation's lives in session-state).
	for _, inv := range rec.Invocations {
		if err := os.RemoveAll(filepath.Join(r.l.Dir, inv.Dir, "state")); err != nil {
			return err
		}
	}
	return nil
}

// recordReplaced keeps the tokens of an invocation lost to an
// infrastructure failure in usage-replaced.jsonl: spent, though no result
// counts them (Eq. 11 uses usage.jsonl only). Through the relay its usage
// is what the provider served the attempt (a failing CLI may report less),
// else what its CLI reported.
func (r *runner) recordReplaced(inv runrecord.Invocation) {
	if r.env.Relay != nil {
		if lines, _, err := served.Read(r.env.Relay.Log()); err == nil {
			inv.Usage = served.ByAttempt(lines)[inv.Dir]
		}
	}
	if r.env.Price != nil {
		inv.CostUSD = runrecord.FormatUSD(r.env.Price.Cost(inv.Usage))
	}
	_ = runrecord.Append(r.l.ReplacedUsage(), inv) // best effort: the disk may be the fault
}

// writeLedger rewrites usage.jsonl from the committed stages, so the ledger
// never counts an interrupted stage twice.
func (r *runner) writeLedger() error {
	invs := r.st.invocations()
	if r.env.Price != nil {
		invs = slices.Clone(invs)
		for i := range invs {
			invs[i].CostUSD = runrecord.FormatUSD(r.env.Price.Cost(invs[i].Usage))
		}
	}
	return runrecord.WriteLedger(r.l.Usage(), invs)
}

func (r *runner) loop(ctx context.Context) error {
	c := r.arm.Condition
	for t := 1; t <= r.arm.Steps; t++ {
		if c.Planning != conditions.NoPlan && r.st.find(t, "planner") == nil {
			if err := r.planStage(ctx, t); err != nil {
				return err
			}
		}
		if r.st.find(t, "developer") == nil {
			if err := r.developStage(ctx, t); err != nil {
				return err
			}
		}
		if c.QA && r.st.find(t, "qa") == nil {
			if err := r.qaStage(ctx, t); err != nil {
				return err
			}
		}
	}
	return nil
}

func (r *runner) stageDir(t int, role string) string { return r.l.Stage(t, role) }

func (r *runner) stage(t int, role string) runrecord.StageLayout { return r.l.StageFiles(t, role) }

func (r *runner) rel(p string) string {
	rel, err := filepath.Rel(r.l.Dir, p)
	if err != nil {
		return p
	}
	return rel
}

func (r *runner) writeSpec(dir string) (string, error) {
	p := runrecord.StageLayout{Dir: dir}.Specification()
	return p, runrecord.WriteFile(p, []byte(r.env.Task.Spec))
}

// call runs one role invocation with contract retries. parse validates the
// final message; it returns the validation errors. Infrastructure failures
// abort the stage.
type reply struct {
	result  harness.Result
	invs    []runrecord.Invocation
	valid   bool
	errs    []string
	session string
	// tools: every tool call of every attempt, as the CLIs reported them
	// (retries continue the session, so a final reply may rest on
	// commands of an earlier attempt).
	tools []harness.ToolCall
}

func (r *runner) call(ctx context.Context, t int, role harness.Role, access harness.Access, workDir, prompt string,
	timeout time.Duration, session, stateDir string, shown []string, parse func(string) []string) (reply, error) {
	dir := r.stageDir(t, string(role))
	var out reply
	attemptPrompt := prompt
	for retry := 0; ; retry++ {
		attempt := nextAttempt(dir)
		al := runrecord.StageLayout{Dir: dir}.Attempt(attempt)
		adir := al.Dir
		if err := runrecord.WriteFile(al.Prompt(), []byte(attemptPrompt)); err != nil {
			return out, err
		}
		sd := stateDir
		if sd == "" {
			sd = al.State()
		}
		if err := os.MkdirAll(sd, 0o755); err != nil {
			return out, err
		}
		ex, roots, err := r.invocationExec(role, access, workDir, sd, dir, shown)
		if err != nil {
			return out, fmt.Errorf("trial %s iteration %d %s: %w", r.spec.Key, t, role, err)
		}
		release := func() {}
		if role != harness.RoleDeveloper && r.env.RoleEnvironment != nil {
			// The Planner works on A_{t-1}, QA on A_t: each in the
			// environment the Developer left with it.
			after := t
			if role == harness.RolePlanner {
				after = t - 1
			}
			if ex, release, err = r.env.RoleEnvironment(ctx, after); err != nil {
				if ctx.Err() != nil {
					return out, ctx.Err()
				}
				return out, stageInfra(t, role, "the role's container: "+err.Error(), CauseEnvironment)
			}
		}
		viewSD, err := r.stateIn(ctx, sd)
		if err != nil {
			release()
			return out, stageInfra(t, role, err.Error(), CauseLocal)
		}
		viewWD, back, err := r.placeWork(workDir)
		if err != nil {
			release()
			return out, stageInfra(t, role, err.Error(), CauseLocal)
		}
		inv := harness.Invocation{
			Role: role, Access: access, Prompt: attemptPrompt, WorkDir: viewWD,
			StateDir: viewSD, LogDir: al.Logs(), Session: session,
			WallTimeout: timeout, IdleTimeout: r.env.Timeouts.Idle,
			Env: r.env.Env, Secrets: r.env.Secrets, Exec: ex, WritableRoots: roots,
		}
		if r.env.OnRole != nil {
			r.env.OnRole(t, role, attempt)
		} else {
			r.env.Logf("%s: iteration %d %s attempt %d", r.spec.Key, t, role, attempt)
		}
		started := time.Now().UTC()
		if r.env.Relay != nil {
			r.env.Relay.SetAttempt(r.rel(adir))
		}
		res, err := r.env.Harness.Run(ctx, inv)
		release()
		if backErr := back(); backErr != nil {
			return out, fmt.Errorf("trial %s iteration %d %s: taking the workspace back from the container's view: %w", r.spec.Key, t, role, backErr)
		}
		if r.env.Relay != nil {
			r.env.Relay.Settle(5 * time.Second)
			r.env.Relay.SetAttempt("")
		}
		if err != nil {
			return out, fmt.Errorf("trial %s iteration %d %s: %w", r.spec.Key, t, role, err)
		}
		if err := r.stateOut(ctx, viewSD, sd); err != nil {
			return out, stageInfra(t, role, err.Error(), CauseLocal)
		}
		if ctx.Err() == nil {
			if why := invocationFault(res.Evidence, inv.LogDir, sd, adir); why != "" {
				res.Outcome, res.Evidence = harness.OutcomeInfraFailure, "local fault: "+why
				// Best effort on a failing disk: the attempt is replaced either way.
				_ = runrecord.WriteJSON(al.Result(), res)
				for _, d := range []string{adir, sd} {
					_ = harness.ScrubSecrets(d, r.env.Secrets)
				}
				r.recordReplaced(runrecord.Invocation{Iteration: t, Role: string(role), Attempt: attempt, Outcome: res.Outcome,
					Evidence: res.Evidence, Usage: res.Usage, Duration: res.Duration, Dir: r.rel(adir)})
				return out, stageInfra(t, role, res.Evidence, CauseLocal)
			}
		}
		// No model turn, no score: the relay's view of the invocation's
		// traffic outranks the CLI's word (docs/no-model-turn.md).
		cause, stopsConfig := "", false
		if r.env.ServedLog != "" && ctx.Err() == nil {
			cause, stopsConfig = r.relayVerdict(&res, r.rel(adir), started)
		}
		if res.Outcome == harness.OutcomeInfraFailure && cause == "" {
			cause = causeFromWords(res.Evidence)
		}
		if err := runrecord.WriteJSON(al.Result(), res); err != nil {
			return out, err
		}
		// Whatever the CLI wrote (logs, its own state), no key stays on disk.
		for _, d := range []string{adir, sd} {
			if err := harness.ScrubSecrets(d, r.env.Secrets); err != nil {
				return out, err
			}
		}
		out.invs = append(out.invs, runrecord.Invocation{Iteration: t, Role: string(role), Attempt: attempt,
			Outcome: res.Outcome, Evidence: res.Evidence, Usage: res.Usage, Duration: res.Duration,
			Session: res.SessionID, Dir: r.rel(adir)})
		out.result = res
		out.tools = append(out.tools, res.Tools...)
		if res.SessionID != "" {
			out.session = res.SessionID
		}
		if res.Outcome == harness.OutcomeInfraFailure {
			r.recordReplaced(runrecord.Invocation{Iteration: t, Role: string(role), Attempt: attempt, Outcome: res.Outcome,
				Evidence: res.Evidence, Usage: res.Usage, Duration: res.Duration, Dir: r.rel(adir)})
			ie := stageInfra(t, role, res.Evidence, cause)
			ie.StopsConfig = stopsConfig
			return out, ie
		}
		if res.Outcome != harness.OutcomeCompleted {
			return out, nil // agent failure or timeout: a result, not retried
		}
		if parse == nil { // no output contract (Vanilla): whatever it says is fine
			out.valid = true
			return out, nil
		}
		out.errs = parse(res.FinalMessage)
		if len(out.errs) == 0 {
			out.valid = true
			return out, nil
		}
		if retry >= r.env.ContractRetries {
			return out, nil
		}
		// Retry in the same session when the CLI has one: cheaper, and the
		// work already done stays in context. Otherwise re-ask in full.
		if res.SessionID != "" {
			session, stateDir = res.SessionID, sd
			attemptPrompt = roles.WithRetry("", out.errs)
		} else {
			attemptPrompt = roles.WithRetry(prompt, out.errs)
		}
	}
}

func fileExists(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.Mode().IsRegular()
}

// materialPaths are the files a prompt lists: what the role's view shows
// besides its working directory.
func materialPaths(mats []roles.Material) []string {
	var out []string
	for _, m := range mats {
		if m.Path != "" {
			out = append(out, m.Path)
		}
	}
	return out
}

func nextAttempt(dir string) int {
	n := 1
	for {
		if _, err := os.Stat(runrecord.StageLayout{Dir: dir}.Attempt(n).Dir); os.IsNotExist(err) {
			return n
		}
		n++
	}
}

func (r *runner) timeout(role harness.Role) time.Duration {
	d := map[harness.Role]time.Duration{harness.RolePlanner: r.env.Timeouts.Planner,
		harness.RoleDeveloper: r.env.Timeouts.Developer, harness.RoleQA: r.env.Timeouts.QA}[role]
	if d == 0 {
		d = map[harness.Role]time.Duration{harness.RolePlanner: 30 * time.Minute,
			harness.RoleDeveloper: 2 * time.Hour, harness.RoleQA: time.Hour}[role]
	}
	return d
}

// checkUnchanged enforces the single-writer boundary after a Planner or QA
// stage: a changed workspace is a protocol violation and is undone.
func (r *runner) checkUnchanged(before, role string, t int) ([]string, error) {
	after, err := r.digest()
	if err != nil {
		return nil, err
	}
	if after == before {
		return nil, nil
	}
	v := fmt.Sprintf("iteration %d: the %s changed the candidate (digest %s -> %s); the change was undone", t, role, before, after)
	r.env.Logf("%s: protocol violation: %s", r.spec.Key, v)
	if err := r.repo.Restore("HEAD"); err != nil {
		return nil, err
	}
	return []string{v}, nil
}

func (r *runner) planStage(ctx context.Context, t int) error {
	c := r.arm.Condition
	dir := r.stageDir(t, "planner")
	if c.Planning == conditions.PlanOnce && t > 1 {
		// w/o Plan Update: D_t = D_1 byte for byte, no planner invocation.
		if !r.planValid(1) {
			return r.commitStage(runrecord.StageRecord{Iteration: t, Role: "planner", ReusedFrom: 1,
				RoleFailure: "there is no D_1 to reuse: the Planner of iteration 1 failed"})
		}
		for _, f := range []func(runrecord.StageLayout) string{runrecord.StageLayout.Plan, runrecord.StageLayout.PlanMarkdown} {
			data, err := os.ReadFile(f(r.stage(1, "planner")))
			if err != nil {
				return err
			}
			if err := runrecord.WriteFile(f(r.stage(t, "planner")), data); err != nil {
				return err
			}
		}
		return r.commitStage(runrecord.StageRecord{Iteration: t, Role: "planner", ReusedFrom: 1})
	}
	before, err := r.digest()
	if err != nil {
		return err
	}
	// A hard-link snapshot: the view is read-only, and a write through it
	// changes the workspace, which checkUnchanged catches and undoes.
	view := r.stage(t, "planner").Artifact()
	os.RemoveAll(view)
	if err := history.Snapshot(r.ws, view, r.env.Exclude...); err != nil {
		return err
	}
	defer os.RemoveAll(view)
	specPath, err := r.writeSpec(dir)
	if err != nil {
		return err
	}
	mats := []roles.Material{
		{Category: "Current artifact (read-only copy; your working directory)", Path: view},
		{Category: "Specification", Path: specPath, About: "the public task specification, as above"},
	}
	if c.EvidenceToPlanner && t > 1 {
		ev, err := r.evidence(t - 1)
		if err != nil {
			return err
		}
		if ev != nil {
			p := r.stage(t, "planner").PriorEvidence(t - 1)
			if err := runrecord.WriteJSON(p, ev); err != nil {
				return err
			}
			mats = append(mats, roles.Material{Category: "Evidence from the previous iteration", Path: p, About: ev.Summary()})
		}
	}
	in, err := r.placeInputs(view, mats)
	if err != nil {
		return err
	}
	defer in.done()
	view, mats = in.workDir, in.mats
	slots := r.slots(t, roles.Slots{Spec: r.env.Task.Spec, Access: string(harness.AccessReadOnly), Materials: mats})
	if r.env.Loop != nil && r.env.Loop.PlannerIssues != nil {
		if slots.Issues, err = r.env.Loop.PlannerIssues(t); err != nil {
			return err
		}
	}
	prompt, err := roles.Render(roles.Planner, slots)
	if err != nil {
		return err
	}
	var plan roles.Plan
	rep, err := r.call(ctx, t, harness.RolePlanner, harness.AccessReadOnly, view, prompt, r.timeout(harness.RolePlanner), "", "", materialPaths(mats),
		func(msg string) []string { p, errs := roles.ParsePlan(msg); plan = p; return errs })
	if err != nil {
		return err
	}
	rec := runrecord.StageRecord{Iteration: t, Role: "planner", Invocations: rep.invs}
	if rec.Violations, err = r.checkUnchanged(before, "Planner", t); err != nil {
		return err
	}
	switch {
	case rep.result.Outcome != harness.OutcomeCompleted:
		rec.RoleFailure = fmt.Sprintf("planner %s: %s", rep.result.Outcome, rep.result.Evidence)
	case !rep.valid:
		rec.RoleFailure = "planner output violated its contract after retries: " + strings.Join(rep.errs, "; ")
	default:
		if err := runrecord.WriteJSON(r.stage(t, "planner").Plan(), plan); err != nil {
			return err
		}
		if err := runrecord.WriteFile(r.stage(t, "planner").PlanMarkdown(), []byte(plan.Markdown(t))); err != nil {
			return err
		}
	}
	return r.commitStage(rec)
}

// planValid reports whether iteration s produced a development document.
func (r *runner) planValid(s int) bool {
	st := r.st.find(s, "planner")
	if st == nil || st.RoleFailure != "" {
		return false
	}
	_, err := os.Stat(r.stage(s, "planner").Plan())
	return err == nil
}

// lastPlan is the iteration of the latest valid development document up to
// t, 0 when there is none.
func (r *runner) lastPlan(t int) int {
	for s := t; s >= 1; s-- {
		if r.planValid(s) {
			return s
		}
	}
	return 0
}

// evidence loads E_t, or nil when the QA stage of t produced none.
func (r *runner) evidence(t int) (*roles.Evidence, error) {
	p := r.stage(t, "qa").Evidence()
	var ev roles.Evidence
	if err := runrecord.ReadJSON(p, &ev); err != nil {
		if os.IsNotExist(err) {
			return nil, nil
		}
		return nil, err
	}
	return &ev, nil
}

func (r *runner) developStage(ctx context.Context, t int) error {
	c := r.arm.Condition
	dir := r.stageDir(t, "developer")
	rec := runrecord.StageRecord{Iteration: t, Role: "developer"}
	if !c.WarmStart && t > 1 {
		// w/o Warm-Start: every Developer pass starts from A_0.
		if err := r.repo.Restore("cp-0"); err != nil {
			return err
		}
		rec.StartedFrom = "cp-0"
	}
	slots := r.slots(t, roles.Slots{Spec: r.env.Task.Spec, Access: string(harness.AccessWrite), FromInitial: rec.StartedFrom != "",
		Environment: r.roleEnvironment(ctx)})
	var kind roles.Kind
	var session, stateDir string
	var parse func(string) []string
	var report roles.DevReport
	switch {
	case c.Planning == conditions.NoPlan:
		// Vanilla and its continuation passes are plain harness passes: no
		// hoh contract, no retries, whatever the reply says. The session
		// lives in one state directory so later passes can resume it.
		stateDir = r.l.SessionState()
		kind = roles.Vanilla
		if t > 1 {
			kind = roles.Continuation
			if prev := r.st.find(t-1, "developer"); prev != nil && prev.Session != "" {
				session = prev.Session
			} else {
				rec.SessionNote = fmt.Sprintf("pass %d left no harness session: pass %d started a new session with the task and p_cont", t-1, t)
			}
		}
	default:
		kind = roles.Developer
		parse = func(msg string) []string { d, errs := roles.ParseDevReport(msg); report = d; return errs }
		specPath, err := r.writeSpec(dir)
		if err != nil {
			return err
		}
		rec.PlanFrom = r.lastPlan(t)
		if rec.PlanFrom > 0 {
			pl := r.stage(rec.PlanFrom, "planner")
			doc := "Development document D_" + fmt.Sprint(rec.PlanFrom)
			slots.Materials = append(slots.Materials,
				roles.Material{Category: doc, Path: pl.PlanMarkdown(), About: "objective, tasks, functionality to preserve, acceptance requirements"},
				roles.Material{Category: doc, Path: pl.Plan(), About: "the same, structured"})
		}
		slots.Materials = append(slots.Materials, roles.Material{Category: "Specification", Path: specPath, About: "the public task specification, as above"})
		switch {
		case rec.PlanFrom == 0:
			slots.PlanNote = "The Planner produced no development document for this iteration: work from the specification toward its most important missing or broken behaviour."
		case rec.PlanFrom < t:
			slots.PlanNote = fmt.Sprintf("The Planner produced no new development document for this iteration: continue with D_%d, the latest one.", rec.PlanFrom)
		}
	}
	in, err := r.placeInputs(r.ws, slots.Materials)
	if err != nil {
		return err
	}
	defer in.done()
	slots.Materials = in.mats
	prompt, err := roles.Render(kind, slots)
	if err != nil {
		return err
	}
	if rec.SessionNote != "" {
		// A new session has not seen the task: give it S, then p_cont (Eq. 7).
		vanilla, err := roles.Render(roles.Vanilla, slots)
		if err != nil {
			return err
		}
		prompt = vanilla + "\n" + prompt
	}
	if rec.StartDigest, err = r.digest(); err != nil {
		return err
	}
	rep, err := r.call(ctx, t, harness.RoleDeveloper, harness.AccessWrite, r.ws, prompt,
		r.timeout(harness.RoleDeveloper), session, stateDir, materialPaths(slots.Materials), parse)
	if err != nil {
		return err
	}
	rec.Invocations, rec.Session = rep.invs, rep.session
	if parse == nil {
		// The final message of a plain pass is kept as text.
		if err := runrecord.WriteFile(runrecord.StageLayout{Dir: dir}.FinalMessage(), []byte(rep.result.FinalMessage)); err != nil {
			return err
		}
	}
	switch {
	case rep.result.Outcome != harness.OutcomeCompleted:
		// An agent failure or timeout is a result: the workspace as left is A_t.
		rec.RoleFailure = fmt.Sprintf("developer %s: %s", rep.result.Outcome, rep.result.Evidence)
	case !rep.valid:
		rec.RoleFailure = "developer report violated its contract after retries: " + strings.Join(rep.errs, "; ")
	case parse != nil:
		if err := runrecord.WriteJSON(runrecord.StageLayout{Dir: dir}.Report(), report); err != nil {
			return err
		}
	}
	// The artifact exists whatever the reply was: tag it as A_t, and keep
	// the whole environment it was made in.
	if r.env.Checkpoints != nil {
		if err := r.env.Checkpoints.Save(ctx, t); err != nil {
			return &InfraError{Stage: fmt.Sprintf("checkpoint %d environment commit", t), Evidence: err.Error()}
		}
	}
	return r.commitStage(rec)
}

func (r *runner) qaStage(ctx context.Context, t int) (err error) {
	var ev roles.Evidence
	dir := r.stageDir(t, "qa")
	digest, err := r.digest()
	if err != nil {
		return err
	}
	// Public runtime checks run on their own throw-away copy.
	checksCopy := r.stage(t, "qa").ChecksCopy()
	os.RemoveAll(checksCopy)
	if err := r.copyWorkspace(checksCopy); err != nil {
		return err
	}
	checks, err := r.env.Bench.Check(ctx, r.env.Task, checksCopy)
	os.RemoveAll(checksCopy)
	if err != nil {
		return fmt.Errorf("trial %s iteration %d runtime checks: %w", r.spec.Key, t, err)
	}
	checksPath := r.stage(t, "qa").RuntimeChecks()
	if err := runrecord.WriteJSON(checksPath, checks); err != nil {
		return err
	}
	// The candidate is a hard-link snapshot of the workspace: QA's view of
	// it is read-only, and a write through it anyway changes the workspace
	// too, which checkUnchanged catches and undoes from the history.
	candidate := r.stage(t, "qa").Candidate()
	os.RemoveAll(candidate)
	if err := history.Snapshot(r.ws, candidate, r.env.Exclude...); err != nil {
		return err
	}
	// The next Developer writes the workspace in place, so the snapshot is
	// not kept: its artifact is the checkpoint in the history, its digest in
	// E_t; only the media E_t cites are kept, as copies of their own.
	defer func() {
		if err == nil {
			err = pruneCandidate(r.l.Dir, candidate, ev.Media)
		}
	}()
	specPath, err := r.writeSpec(dir)
	if err != nil {
		return err
	}
	passed := 0
	for _, c := range checks {
		if c.Passed {
			passed++
		}
	}
	mats := []roles.Material{
		{Category: "Candidate (frozen; your working directory)", Path: candidate, About: "frozen candidate " + digest},
	}
	// The document the Developer worked to (the last valid one).
	if dev := r.st.find(t, "developer"); dev != nil && dev.PlanFrom > 0 {
		mats = append(mats, roles.Material{Category: "Development document D_" + fmt.Sprint(dev.PlanFrom),
			Path: r.stage(dev.PlanFrom, "planner").PlanMarkdown()})
	}
	// The Developer's public execution records (paper Table 4): its report.
	if rep := r.stage(t, "developer").Report(); fileExists(rep) {
		mats = append(mats, roles.Material{Category: "Developer's report", Path: rep, About: "its summary and the self-tests it ran"})
	}
	mats = append(mats,
		roles.Material{Category: "Runtime check results", Path: checksPath, About: fmt.Sprintf("%d of %d public checks passed", passed, len(checks))},
		roles.Material{Category: "Specification", Path: specPath})
	in, err := r.placeInputs(candidate, mats)
	if err != nil {
		return err
	}
	defer in.done()
	seen := in.workDir // the candidate as QA sees it: read-only in a container
	slots := r.slots(t, roles.Slots{Spec: r.env.Task.Spec, Access: string(harness.AccessExec), Digest: digest, Materials: in.mats,
		Environment: r.roleEnvironment(ctx)})
	if r.env.Loop != nil && r.env.Loop.QAIssues != nil {
		if slots.Issues, err = r.env.Loop.QAIssues(t); err != nil {
			return err
		}
	}
	prompt, err := roles.Render(roles.QA, slots)
	if err != nil {
		return err
	}
	var report roles.QAReport
	// The candidate is the working directory, read-only in the view.
	r.viewMounts = nil
	rep, err := r.call(ctx, t, harness.RoleQA, harness.AccessExec, seen, prompt, r.timeout(harness.RoleQA), "", "", materialPaths(in.mats),
		func(msg string) []string { q, errs := roles.ParseQAReport(msg); report = q; return errs })
	if err != nil {
		return err
	}
	if r.env.Exchange != nil {
		// Paths QA cites under its view of the candidate name the retained copy.
		r.viewMounts = in.mounts()
	}
	if err := in.done(); err != nil {
		return err
	}
	rec := runrecord.StageRecord{Iteration: t, Role: "qa", Invocations: rep.invs, Digest: digest}
	if rec.Violations, err = r.checkUnchanged(digest, "QA Tester", t); err != nil {
		return err
	}
	// The candidate QA assessed must be the frozen one: a change (where no
	// read-only view could be made, or through a path it did not cover) is a
	// violation, its verified claims are not about the candidate, and the
	// retained copy is put back to the assessed artifact.
	candidateChanged := false
	if after, err := history.Digest(candidate); err != nil {
		return err
	} else if after != digest {
		candidateChanged = true
		rec.Violations = append(rec.Violations, fmt.Sprintf("iteration %d: the QA Tester changed the frozen candidate (digest %s -> %s); its verified claims were demoted to gaps and the candidate restored", t, digest, after))
		if err := os.RemoveAll(candidate); err != nil {
			return err
		}
		if err := r.copyWorkspace(candidate); err != nil {
			return err
		}
	}
	switch {
	case rep.result.Outcome != harness.OutcomeCompleted:
		rec.RoleFailure = fmt.Sprintf("QA Tester %s: %s", rep.result.Outcome, rep.result.Evidence)
		ev = roles.Evidence{Iteration: t, CandidateDigest: digest, QAStatus: "unavailable",
			Notes: []string{fmt.Sprintf("the QA Tester did not complete (%s): no claims were assessed", rep.result.Outcome)}}
	case !rep.valid:
		rec.RoleFailure = "QA report violated its contract after retries: " + strings.Join(rep.errs, "; ")
		ev = roles.Evidence{Iteration: t, CandidateDigest: digest, QAStatus: "unavailable",
			Notes: []string{"the QA Tester's report violated its contract after the retries: no claims were assessed"}}
	default:
		report.Iteration = t
		if err := runrecord.WriteJSON(runrecord.StageLayout{Dir: dir}.Report(), report); err != nil {
			return err
		}
		if candidateChanged {
			report.GapRecords = append(report.GapRecords, report.VerifiedRecords...)
			report.VerifiedRecords = nil
		}
		notes := checkMedia(&report, candidate, r.viewMounts)
		// Verified claims must rest on commands this QA invocation's CLI
		// reported executing and on what it recorded them printing (its own
		// event stream), not on its say-so.
		ev = roles.Normalise(report, digest, executions(rep.tools))
		ev.Notes = append(ev.Notes, notes...)
		if candidateChanged {
			ev.Notes = append(ev.Notes, "the QA Tester changed the candidate it assessed: every verified claim was recorded as a gap")
		}
		if ev.Media, err = mediaManifest(r.l.Dir, filepath.Join(dir, ViewScratch), candidate, &ev, r.viewMounts); err != nil {
			return err
		}
	}
	if err := runrecord.WriteJSON(r.stage(t, "qa").Evidence(), ev); err != nil {
		return err
	}
	return r.commitStage(rec)
}

// executions are the shell commands of a CLI's tool log with the outputs it
// recorded for them.
func executions(tools []harness.ToolCall) []roles.Execution {
	var out []roles.Execution
	for _, t := range tools {
		if c, ok := harness.ShellCommand(t); ok && strings.TrimSpace(c) != "" {
			out = append(out, roles.Execution{Command: c, Output: t.Output})
		}
	}
	return out
}

// pruneCandidate removes a QA candidate snapshot but the media files E_t
// cites in it, which are made copies of their own (a hard link would change
// with the next Developer's writes).
func pruneCandidate(trialDir, candidate string, media []runrecord.MediaItem) error {
	keep := map[string]bool{}
	for _, m := range media {
		p := m.Path
		if !filepath.IsAbs(p) {
			p = filepath.Join(trialDir, p)
		}
		if rel, err := filepath.Rel(candidate, p); err == nil && !strings.HasPrefix(rel, "..") {
			keep[p] = true
		}
	}
	if len(keep) == 0 {
		return os.RemoveAll(candidate)
	}
	kept := candidate + ".media"
	os.RemoveAll(kept)
	for p := range keep {
		rel, _ := filepath.Rel(candidate, p)
		dst := filepath.Join(kept, rel)
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return err
		}
		if err := history.CopyTree(p, dst); err != nil {
			return err
		}
	}
	if err := os.RemoveAll(candidate); err != nil {
		return err
	}
	return os.Rename(kept, candidate)
}

// DefaultMaxFileBytes is the default Env.MaxFileBytes.
const DefaultMaxFileBytes = 1 << 30

// refuseOversized removes the regular files under ws (outside the excluded
// top-level entries) whose apparent size exceeds limit, and says what each
// was.
func refuseOversized(ws string, exclude []string, limit int64) ([]string, error) {
	if limit <= 0 {
		limit = DefaultMaxFileBytes
	}
	var refused []string
	err := filepath.WalkDir(ws, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if filepath.Dir(p) == ws && slices.Contains(exclude, d.Name()) {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if !d.Type().IsRegular() {
			return nil
		}
		info, err := d.Info()
		if err != nil || info.Size() <= limit {
			return err
		}
		var blocks int64
		if st, ok := info.Sys().(*syscall.Stat_t); ok {
			blocks = st.Blocks * 512
		}
		rel, _ := filepath.Rel(ws, p)
		refused = append(refused, fmt.Sprintf("%s of %d bytes (%d allocated), above the artifact's limit of %d bytes per file", rel, info.Size(), blocks, limit))
		return os.Remove(p)
	})
	return refused, err
}
