package trial

// The workspace between stages: the roles' views and executors, snapshots,
// digests, and each stage's commit to the history.

import (
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
	"github.com/hoh-research/hoh/experiments/history"
	"github.com/hoh-research/hoh/experiments/served"
	"github.com/hoh-research/hoh/runrecord"
)

// executor is the executor of one role invocation. On the host it is
// confined to the role's contract (sandbox.Confined): the run directory and
// /tmp are hidden (a private empty /tmp is the role's scratch space), and
// only its working directory (writable for the Developer, read-only
// otherwise), its CLI state directory and the files its prompt lists are
// bound back. Another trial, withheld evidence, the history repository,
// evaluation outputs and hoh's private directory are not in the view.
// Containers get the view of their mounts (environment package).
func (r *runner) executor(c *callSpec, stateDir string, shown, writes []string) sandbox.Executor {
	role := c.role
	root := r.env.RunDir
	if root == "" {
		root = r.l.Dir
	}
	leftovers := sandbox.Leftovers{Path: r.l.Processes()}
	env := r.env.ForRole(role)
	return RoleExecutor(env.Exec, env.Harness, root, RoleView{Access: c.access, WorkDir: c.workDir, WorkSource: c.workSource, StateDir: stateDir,
		Shown: shown, Writes: writes, Endpoints: endpoints(env), Limits: env.Limits}, func(pid int) { _ = leftovers.Record(pid) })
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
func (r *runner) invocationExec(c *callSpec, stateDir, stageDir string) (ex sandbox.Executor, roots []string, mounts []sandbox.Mount, err error) {
	av, ok := r.env.Bench.(benchmark.AgentView)
	if !ok {
		return r.executor(c, stateDir, c.shown, nil), nil, nil, nil
	}
	mounts, err = av.AgentMounts(r.env.Task, c.workDir, filepath.Join(stageDir, ViewScratch), c.role == runrecord.RoleDeveloper)
	if err != nil {
		return nil, nil, nil, err
	}
	var writes []string
	shown := append([]string(nil), c.shown...)
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
	return sandbox.Remapped{Inner: r.executor(c, stateDir, shown, writes), Mounts: mounts}, roots, mounts, nil
}

// startDigest is the workspace's digest as a stage starts. The last commit
// computed it, and when nothing has touched the workspace since (committed
// holds it until a stage takes it, and a restore clears it) that is taken
// instead of walking the whole tree again (issue 42). A project's
// workspace is the user's, who may edit it between loops: always digested.
func (r *runner) startDigest() (string, error) {
	d := r.committed
	r.committed = ""
	if d != "" && r.env.Project == nil {
		return d, nil
	}
	return r.digest()
}

func (r *runner) digest() (string, error) {
	defer r.clock.enter(runrecord.PhaseDigest)()
	return history.Digest(r.ws, r.env.exclude()...)
}

func (r *runner) copyWorkspace(dst string) error {
	return history.CopyTree(r.ws, dst, r.env.exclude()...)
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
	if err := history.SyncSnapshot(r.ws, kept, r.env.exclude()...); err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	return os.Rename(kept, dst)
}

// directView says whether a read-only stage of role is shown the workspace
// itself, read-only and as the role's (RoleView.WorkSource), instead of a
// hard-link snapshot, which costs a walk of both trees to bring up to
// date, and another for the hand-over (issue 42): on the host, where hoh
// builds the view. A container (an exchange, a role's own environment), a
// benchmark's fixed task paths (mounted from the working directory's host
// path) and a project (the user's files, not root's) keep the snapshot.
func (r *runner) directView(role runrecord.Role) bool {
	if r.env.Exchange != nil || r.env.RoleEnvironment != nil || r.env.Project != nil || !HostsViews(r.env.ForRole(role).Exec) {
		return false
	}
	_, fixed := r.env.Bench.(benchmark.AgentView)
	return !fixed
}

// directSource is the call's workSource for role: the workspace when its
// view is direct, else "".
func (r *runner) directSource(role runrecord.Role) string {
	if r.directView(role) {
		return r.ws
	}
	return ""
}

// viewOf places a read-only stage's view of the workspace at view: an
// empty directory the workspace is mounted on (directView), else a
// snapshot (snapshotTo). back undoes it, and may be called again.
func (r *runner) viewOf(role runrecord.Role, view string) (back func() error, err error) {
	os.RemoveAll(view)
	if r.directView(role) {
		return func() error { return os.RemoveAll(view) }, os.MkdirAll(view, 0o755)
	}
	if err := r.snapshotTo(view); err != nil {
		return func() error { return nil }, err
	}
	return func() error { return r.unsnapshot(view) }, nil
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
	return r.restoreTo(ref)
}

// restoreTo makes the workspace ref's tree; the digest the last commit
// left (committed) no longer describes it.
func (r *runner) restoreTo(ref string) error {
	r.committed = ""
	return r.repo.Restore(ref)
}

// scrubStageFiles keeps every secret hoh knows (the provider key, the
// CLIs' placeholder for it) out of the stage's folder (QA's media copies, a
// task view's scratch), as recordWorkspace does out of the workspace
// before it is committed and becomes a checkpoint. A hit is a recorded
// violation; the secret is redacted from every copy kept.
func (r *runner) scrubStageFiles(rec *runrecord.StageRecord) error {
	return r.scrub(rec, scrubbed{r.l.Stage(rec.Iteration, rec.Role), "the stage's files"})
}

// scrubbed is a tree a stage keeps, and how a violation names it.
type scrubbed struct{ root, what string }

func (r *runner) scrub(rec *runrecord.StageRecord, trees ...scrubbed) error {
	scan := r.scan()
	if scan == nil {
		return nil
	}
	for _, d := range trees {
		found, err := scan.Found(d.root)
		if err != nil {
			return fmt.Errorf("scrub %s: %w", d.what, err)
		}
		r.noteSecrets(rec, d, found)
	}
	return nil
}

// scan is the trial's secret scan, nil when hoh knows no secret.
func (r *runner) scan() *harness.SecretScan {
	if len(r.env.Secrets) == 0 {
		return nil
	}
	if r.secretScan == nil {
		r.secretScan = &harness.SecretScan{Secrets: r.env.Secrets}
	}
	return r.secretScan
}

// noteSecrets records the secrets a scan found (and redacted) in d as a
// violation.
func (r *runner) noteSecrets(rec *runrecord.StageRecord, d scrubbed, found []string) {
	if len(found) == 0 {
		return
	}
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
	return r.commitStageOf(rec, "")
}

// commitReadOnlyStage commits a Planner's or QA Tester's stage that left the
// workspace at digest unchanged (checkUnchanged found it so).
func (r *runner) commitReadOnlyStage(rec runrecord.StageRecord, unchanged string) error {
	return r.commitStageOf(rec, unchanged)
}

// commitStageOf commits rec's stage. unchanged, when set, is the digest
// the stage left the workspace at, the same it started from.
func (r *runner) commitStageOf(rec runrecord.StageRecord, unchanged string) error {
	leave := r.clock.enter(runrecord.PhaseCommit)
	defer leave()
	msg := fmt.Sprintf("iter %d: %s", rec.Iteration, rec.Role)
	if r.env.loop() != nil {
		msg = fmt.Sprintf("hoh loop %d: %s", rec.Iteration, rec.Role)
	}
	if rec.RoleFailure != "" {
		msg += " (failed: " + rec.RoleFailure + ")"
	}
	var kept history.Recorded
	var err error
	if n := len(r.st.stages); unchanged != "" && n > 0 && r.st.stages[n-1].Digest == unchanged {
		// The workspace holds what the last stage committed, byte for byte:
		// the oversized files, secrets and paths that stage's commit dealt
		// with are all it can hold, and the index is its tree. Walking the
		// tree three more times would find nothing (issue 42).
		rec.Digest = unchanged
		if err := r.scrubStageFiles(&rec); err != nil {
			return err
		}
		kept.Commit, err = r.repo.CommitIndex(msg)
	} else {
		kept, err = r.recordWorkspace(&rec, msg)
	}
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
	r.committed = rec.Digest
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

// recordWorkspace removes the oversized files and redacts the secrets the
// stage left, and records the workspace in the history. One walk does
// both and lists the tree for its digest (issue 42).
func (r *runner) recordWorkspace(rec *runrecord.StageRecord, msg string) (history.Recorded, error) {
	limit := r.env.MaxFileBytes
	if limit <= 0 {
		limit = DefaultMaxFileBytes
	}
	scan := r.scan()
	var refused, leaked []string
	listing, err := history.List(r.ws, r.env.exclude(), func(rel string, info fs.FileInfo, inArtifact bool) (bool, error) {
		if !info.Mode().IsRegular() {
			return true, nil
		}
		if inArtifact && info.Size() > limit {
			refused = append(refused, oversized(rel, info, limit))
			return false, os.Remove(filepath.Join(r.ws, rel))
		}
		if scan == nil {
			return true, nil
		}
		hit, err := scan.File(r.ws, rel, info)
		if hit {
			leaked = append(leaked, rel)
		}
		if err != nil {
			return false, fmt.Errorf("scrub the artifact: %w", err)
		}
		return true, nil
	})
	if err != nil {
		return history.Recorded{}, err
	}
	for _, v := range refused {
		v = fmt.Sprintf("iteration %d: the %s left %s; it was removed and is not part of the artifact", rec.Iteration, rec.Role, v)
		r.env.Logf("%s: protocol violation: %s", r.spec.Key, v)
		rec.Violations = append(rec.Violations, v)
	}
	r.noteSecrets(rec, scrubbed{r.ws, "the artifact"}, leaked)
	if err := r.scrubStageFiles(rec); err != nil {
		return history.Recorded{}, err
	}
	kept, err := r.repo.Record(msg)
	if err != nil || len(leaked) > 0 {
		return kept, err // a redaction changed what was listed: commitStageOf digests again
	}
	// What was removed was dropped from the listing; nothing else changed.
	rec.Digest, err = listing.Digest()
	return kept, err
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
	if err := r.restoreTo("HEAD"); err != nil {
		return nil, err
	}
	return []string{v}, nil
}

// DefaultMaxFileBytes is the default Env.MaxFileBytes.
const DefaultMaxFileBytes = 1 << 30

// oversized says what a regular file above the artifact's per-file limit
// was.
func oversized(rel string, info fs.FileInfo, limit int64) string {
	var blocks int64
	if st, ok := info.Sys().(*syscall.Stat_t); ok {
		blocks = st.Blocks * 512
	}
	return fmt.Sprintf("%s of %d bytes (%d allocated), above the artifact's limit of %d bytes per file", rel, info.Size(), blocks, limit)
}
