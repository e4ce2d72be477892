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
	"github.com/hoh-research/hoh/internal/agentpath"
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

func (s *state) find(t int, role runrecord.Role) *runrecord.StageRecord {
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
	cond conditions.Condition // what spec.Arm runs
	repo *history.Repo
	st   *state
	ws   string // the workspace (Env.Workspace or <dir>/workspace)
	// viewMounts are the task's fixed paths of the last invocation
	// (benchmark.AgentView), to find the files its records cite.
	viewMounts []sandbox.Mount
	// clock splits the run's wall time into phases (stage records and
	// the summary keep them).
	clock *phaseClock
	// secretScan remembers the workspace files it found clean, so each
	// stage's scan reads only what changed.
	secretScan *harness.SecretScan
}

// executor is the executor of one role invocation. On the host it is
// confined to the role's contract (sandbox.Confined): the run directory and
// /tmp are hidden (a private empty /tmp is the role's scratch space), and
// only its working directory (writable for the Developer, read-only
// otherwise), its CLI state directory and the files its prompt lists are
// bound back. Another trial, withheld evidence, the history repository,
// evaluation outputs and hoh's private directory are not in the view.
// Containers get the view of their mounts (environment package).
func (r *runner) executor(role runrecord.Role, access harness.Access, workDir, stateDir string, shown, writes []string) sandbox.Executor {
	root := r.env.RunDir
	if root == "" {
		root = r.l.Dir
	}
	leftovers := sandbox.Leftovers{Path: r.l.Processes()}
	env := r.env.ForRole(role)
	return RoleExecutor(env.Exec, env.Harness, root, RoleView{Access: access, WorkDir: workDir, StateDir: stateDir, Shown: shown, Writes: writes,
		Endpoints: endpoints(env), Limits: env.Limits}, func(pid int) { _ = leftovers.Record(pid) })
}

// endpoints are the addresses a host role reaches besides the harness's
// own model endpoint (RoleExecutor): its relay's (in a team, its own role's
// only), and Env.Endpoints.
func endpoints(env Env) []string {
	out := append([]string(nil), env.Endpoints...)
	if env.Relay != nil {
		out = append(out, env.Relay.BaseURL())
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
func (r *runner) invocationExec(role runrecord.Role, access harness.Access, workDir, stateDir, stageDir string, shown []string) (ex sandbox.Executor, roots []string, err error) {
	av, ok := r.env.Bench.(benchmark.AgentView)
	if !ok {
		return r.executor(role, access, workDir, stateDir, shown, nil), nil, nil
	}
	mounts, err := av.AgentMounts(r.env.Task, workDir, filepath.Join(stageDir, ViewScratch), role == runrecord.RoleDeveloper)
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
	return sandbox.Remapped{Inner: r.executor(role, access, workDir, stateDir, shown, writes), Mounts: mounts}, roots, nil
}

func (r *runner) digest() (string, error) {
	defer r.clock.enter(runrecord.PhaseDigest)()
	return history.Digest(r.ws, r.env.Exclude...)
}

func (r *runner) copyWorkspace(dst string) error {
	return history.CopyTree(r.ws, dst, r.env.Exclude...)
}

// snapshotTo puts a hard-link snapshot of the workspace at dst (for a
// read-only view). It is kept in hoh's private directory between stages and
// only brought up to date (history.SyncSnapshot), so a stage does not link
// and unlink every file of the workspace: each link changes a file's ctime,
// after which every digest and git re-read the whole tree. unsnapshot puts
// it back.
func (r *runner) snapshotTo(dst string) error {
	if err := os.MkdirAll(r.l.Private(), 0o700); err != nil {
		return err
	}
	kept := r.keptSnapshot()
	if err := history.SyncSnapshot(r.ws, kept, r.env.Exclude...); err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	return os.Rename(kept, dst)
}

// unsnapshot takes the snapshot at view back into hoh's private directory
// for the next stage (whatever a role may have left in it is undone by the
// next SyncSnapshot), or removes it.
func (r *runner) unsnapshot(view string) error {
	kept := r.keptSnapshot()
	if _, err := os.Lstat(kept); os.IsNotExist(err) {
		if os.Rename(view, kept) == nil {
			return nil
		}
	}
	return os.RemoveAll(view)
}

func (r *runner) keptSnapshot() string { return filepath.Join(r.l.Private(), "snapshot") }

// roleEnvironment is what the benchmark says this machine lets the
// Developer and the QA Tester observe ("" when it says nothing).
func (r *runner) roleEnvironment(ctx context.Context) string {
	if re, ok := r.env.Bench.(benchmark.RoleEnvironment); ok {
		return re.RoleEnvironment(ctx, r.env.Task)
	}
	return ""
}

// slots fills the iteration context of a prompt: the iteration (never a
// total T, so a run can be extended), or in project mode the loop number and
// the budget left.
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
	if r.secretScan == nil {
		r.secretScan = &harness.SecretScan{Secrets: r.env.Secrets}
	}
	for _, d := range []struct{ root, what string }{{r.ws, "the artifact"}, {r.l.Stage(rec.Iteration, rec.Role), "the stage's files"}} {
		found, err := r.secretScan.Found(d.root)
		if err != nil {
			return fmt.Errorf("scrub %s: %w", d.what, err)
		}
		if len(found) > 0 {
			if len(found) > 5 {
				found = append(found[:5], fmt.Sprintf("and %d more", len(found)-5))
			}
			v := fmt.Sprintf("iteration %d: the %s left a secret hoh knows (the provider key or its placeholder) in %s (%s); it was redacted from what is kept",
				rec.Iteration, rec.Role.Display(), d.what, strings.Join(found, ", "))
			r.env.Logf("%s: protocol violation: %s", r.spec.Key, v)
			rec.Violations = append(rec.Violations, v)
			if d.root == r.ws {
				rec.Digest = "" // the redaction changed the workspace
			}
		}
	}
	return nil
}

// noteLeftOut accounts for what the history could not hold: a nested
// repository's .git (its work tree is recorded as plain files) is logged;
// a name git refuses is a violation naming the path. The stage is scored on
// what was kept.
func (r *runner) noteLeftOut(rec *runrecord.StageRecord, kept history.Recorded) {
	if len(kept.Metadata) > 0 {
		r.env.Logf("%s: iteration %d %s: version-control metadata %s kept on disk, not in the artifact (work trees are recorded as plain files)",
			r.spec.Key, rec.Iteration, rec.Role, quoteAll(kept.Metadata))
	}
	for _, p := range kept.Refused {
		v := fmt.Sprintf("iteration %d: the %s left %s; it is not part of the artifact", rec.Iteration, rec.Role.Display(), p)
		r.env.Logf("%s: protocol violation: %s", r.spec.Key, v)
		rec.Violations = append(rec.Violations, v)
	}
}

func quoteAll(paths []string) string {
	var q []string
	for i, p := range paths {
		if i == 5 {
			q = append(q, fmt.Sprintf("and %d more", len(paths)-5))
			break
		}
		q = append(q, history.Quote(p))
	}
	return strings.Join(q, ", ")
}

func (r *runner) commitStage(rec runrecord.StageRecord) error {
	leave := r.clock.enter(runrecord.PhaseCommit)
	defer leave()
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
	kept, err := r.repo.Record(msg)
	if err != nil {
		return err
	}
	r.noteLeftOut(&rec, kept)
	c := kept.Commit
	rec.Commit = c
	if rec.Digest == "" {
		if rec.Digest, err = r.digest(); err != nil {
			return err
		}
	}
	if rec.Role == runrecord.RoleDeveloper {
		if err := r.repo.Tag(fmt.Sprintf("cp-%d", rec.Iteration), c); err != nil {
			return err
		}
	}
	rec.Finished = time.Now().UTC()
	leave()
	rec.Timings = r.clock.take()
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
	if relay := r.env.ForRole(inv.Role).Relay; relay != nil {
		if lines, _, err := served.Read(relay.Log()); err == nil {
			inv.Usage = served.ByAttempt(lines)[inv.Dir]
		}
	}
	if p := r.env.ForRole(inv.Role).Price; p != nil {
		inv.CostUSD = runrecord.FormatUSD(p.Cost(inv.Usage))
	}
	_ = runrecord.Append(r.l.ReplacedUsage(), inv) // best effort: the disk may be the fault
}

// writeLedger rewrites usage.jsonl from the committed stages, so the ledger
// never counts an interrupted stage twice.
func (r *runner) writeLedger() error {
	invs := r.st.invocations()
	invs = slices.Clone(invs)
	for i := range invs {
		if p := r.env.ForRole(invs[i].Role).Price; p != nil {
			invs[i].CostUSD = runrecord.FormatUSD(p.Cost(invs[i].Usage))
		}
	}
	return runrecord.WriteLedger(r.l.Usage(), invs)
}

func (r *runner) loop(ctx context.Context) error {
	c := r.cond
	for t := 1; t <= r.spec.Arm.Checkpoint; t++ {
		if c.Planning != conditions.NoPlan && r.st.find(t, runrecord.RolePlanner) == nil {
			if err := r.planStage(ctx, t); err != nil {
				return err
			}
		}
		if r.st.find(t, runrecord.RoleDeveloper) == nil {
			if err := r.developStage(ctx, t); err != nil {
				return err
			}
		}
		if c.QA && r.st.find(t, runrecord.RoleQA) == nil {
			if err := r.qaStage(ctx, t); err != nil {
				return err
			}
		}
	}
	return nil
}

func (r *runner) stageDir(t int, role runrecord.Role) string { return r.l.Stage(t, role) }

func (r *runner) stage(t int, role runrecord.Role) runrecord.StageLayout {
	return r.l.StageFiles(t, role)
}

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

// checkUnchanged enforces the single-writer boundary after a Planner or QA
// stage: a changed workspace is a protocol violation and is undone.
func (r *runner) checkUnchanged(before string, role runrecord.Role, t int) ([]string, error) {
	after, err := r.digest()
	if err != nil {
		return nil, err
	}
	if after == before {
		return nil, nil
	}
	v := fmt.Sprintf("iteration %d: the %s changed the candidate (digest %s -> %s); the change was undone", t, role.Display(), before, after)
	r.env.Logf("%s: protocol violation: %s", r.spec.Key, v)
	if err := r.repo.Restore("HEAD"); err != nil {
		return nil, err
	}
	return []string{v}, nil
}

func (r *runner) planStage(ctx context.Context, t int) error {
	if r.cond.Planning == conditions.PlanOnce && t > 1 {
		return r.reusePlan(t)
	}
	before, err := r.digest()
	if err != nil {
		return err
	}
	// A hard-link snapshot: the view is read-only, and a write through it
	// changes the workspace, which checkUnchanged catches and undoes.
	view := r.stage(t, runrecord.RolePlanner).Artifact()
	os.RemoveAll(view)
	if err := r.snapshotTo(view); err != nil {
		return err
	}
	defer r.unsnapshot(view)
	call, in, err := r.planInputs(t, view)
	if err != nil {
		return err
	}
	defer in.done()
	var plan runrecord.Plan
	call.parse = func(msg string) []string { p, errs := roles.ParsePlan(msg); plan = p; return errs }
	rep, err := r.call(ctx, call)
	if err != nil {
		return err
	}
	return r.judgePlan(t, before, rep, plan)
}

// reusePlan is the Planner stage of w/o Plan Update after the first: D_t =
// D_1 byte for byte, no planner invocation.
func (r *runner) reusePlan(t int) error {
	if !r.planValid(1) {
		return r.commitStage(runrecord.StageRecord{Iteration: t, Role: runrecord.RolePlanner, ReusedFrom: 1,
			RoleFailure: "there is no D_1 to reuse: the Planner of iteration 1 failed"})
	}
	for _, f := range []func(runrecord.StageLayout) string{runrecord.StageLayout.Plan, runrecord.StageLayout.PlanMarkdown} {
		data, err := os.ReadFile(f(r.stage(1, runrecord.RolePlanner)))
		if err != nil {
			return err
		}
		if err := runrecord.WriteFile(f(r.stage(t, runrecord.RolePlanner)), data); err != nil {
			return err
		}
	}
	return r.commitStage(runrecord.StageRecord{Iteration: t, Role: runrecord.RolePlanner, ReusedFrom: 1})
}

// planInputs are the Planner's materials (A_{t-1} as view, S, and E_{t-1}
// when the condition feeds evidence back), placed in its view, and its
// call.
func (r *runner) planInputs(t int, view string) (callSpec, *inputs, error) {
	c := r.cond
	specPath, err := r.writeSpec(r.stageDir(t, runrecord.RolePlanner))
	if err != nil {
		return callSpec{}, nil, err
	}
	mats := []roles.Material{
		{Category: "Current artifact (read-only copy; your working directory)", Path: view},
		{Category: "Specification", Path: specPath, About: "the public task specification, as above"},
	}
	if c.EvidenceToPlanner && t > 1 {
		ev, err := r.evidence(t - 1)
		if err != nil {
			return callSpec{}, nil, err
		}
		if ev != nil {
			p := r.stage(t, runrecord.RolePlanner).PriorEvidence(t - 1)
			if err := runrecord.WriteJSON(p, ev); err != nil {
				return callSpec{}, nil, err
			}
			mats = append(mats, roles.Material{Category: "Evidence from the previous iteration", Path: p, About: ev.Summary()})
		}
	}
	in, err := r.placeInputs(view, mats)
	if err != nil {
		return callSpec{}, nil, err
	}
	slots := r.slots(t, roles.Slots{Spec: r.env.Task.Spec, Access: string(harness.AccessReadOnly), Materials: in.mats})
	if r.env.Loop != nil && r.env.Loop.PlannerIssues != nil {
		if slots.Issues, err = r.env.Loop.PlannerIssues(t); err != nil {
			in.done()
			return callSpec{}, nil, err
		}
	}
	prompt, err := roles.Render(roles.Planner, slots)
	if err != nil {
		in.done()
		return callSpec{}, nil, err
	}
	shown := materialPaths(in.mats)
	if r.env.Loop != nil {
		for _, f := range r.env.Loop.PlannerFiles {
			if fileExists(f) {
				shown = append(shown, f)
			}
		}
	}
	return callSpec{iteration: t, role: runrecord.RolePlanner, access: harness.AccessReadOnly, workDir: in.workDir,
		prompt: prompt, shown: shown}, in, nil
}

// judgePlan commits the Planner stage: D_t when the reply is a valid plan,
// else the role failure.
func (r *runner) judgePlan(t int, before string, rep reply, plan runrecord.Plan) error {
	rec := runrecord.StageRecord{Iteration: t, Role: runrecord.RolePlanner, Invocations: rep.invs}
	var err error
	if rec.Violations, err = r.checkUnchanged(before, runrecord.RolePlanner, t); err != nil {
		return err
	}
	switch {
	case rep.result.Outcome != runrecord.OutcomeCompleted:
		rec.RoleFailure = fmt.Sprintf("%s %s: %s", rec.Role, rep.result.Outcome, rep.result.Evidence)
	case !rep.valid:
		rec.RoleFailure = "planner output violated its contract after retries: " + strings.Join(rep.errs, "; ")
	default:
		if err := runrecord.WriteJSON(r.stage(t, runrecord.RolePlanner).Plan(), plan); err != nil {
			return err
		}
		if err := runrecord.WriteFile(r.stage(t, runrecord.RolePlanner).PlanMarkdown(), []byte(plan.Markdown(t))); err != nil {
			return err
		}
	}
	return r.commitStage(rec)
}

// planValid reports whether iteration s produced a development document.
func (r *runner) planValid(s int) bool {
	st := r.st.find(s, runrecord.RolePlanner)
	if st == nil || st.RoleFailure != "" {
		return false
	}
	_, err := os.Stat(r.stage(s, runrecord.RolePlanner).Plan())
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
func (r *runner) evidence(t int) (*runrecord.Evidence, error) {
	p := r.stage(t, runrecord.RoleQA).Evidence()
	var ev runrecord.Evidence
	if err := runrecord.ReadJSON(p, &ev); err != nil {
		if os.IsNotExist(err) {
			return nil, nil
		}
		return nil, err
	}
	return &ev, nil
}

func (r *runner) developStage(ctx context.Context, t int) error {
	rec := runrecord.StageRecord{Iteration: t, Role: runrecord.RoleDeveloper}
	if !r.cond.WarmStart && t > 1 {
		// w/o Warm-Start: every Developer pass starts from A_0.
		if err := r.repo.Restore("cp-0"); err != nil {
			return err
		}
		rec.StartedFrom = "cp-0"
	}
	var report runrecord.DevReport
	call, in, err := r.developInputs(ctx, t, &rec, &report)
	if err != nil {
		return err
	}
	defer in.done()
	rep, err := r.call(ctx, call)
	if err != nil {
		return err
	}
	return r.judgeDevelop(ctx, t, rec, rep, call.parse != nil, report)
}

// developInputs are the Developer's prompt and materials, placed in its
// view, and its call; a parsed report goes to report.
func (r *runner) developInputs(ctx context.Context, t int, rec *runrecord.StageRecord, report *runrecord.DevReport) (callSpec, *inputs, error) {
	call := callSpec{iteration: t, role: runrecord.RoleDeveloper, access: harness.AccessWrite, workDir: r.ws}
	slots := r.slots(t, roles.Slots{Spec: r.env.Task.Spec, Access: string(harness.AccessWrite), FromInitial: rec.StartedFrom != "",
		Environment: r.roleEnvironment(ctx)})
	kind := roles.Developer
	if r.cond.Planning == conditions.NoPlan {
		kind = r.plainPass(t, rec, &call)
	} else {
		call.parse = func(msg string) []string { d, errs := roles.ParseDevReport(msg); *report = d; return errs }
		if err := r.developerMaterials(t, rec, &slots); err != nil {
			return callSpec{}, nil, err
		}
	}
	in, err := r.placeInputs(r.ws, slots.Materials)
	if err != nil {
		return callSpec{}, nil, err
	}
	slots.Materials = in.mats
	call.shown = materialPaths(slots.Materials)
	if call.prompt, err = roles.Render(kind, slots); err != nil {
		in.done()
		return callSpec{}, nil, err
	}
	if rec.SessionNote != "" {
		// A new session has not seen the task: give it S, then p_cont (Eq. 7).
		vanilla, err := roles.Render(roles.Vanilla, slots)
		if err != nil {
			in.done()
			return callSpec{}, nil, err
		}
		call.prompt = vanilla + "\n" + call.prompt
	}
	if rec.StartDigest, err = r.digest(); err != nil {
		in.done()
		return callSpec{}, nil, err
	}
	return call, in, nil
}

// plainPass sets up a Vanilla pass or a continuation pass: a plain harness
// pass, no hoh contract, no retries, whatever the reply says. The session
// lives in one state directory so later passes can resume it.
func (r *runner) plainPass(t int, rec *runrecord.StageRecord, call *callSpec) roles.Kind {
	call.stateDir = r.l.SessionState()
	if t == 1 {
		return roles.Vanilla
	}
	if prev := r.st.find(t-1, runrecord.RoleDeveloper); prev != nil && prev.Session != "" {
		call.session = prev.Session
	} else {
		rec.SessionNote = fmt.Sprintf("pass %d left no harness session: pass %d started a new session with the task and p_cont", t-1, t)
	}
	return roles.Continuation
}

// developerMaterials lists the HoH Developer's materials: the latest valid
// development document (rec.PlanFrom) and S, with a note when D_t is not
// new.
func (r *runner) developerMaterials(t int, rec *runrecord.StageRecord, slots *roles.Slots) error {
	specPath, err := r.writeSpec(r.stageDir(t, runrecord.RoleDeveloper))
	if err != nil {
		return err
	}
	rec.PlanFrom = r.lastPlan(t)
	if rec.PlanFrom > 0 {
		pl := r.stage(rec.PlanFrom, runrecord.RolePlanner)
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
	return nil
}

// judgeDevelop commits the Developer stage: whatever the reply, the
// workspace as left is A_t; an agent failure or an invalid report is the
// role failure.
func (r *runner) judgeDevelop(ctx context.Context, t int, rec runrecord.StageRecord, rep reply, contract bool, report runrecord.DevReport) error {
	st := r.stage(t, runrecord.RoleDeveloper)
	rec.Invocations, rec.Session = rep.invs, rep.session
	if !contract {
		// The final message of a plain pass is kept as text.
		if err := runrecord.WriteFile(st.FinalMessage(), []byte(rep.result.FinalMessage)); err != nil {
			return err
		}
	}
	switch {
	case rep.result.Outcome != runrecord.OutcomeCompleted:
		rec.RoleFailure = fmt.Sprintf("%s %s: %s", rec.Role, rep.result.Outcome, rep.result.Evidence)
	case !rep.valid:
		rec.RoleFailure = "developer report violated its contract after retries: " + strings.Join(rep.errs, "; ")
	case contract:
		if err := runrecord.WriteJSON(st.Report(), report); err != nil {
			return err
		}
	}
	// The artifact exists whatever the reply was: tag it as A_t, and keep
	// the whole environment it was made in.
	if r.env.Checkpoints != nil {
		if err := r.env.Checkpoints.Save(ctx, t); err != nil {
			return checkpointInfra(t, "environment commit", err)
		}
	}
	return r.commitStage(rec)
}

func (r *runner) qaStage(ctx context.Context, t int) (err error) {
	digest, err := r.digest()
	if err != nil {
		return err
	}
	checks, err := r.runtimeChecks(ctx, t)
	if err != nil {
		return err
	}
	// The candidate is a hard-link snapshot of the workspace: QA's view of
	// it is read-only, and a write through it anyway changes the workspace
	// too, which checkUnchanged catches and undoes from the history.
	candidate := r.stage(t, runrecord.RoleQA).Candidate()
	os.RemoveAll(candidate)
	if err := r.snapshotTo(candidate); err != nil {
		return err
	}
	// The next Developer writes the workspace in place, so the snapshot is
	// not kept: its artifact is the checkpoint in the history, its digest in
	// E_t; only the media E_t cites are kept, as copies of their own.
	var ev runrecord.Evidence
	defer func() {
		if err == nil {
			err = pruneCandidate(ctx, r.l.Dir, candidate, ev.Media, r.unsnapshot)
		}
	}()
	var report runrecord.QAReport
	call, in, err := r.qaInputs(ctx, t, digest, candidate, checks, &report)
	if err != nil {
		return err
	}
	defer in.done()
	// The candidate is the working directory, read-only in the view.
	r.viewMounts = nil
	rep, err := r.call(ctx, call)
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
	rec := runrecord.StageRecord{Iteration: t, Role: runrecord.RoleQA, Invocations: rep.invs, Digest: digest}
	if ev, err = r.judgeQA(ctx, t, &rec, candidate, rep, report); err != nil {
		return err
	}
	if err := runrecord.WriteJSON(r.stage(t, runrecord.RoleQA).Evidence(), ev); err != nil {
		return err
	}
	return r.commitStage(rec)
}

// checkSummary is what QA is told of the public runtime checks: where
// their results are and how many passed.
type checkSummary struct {
	path          string
	passed, total int
}

// runtimeChecks runs the benchmark's public runtime checks on a copy of
// the Developer's commit (a check may write): the kept export, which git
// brings to it writing only the files changed since the last check or
// evaluation (exported), not a copy of the whole workspace per stage.
func (r *runner) runtimeChecks(ctx context.Context, t int) (checkSummary, error) {
	defer r.clock.enter(runrecord.PhaseChecks)()
	commit := "HEAD"
	if dev := r.st.find(t, runrecord.RoleDeveloper); dev != nil && dev.Commit != "" {
		commit = dev.Commit
	}
	dir, done, err := r.exported(commit, fmt.Sprintf("iteration %d runtime checks", t))
	if err != nil {
		return checkSummary{}, fmt.Errorf("trial %s iteration %d runtime checks: %w", r.spec.Key, t, err)
	}
	checks, err := r.env.Bench.Check(ctx, r.env.Task, dir)
	done()
	if err != nil {
		return checkSummary{}, fmt.Errorf("trial %s iteration %d runtime checks: %w", r.spec.Key, t, err)
	}
	s := checkSummary{path: r.stage(t, runrecord.RoleQA).RuntimeChecks(), total: len(checks)}
	for _, c := range checks {
		if c.Passed {
			s.passed++
		}
	}
	return s, runrecord.WriteJSON(s.path, checks)
}

// qaInputs are the QA Tester's materials (the frozen candidate, the
// document the Developer worked to, its report, the runtime checks, S),
// placed in its view, and its call; a parsed report goes to report.
func (r *runner) qaInputs(ctx context.Context, t int, digest, candidate string, checks checkSummary, report *runrecord.QAReport) (callSpec, *inputs, error) {
	specPath, err := r.writeSpec(r.stageDir(t, runrecord.RoleQA))
	if err != nil {
		return callSpec{}, nil, err
	}
	mats := []roles.Material{
		{Category: "Candidate (frozen; your working directory)", Path: candidate, About: "frozen candidate " + digest},
	}
	// The document the Developer worked to (the last valid one).
	if dev := r.st.find(t, runrecord.RoleDeveloper); dev != nil && dev.PlanFrom > 0 {
		mats = append(mats, roles.Material{Category: "Development document D_" + fmt.Sprint(dev.PlanFrom),
			Path: r.stage(dev.PlanFrom, runrecord.RolePlanner).PlanMarkdown()})
	}
	// The Developer's public execution records (paper Table 4): its report.
	if rep := r.stage(t, runrecord.RoleDeveloper).Report(); fileExists(rep) {
		mats = append(mats, roles.Material{Category: "Developer's report", Path: rep, About: "its summary and the self-tests it ran"})
	}
	mats = append(mats,
		roles.Material{Category: "Runtime check results", Path: checks.path, About: fmt.Sprintf("%d of %d public checks passed", checks.passed, checks.total)},
		roles.Material{Category: "Specification", Path: specPath})
	in, err := r.placeInputs(candidate, mats)
	if err != nil {
		return callSpec{}, nil, err
	}
	call, err := r.qaCall(ctx, t, digest, in, report)
	if err != nil {
		in.done()
		return callSpec{}, nil, err
	}
	return call, in, nil
}

// qaCall is the QA Tester's call on its placed inputs: the candidate as it
// sees it (read-only in a container) is its working directory.
func (r *runner) qaCall(ctx context.Context, t int, digest string, in *inputs, report *runrecord.QAReport) (callSpec, error) {
	slots := r.slots(t, roles.Slots{Spec: r.env.Task.Spec, Access: string(harness.AccessExec), Digest: digest, Materials: in.mats,
		Environment: r.roleEnvironment(ctx)})
	var err error
	if r.env.Loop != nil && r.env.Loop.QAIssues != nil {
		if slots.Issues, err = r.env.Loop.QAIssues(t); err != nil {
			return callSpec{}, err
		}
	}
	prompt, err := roles.Render(roles.QA, slots)
	if err != nil {
		return callSpec{}, err
	}
	return callSpec{iteration: t, role: runrecord.RoleQA, access: harness.AccessExec, workDir: in.workDir, prompt: prompt,
		shown: materialPaths(in.mats), parse: func(msg string) []string { q, errs := roles.ParseQAReport(msg); *report = q; return errs }}, nil
}

// judgeQA records the QA stage's violations in rec and returns E_t: the
// normalised report, or "unavailable" and why.
func (r *runner) judgeQA(ctx context.Context, t int, rec *runrecord.StageRecord, candidate string, rep reply, report runrecord.QAReport) (runrecord.Evidence, error) {
	digest := rec.Digest
	candidateChanged, err := r.checkCandidate(t, rec, candidate)
	if err != nil {
		return runrecord.Evidence{}, err
	}
	switch {
	case rep.result.Outcome != runrecord.OutcomeCompleted:
		rec.RoleFailure = fmt.Sprintf("QA Tester %s: %s", rep.result.Outcome, rep.result.Evidence)
		return runrecord.Evidence{Iteration: t, CandidateDigest: digest, QAStatus: "unavailable",
			Notes: []string{fmt.Sprintf("the QA Tester did not complete (%s): no claims were assessed", rep.result.Outcome)}}, nil
	case !rep.valid:
		rec.RoleFailure = "QA report violated its contract after retries: " + strings.Join(rep.errs, "; ")
		return runrecord.Evidence{Iteration: t, CandidateDigest: digest, QAStatus: "unavailable",
			Notes: []string{"the QA Tester's report violated its contract after the retries: no claims were assessed"}}, nil
	}
	report.Iteration = t
	if err := runrecord.WriteJSON(r.stage(t, runrecord.RoleQA).Report(), report); err != nil {
		return runrecord.Evidence{}, err
	}
	if candidateChanged {
		report.GapRecords = append(report.GapRecords, report.VerifiedRecords...)
		report.VerifiedRecords = nil
	}
	notes := checkMedia(ctx, &report, candidate, r.viewMounts)
	// Verified claims must rest on commands this QA invocation's CLI
	// reported executing and on what it recorded them printing (its own
	// event stream), not on its say-so.
	ev := roles.Normalise(report, digest, executions(rep.tools))
	ev.Notes = append(ev.Notes, notes...)
	if candidateChanged {
		ev.Notes = append(ev.Notes, "the QA Tester changed the candidate it assessed: every verified claim was recorded as a gap")
	}
	ev.Media, err = mediaManifest(ctx, r.l.Dir, filepath.Join(r.stageDir(t, runrecord.RoleQA), ViewScratch), candidate, &ev, r.viewMounts)
	return ev, err
}

// checkCandidate records in rec what the QA Tester changed: the workspace
// (undone from the history) and the frozen candidate. The candidate QA
// assessed must be the frozen one: a change (where no read-only view could
// be made, or through a path it did not cover) is a violation, its verified
// claims are not about the candidate, and the retained copy is put back to
// the assessed artifact.
func (r *runner) checkCandidate(t int, rec *runrecord.StageRecord, candidate string) (changed bool, err error) {
	if rec.Violations, err = r.checkUnchanged(rec.Digest, runrecord.RoleQA, t); err != nil {
		return false, err
	}
	after, err := history.Digest(candidate)
	if err != nil || after == rec.Digest {
		return false, err
	}
	rec.Violations = append(rec.Violations, fmt.Sprintf("iteration %d: the QA Tester changed the frozen candidate (digest %s -> %s); its verified claims were demoted to gaps and the candidate restored", t, rec.Digest, after))
	if err := os.RemoveAll(candidate); err != nil {
		return true, err
	}
	return true, r.copyWorkspace(candidate)
}

// executions are the shell commands of a CLI's tool log with the outputs it
// recorded for them.
func executions(tools []runrecord.ToolCall) []roles.Execution {
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
// with the next Developer's writes), read as agentpath reads them: regular
// files only, so no link the agent left is kept.
func pruneCandidate(ctx context.Context, trialDir, candidate string, media []runrecord.MediaItem, remove func(string) error) error {
	keep := map[string]bool{}
	for _, m := range media {
		p := m.Path
		if !filepath.IsAbs(p) {
			p = filepath.Join(trialDir, p)
		}
		if rel, err := filepath.Rel(candidate, p); err == nil && !strings.HasPrefix(rel, "..") {
			keep[rel] = true
		}
	}
	if len(keep) == 0 {
		return remove(candidate)
	}
	kept := candidate + ".media"
	os.RemoveAll(kept)
	view := agentpath.View{Roots: []agentpath.Root{{View: candidate, Host: candidate}}}
	for rel := range keep {
		if _, err := view.CopyFile(ctx, rel, candidate, filepath.Join(kept, rel)); err != nil && !agentpath.IsRefusal(err) {
			return err
		}
	}
	if err := remove(candidate); err != nil {
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
