package runner

// Multi-step tasks (Harbor's [[steps]]; docs/trial.md, "Multi-step
// tasks"): each step is a trial of its own under the trial's directory
// (runrecord.TrialLayout.Step), run under the trial's condition on the
// artifact and environment the previous step handed on, its checkpoints
// verified by the step's verifier once it ends; the step's gate decides
// whether the next one runs, and the trial's record is the task's reward
// as the benchmark aggregates it, with each step's as metrics of its own.

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"time"

	"github.com/hoh-research/hoh/adapters/benchmark"
	"github.com/hoh-research/hoh/experiments/conditions"
	"github.com/hoh-research/hoh/experiments/environment"
	"github.com/hoh-research/hoh/experiments/history"
	"github.com/hoh-research/hoh/experiments/plan"
	"github.com/hoh-research/hoh/experiments/trial"
	"github.com/hoh-research/hoh/runrecord"
)

// stepsOf is the steps of t's task, nil for a one-step task.
func (r *run) stepsOf(t plan.Trial) ([]benchmark.Step, error) {
	s, ok := r.plan.Bench.(benchmark.Stepped)
	if !ok {
		return nil, nil
	}
	steps, err := s.Steps(t.Task)
	if err != nil {
		return nil, fmt.Errorf("task %s: its steps: %w", t.Task.ID, err)
	}
	return steps, nil
}

// stepRun is how one step of a multi-step trial went.
type stepRun struct {
	rec     runrecord.StepRecord
	l       runrecord.TrialLayout // its trial directory
	label   string                // the same, relative to the run directory
	summary *runrecord.Summary    // nil: its agent did not run
	// eval is the evaluation of the artifact it handed on (Error set when
	// there is none: a failed start, a verifier without a reward).
	eval runrecord.Evaluation
}

// attemptSteps runs one attempt of a multi-step trial: the steps in order,
// each resumed where it stopped (a finished one is read back), until one's
// gate stops the sequence; then the trial's records.
func (r *run) attemptSteps(ctx context.Context, t plan.Trial, rt *configRuntime, pol trialPolicy, steps []benchmark.Step) (*runrecord.Summary, error) {
	cond, err := conditions.Of(t.Arm)
	if err != nil {
		return nil, fmt.Errorf("trial %s: %w", t.Key, err)
	}
	var runs []stepRun
	var prev *stepRun
	l := runrecord.TrialLayout{Dir: r.trialDir(t)}
	for i, st := range steps {
		// Readers of a running trial (hoh status, view, show) see which
		// step of how many it is in.
		if err := writePendingSteps(l, runs, steps); err != nil {
			return nil, err
		}
		r.progress.Step(t, i+1, len(steps), st.Name)
		sr, err := r.runStep(ctx, t, rt, pol, cond, i, st, prev)
		if err != nil {
			return nil, err
		}
		if sr.rec.StartFailure == "" {
			sr.rec.Stopped = st.Gate(sr.eval)
		}
		if i == 0 && sr.summary == nil {
			// No step ran an agent: no model turn, no score.
			return nil, fmt.Errorf("trial %s: step %s did not start, so no agent ran: %s", t.Key, st.Name, sr.rec.StartFailure)
		}
		runs = append(runs, sr)
		if sr.rec.StartFailure != "" || sr.rec.Stopped != "" {
			break
		}
		prev = &runs[len(runs)-1]
	}
	for _, st := range steps[len(runs):] {
		runs = append(runs, stepRun{rec: runrecord.StepRecord{Name: st.Name, NotRun: true}})
	}
	return r.finishSteps(ctx, t, cond, runs)
}

// writePendingSteps writes steps.json of a running trial: the steps done,
// the one starting (the next) and the rest, pending.
func writePendingSteps(l runrecord.TrialLayout, done []stepRun, steps []benchmark.Step) error {
	recs := make([]runrecord.StepRecord, len(steps))
	for i, st := range steps {
		if i < len(done) {
			recs[i] = done[i].rec
			continue
		}
		recs[i] = runrecord.StepRecord{Name: st.Name, Pending: true}
		if i == len(done) {
			recs[i].Dir = filepath.Join(runrecord.StepsDir, filepath.Base(l.Step(i, st.Name).Dir))
		}
	}
	return runrecord.WriteJSON(l.StepsRecord(), recs)
}

// runStep runs (or resumes, or reads back) step i of t, started from what
// prev handed on (nil: the task's start).
func (r *run) runStep(ctx context.Context, t plan.Trial, rt *configRuntime, pol trialPolicy, cond conditions.Condition, i int, st benchmark.Step, prev *stepRun) (stepRun, error) {
	l := runrecord.TrialLayout{Dir: r.trialDir(t)}.Step(i, st.Name)
	label := filepath.Join(t.Dir, runrecord.StepsDir, filepath.Base(l.Dir))
	sr := stepRun{l: l, label: label, rec: runrecord.StepRecord{Name: st.Name, Dir: filepath.Join(runrecord.StepsDir, filepath.Base(l.Dir))}}
	spec := t.Spec()
	spec.Key = t.Key + "/" + filepath.Base(l.Dir)
	var f runrecord.Failure
	if runrecord.ReadJSON(l.StartFailure(), &f) == nil {
		sr.rec.StartFailure = f.Reason
		sr.eval = runrecord.Evaluation{Error: f.Reason}
		return sr, nil
	}
	var done runrecord.Summary
	if runrecord.ReadJSON(l.Summary(), &done) == nil && done.Spec == spec {
		return sr.finished(&done), nil
	}
	u := unit{dir: l.Dir, label: label, spec: spec, task: st.Task, bench: st.Bench, handOn: true, withoutScores: true}
	if r.exp.Timeouts.Developer == 0 {
		u.developerTimeout = st.Task.Limits.AgentTimeout // the step's agent timeout
	}
	if cond.Planning != conditions.NoPlan {
		u.task.Spec = st.Context + st.Task.Spec // the Planner sees the step list
	}
	if prev != nil {
		img, err := handedOnImage(ctx, r, prev)
		if err != nil {
			return sr, &trial.InfraError{Stage: "step " + st.Name, Evidence: err.Error()}
		}
		u.image = img
	}
	if _, err := os.Stat(l.Spec()); err != nil {
		failure, err := r.startStep(ctx, t, st, prev, &u)
		if err != nil || failure != "" {
			sr.rec.StartFailure, sr.eval = failure, runrecord.Evaluation{Error: failure}
			return sr, err
		}
	}
	s, err := r.attemptUnit(ctx, u, rt, pol)
	os.RemoveAll(stepStartDir(l))
	if err != nil {
		return sr, err
	}
	return sr.finished(s), nil
}

// finished fills sr from its step's summary: the last checkpoint is the
// artifact the step handed on.
func (sr stepRun) finished(s *runrecord.Summary) stepRun {
	sr.summary = s
	sr.eval = runrecord.Evaluation{Error: "the step produced no checkpoint"}
	if n := len(s.Checkpoints); n > 0 {
		cp := s.Checkpoints[n-1]
		sr.rec.Checkpoint, sr.rec.Metrics, sr.rec.EvalError = cp.Step, cp.Metrics, cp.EvalError
		sr.eval = runrecord.Evaluation{Metrics: cp.Metrics, Error: cp.EvalError}
	}
	return sr
}

func stepStartDir(l runrecord.TrialLayout) string { return filepath.Join(l.Private(), "step-start") }

// startStep prepares a step that has not started: its workspace is the
// one prev handed on (the task's A_0 for the first step), which the step's
// start changes (its uploads, its setup script) and whose image it
// commits; u then starts from there. A failure is the task's own.
func (r *run) startStep(ctx context.Context, t plan.Trial, st benchmark.Step, prev *stepRun, u *unit) (string, error) {
	ws := stepStartDir(runrecord.TrialLayout{Dir: u.dir})
	if err := os.RemoveAll(ws); err != nil {
		return "", err
	}
	if err := os.MkdirAll(ws, 0o700); err != nil {
		return "", err
	}
	if prev == nil {
		if err := r.plan.Bench.InitialWorkspace(ctx, t.Task, ws); err != nil {
			return "", &trial.InfraError{Stage: "step " + st.Name + " start", Evidence: err.Error()}
		}
	} else if err := handedOnWorkspace(prev, ws); err != nil {
		return "", err
	}
	start, err := st.Start(ctx, u.image, ws, environment.CheckpointLabels(u.label, 0))
	if err != nil {
		if ctx.Err() != nil {
			return "", err
		}
		return "", &trial.InfraError{Stage: "step " + st.Name + " start", Evidence: err.Error()}
	}
	if start.Failure != "" {
		return start.Failure, runrecord.WriteJSON(runrecord.TrialLayout{Dir: u.dir}.StartFailure(), runrecord.Failure{Key: u.spec.Key, Reason: start.Failure})
	}
	if start.Image != "" {
		u.image = start.Image
	}
	u.bench = start.Bench
	return "", nil
}

// handedOnWorkspace writes the artifact prev handed on (its last
// checkpoint) into ws.
func handedOnWorkspace(prev *stepRun, ws string) error {
	repo, err := history.Open(prev.l.GitDir(), prev.l.Workspace())
	if err != nil {
		return err
	}
	return repo.Export(prev.summary.Checkpoints[len(prev.summary.Checkpoints)-1].Commit, ws)
}

// handedOnImage is the environment prev's last checkpoint committed, ""
// when it is gone (a killed run's are removed on resume: the next step
// then starts from the task's image with the handed-on workspace).
func handedOnImage(ctx context.Context, r *run, prev *stepRun) (string, error) {
	if r.docker == nil || prev.summary == nil {
		return "", nil
	}
	ims, err := environment.CheckpointImages(ctx, r.docker.client, prev.label, prev.rec.Checkpoint)
	if err != nil || len(ims) == 0 {
		return "", err
	}
	return ims[0].ID, nil
}

// forgetStepImages removes the environments the steps handed on.
func (r *run) forgetStepImages(ctx context.Context, runs []stepRun) {
	if r.docker == nil {
		return
	}
	for _, sr := range runs {
		if sr.label == "" {
			continue
		}
		ims, _ := environment.CheckpointImages(ctx, r.docker.client, sr.label, -1)
		for _, im := range ims {
			if err := r.docker.client.RemoveImage(ctx, im.ID); err != nil {
				r.progress.Logf("warning: removing step image %s: %v", im.ID, err)
			}
		}
	}
}

// finishSteps writes the trial's records (writeStepRecords) and removes
// the environments its steps handed on.
func (r *run) finishSteps(ctx context.Context, t plan.Trial, cond conditions.Condition, runs []stepRun) (*runrecord.Summary, error) {
	var price *runrecord.Price
	if p, ok := r.exp.PriceOf(t.Config); ok {
		price = &p
	}
	s, err := writeStepRecords(runrecord.TrialLayout{Dir: r.trialDir(t)}, t, cond, runs, r.plan.Bench.(benchmark.Stepped), price, time.Now().UTC())
	if err == nil {
		r.forgetStepImages(ctx, runs)
	}
	return s, err
}

// writeStepRecords writes a multi-step trial's records in l from its
// steps: steps.json, then at the trial's checkpoint the task's reward as
// the benchmark aggregates the steps' (Harbor's
// multi_step_reward_strategy) and each step's metrics as
// step.<name>.<metric> (scores.csv), and summary.json last.
func writeStepRecords(l runrecord.TrialLayout, t plan.Trial, cond conditions.Condition, runs []stepRun, stepped benchmark.Stepped, price *runrecord.Price, finished time.Time) (*runrecord.Summary, error) {
	s := &runrecord.Summary{Spec: t.Spec(), Status: runrecord.StatusCompleted, ByRole: map[runrecord.Role]runrecord.Usage{}, ByIteration: map[int]runrecord.Usage{}}
	cp := runrecord.Checkpoint{Step: t.Arm.Checkpoint, Metrics: map[string]float64{}}
	var evs []runrecord.Evaluation
	recs := make([]runrecord.StepRecord, len(runs))
	var usage runrecord.Usage
	for i, sr := range runs {
		recs[i] = sr.rec
		if sr.rec.NotRun {
			continue
		}
		evs = append(evs, sr.eval)
		if sr.summary != nil {
			addStep(s, &cp, sr)
			u, _ := runrecord.LedgerUsage(sr.l.Usage())
			usage = usage.Add(u)
		}
	}
	agg := stepped.StepsReward(t.Task, evs)
	for k, v := range agg.Metrics {
		cp.Metrics[k] = v
	}
	cp.EvalError = agg.Error
	if agg.Error != "" && s.Status == runrecord.StatusCompleted {
		s.Status, s.Reason = runrecord.StatusEvaluationFailed, fmt.Sprintf("checkpoint %d: %s", cp.Step, agg.Error)
	}
	s.Checkpoints = []runrecord.Checkpoint{cp}
	if err := runrecord.WriteJSON(l.StepsRecord(), recs); err != nil {
		return nil, err
	}
	if err := runrecord.WriteScores(l.Scores(), stepRows(t, cond, cp, usage, price)); err != nil {
		return nil, err
	}
	s.Finished = finished
	return s, runrecord.WriteJSON(l.Summary(), s)
}

// addStep adds a step's usage, violations, role failures, status and last
// checkpoint (tokens, metrics as step.<name>.<metric>) to the trial's.
func addStep(s *runrecord.Summary, cp *runrecord.Checkpoint, sr stepRun) {
	ss, name := sr.summary, sr.rec.Name
	s.Harness, s.Version = ss.Harness, ss.Version
	if len(ss.Team) > 0 {
		s.Team = ss.Team
	}
	s.Usage = s.Usage.Add(ss.Usage)
	for role, u := range ss.ByRole {
		s.ByRole[role] = s.ByRole[role].Add(u)
	}
	for it, u := range ss.ByIteration {
		s.ByIteration[it] = s.ByIteration[it].Add(u)
	}
	for _, v := range ss.Violations {
		s.Violations = append(s.Violations, "step "+name+": "+v)
	}
	for _, f := range ss.RoleFailures {
		s.RoleFailures = append(s.RoleFailures, "step "+name+": "+f)
	}
	if ss.Status != runrecord.StatusCompleted && s.Status == runrecord.StatusCompleted {
		s.Status, s.Reason = ss.Status, "step "+name+": "+ss.Reason
	}
	if n := len(ss.Checkpoints); n > 0 {
		last := ss.Checkpoints[n-1]
		cp.Tokens += last.Tokens
		cp.Digest = last.Digest
		for k, v := range last.Metrics {
			cp.Metrics["step."+name+"."+k] = v
		}
	}
}

// stepRows are the trial's score rows: its one checkpoint, reported as its
// arm, priced with the steps' ledgers.
func stepRows(t plan.Trial, cond conditions.Condition, cp runrecord.Checkpoint, usage runrecord.Usage, price *runrecord.Price) []runrecord.Row {
	names := make([]string, 0, len(cp.Metrics))
	for m := range cp.Metrics {
		names = append(names, m)
	}
	sort.Strings(names)
	row := runrecord.Row{Benchmark: t.Task.Benchmark, Config: t.Config, Condition: cond.ReportedAs(cp.Step),
		Checkpoint: cp.Step, Task: t.Task.ID, Family: t.Task.Family, Group: t.Task.Group, Category: t.Task.Category,
		Tokens: float64(cp.Tokens), Rep: max(t.Rep, 1), Source: t.Key}
	if price != nil {
		row.CostUSD = price.Cost(usage)
	}
	rows := make([]runrecord.Row, len(names))
	for i, m := range names {
		rows[i] = row
		rows[i].Metric, rows[i].Value = m, cp.Metrics[m]
	}
	return rows
}
