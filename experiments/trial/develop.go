package trial

// The Developer's stage: A_t from S, D_t and the workspace.

import (
	"context"
	"fmt"
	"strings"

	"github.com/hoh-research/hoh/adapters/harness"
	"github.com/hoh-research/hoh/experiments/conditions"
	"github.com/hoh-research/hoh/experiments/roles"
	"github.com/hoh-research/hoh/runrecord"
)

func (r *runner) developStage(ctx context.Context, t int) error {
	rec := runrecord.StageRecord{Iteration: t, Role: runrecord.RoleDeveloper}
	if !r.cond.WarmStart && t > 1 {
		// w/o Warm-Start: every Developer pass starts from A_0.
		if err := r.restoreTo("cp-0"); err != nil {
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
	if rec.StartDigest, err = r.startDigest(); err != nil {
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
