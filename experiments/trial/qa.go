package trial

// The QA Tester's stage: E_t from the candidate A_t and the runtime checks.

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/hoh-research/hoh/adapters/harness"
	"github.com/hoh-research/hoh/adapters/sandbox"
	"github.com/hoh-research/hoh/experiments/history"
	"github.com/hoh-research/hoh/experiments/roles"
	"github.com/hoh-research/hoh/internal/agentpath"
	"github.com/hoh-research/hoh/runrecord"
)

func (r *runner) qaStage(ctx context.Context, t int) error {
	digest, err := r.startDigest()
	if err != nil {
		return err
	}
	checks, err := r.runtimeChecks(ctx, t)
	if err != nil {
		return err
	}
	// The candidate is the workspace itself shown read-only, or a
	// hard-link snapshot of it (viewOf): a write through either changes
	// the workspace, which checkUnchanged catches and undoes.
	candidate := r.stage(t, runrecord.RoleQA).Candidate()
	direct := r.directView(runrecord.RoleQA)
	if _, err := r.viewOf(runrecord.RoleQA, candidate); err != nil {
		return err
	}
	// The next Developer writes the workspace in place, so the snapshot is
	// not kept (pruneCandidate): its artifact is the checkpoint in the
	// history, its digest in E_t; only the media E_t cites are kept, as
	// copies of their own.
	var report runrecord.QAReport
	call, in, err := r.qaInputs(ctx, t, digest, candidate, checks, &report)
	if err != nil {
		return err
	}
	defer in.done()
	// The candidate is the working directory, read-only in the view.
	call.workSource = r.directSource(runrecord.RoleQA)
	rep, err := r.call(ctx, call)
	if err != nil {
		return err
	}
	switch {
	case r.env.Exchange != nil:
		// Paths QA cites under its view of the candidate name the retained copy.
		rep.mounts = in.mounts()
	case direct:
		// ... or the workspace, which was mounted there.
		rep.mounts = append(rep.mounts, sandbox.Mount{Source: r.ws, Target: candidate})
	}
	if err := in.done(); err != nil {
		return err
	}
	rec := runrecord.StageRecord{Iteration: t, Role: runrecord.RoleQA, Invocations: rep.invs, Digest: digest}
	if rec.Violations, err = r.checkUnchanged(digest, runrecord.RoleQA, t); err != nil {
		return err
	}
	unchanged := digest
	if len(rec.Violations) > 0 {
		unchanged = "" // changed, and undone from the history
	}
	ev, err := r.judgeQA(ctx, t, &rec, candidate, rep, report, direct)
	if err != nil {
		return err
	}
	if direct {
		// The media E_t cites in the workspace are kept as copies at the
		// candidate's place (the next Developer writes the workspace); on
		// the host that place was only the mount's, whatever is there now
		// is not what QA saw.
		if err := os.RemoveAll(candidate); err != nil {
			return err
		}
		if err := keepCitedMedia(ctx, r.l.Dir, r.ws, candidate, ev.Media); err != nil {
			return err
		}
	}
	if err := runrecord.WriteJSON(r.stage(t, runrecord.RoleQA).Evidence(), ev); err != nil {
		return err
	}
	// Pruned before the commit scans the stage's folder, which then holds
	// the media copies E_t cites, not 20,000 links to the artifact's files.
	if direct {
		_ = os.Remove(candidate) // when no media copy is there
	} else if err := pruneCandidate(ctx, r.l.Dir, candidate, ev.Media, r.unsnapshot); err != nil {
		return err
	}
	return r.commitReadOnlyStage(rec, unchanged)
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
	if lc := r.env.loop(); lc != nil && lc.QAIssues != nil {
		if slots.Issues, err = lc.QAIssues(t); err != nil {
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
func (r *runner) judgeQA(ctx context.Context, t int, rec *runrecord.StageRecord, candidate string, rep reply, report runrecord.QAReport, direct bool) (runrecord.Evidence, error) {
	digest := rec.Digest
	// A direct view's candidate is the workspace: checkUnchanged found (and
	// undid) any change, its only violation so far.
	candidateChanged, err := len(rec.Violations) > 0, error(nil)
	if !direct {
		candidateChanged, err = r.checkCandidate(t, rec, candidate)
	}
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
	notes := checkMedia(ctx, &report, candidate, rep.mounts)
	// Verified claims must rest on commands this QA invocation's CLI
	// reported executing and on what it recorded them printing (its own
	// event stream), not on its say-so.
	ev := roles.Normalise(report, digest, executions(rep.tools))
	ev.Notes = append(ev.Notes, notes...)
	if candidateChanged {
		ev.Notes = append(ev.Notes, "the QA Tester changed the candidate it assessed: every verified claim was recorded as a gap")
	}
	ev.Media, err = mediaManifest(ctx, r.l.Dir, filepath.Join(r.stageDir(t, runrecord.RoleQA), ViewScratch), candidate, &ev, rep.mounts)
	return ev, err
}

// checkCandidate records in rec what the QA Tester changed in the frozen
// candidate (qaStage checked the workspace). The candidate QA
// assessed must be the frozen one: a change (where no read-only view could
// be made, or through a path it did not cover) is a violation, its verified
// claims are not about the candidate, and the retained copy is put back to
// the assessed artifact.
func (r *runner) checkCandidate(t int, rec *runrecord.StageRecord, candidate string) (changed bool, err error) {
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

// keepCitedMedia copies the media in media that lie in the workspace
// (ws, shown at candidate) to the same place under candidate, read as
// agentpath reads them (regular files only), and points each item there.
func keepCitedMedia(ctx context.Context, trialDir, ws, candidate string, media []runrecord.MediaItem) error {
	view := agentpath.View{Roots: []agentpath.Root{{View: candidate, Host: ws}}}
	for i, m := range media {
		rel, err := filepath.Rel(ws, filepath.Join(trialDir, m.Path))
		if err != nil || rel == "." || strings.HasPrefix(rel, "..") {
			continue
		}
		dst := filepath.Join(candidate, rel)
		if _, err := view.CopyFile(ctx, rel, candidate, dst); err != nil {
			if agentpath.IsRefusal(err) {
				continue
			}
			return err
		}
		if p, err := filepath.Rel(trialDir, dst); err == nil {
			media[i].Path = p
		}
	}
	return nil
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
