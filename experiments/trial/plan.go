package trial

// The Planner's stage: D_t from S, A_{t-1} and E_{t-1}.

import (
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/hoh-research/hoh/adapters/harness"
	"github.com/hoh-research/hoh/experiments/conditions"
	"github.com/hoh-research/hoh/experiments/roles"
	"github.com/hoh-research/hoh/runrecord"
)

func (r *runner) planStage(ctx context.Context, t int) error {
	if r.cond.Planning == conditions.PlanOnce && t > 1 {
		return r.reusePlan(t)
	}
	before, err := r.startDigest()
	if err != nil {
		return err
	}
	// The workspace itself shown read-only at view, or a hard-link
	// snapshot of it (viewOf); a write through either changes the
	// workspace, which checkUnchanged catches and undoes.
	view := r.stage(t, runrecord.RolePlanner).Artifact()
	back, err := r.viewOf(runrecord.RolePlanner, view)
	if err != nil {
		return err
	}
	defer back()
	call, in, err := r.planInputs(t, view)
	if err != nil {
		return err
	}
	defer in.done()
	call.workSource = r.directSource(runrecord.RolePlanner)
	var plan runrecord.Plan
	call.parse = func(msg string) []string { p, errs := roles.ParsePlan(msg); plan = p; return errs }
	rep, err := r.call(ctx, call)
	if err != nil {
		return err
	}
	// The view goes back before the commit scans the stage's folder: a
	// snapshot's 20,000 links to the workspace's files are the artifact's,
	// scanned as such (the deferred call then does nothing).
	if err := back(); err != nil {
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
	if lc := r.env.loop(); lc != nil && lc.PlannerIssues != nil {
		if slots.Issues, err = lc.PlannerIssues(t); err != nil {
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
	if lc := r.env.loop(); lc != nil {
		for _, f := range lc.PlannerFiles {
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
	unchanged := before
	if len(rec.Violations) > 0 {
		unchanged = "" // changed, and undone from the history
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
	return r.commitReadOnlyStage(rec, unchanged)
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
