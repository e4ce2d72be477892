package viewer

// The page of a multi-step trial (Harbor's [[steps]], docs/trial.md): its
// steps in order, each with its gate, its checkpoints' scores and its own
// trial's timeline and invocations linking into its records, then the
// task's reward composed from the steps. Each step that started also gets
// a whole trial page of its own (renderTrial), linked from its section.

import (
	"fmt"
	"os"
	"path"
	"path/filepath"
	"sort"

	"github.com/hoh-research/hoh/runrecord"
)

type stepsPage struct {
	Ctx            trialContext
	Assets         string
	Title          string
	Spec           runrecord.TrialSpec
	Status, Reason string
	Where          string // while running: the step and stage it is at
	Ended          bool   // it has a summary or the runner gave up
	Harness        string
	Refresh        int
	Steps          []stepView
	Roles          []roleTokens // over the steps
	Total          runrecord.Usage
	Violations     []string
	Eval           evalView // the task's reward, composed from the steps
	Files          []fileLink
	Generated      string
}

type stepView struct {
	N                 int
	Name, Anchor      string
	Href              string // the step's own page ("" when it did not start)
	Outcome, Class    string // how the step went, and its badge's class
	Gate              string
	StartFailure      string
	Checkpoint        int // the checkpoint it handed on
	Metrics           []metricView
	EvalError         string
	Trial             *trialPage // its own trial (nil when no agent started)
	Files             []fileLink
	ActivityIfRunning string
}

// stepPages are the jobs of the whole pages of the steps of the
// multi-step trial of parent: <parent page without .html>/NN-<name>.html.
func stepPages(parent trialJob, fpSuffix string) []trialJob {
	var out []trialJob
	stem := parent.page[:len(parent.page)-len(".html")]
	if parent.page == "index.html" { // hoh view of the trial directory itself
		stem = runrecord.StepsDir
	}
	for i, s := range (runrecord.TrialLayout{Dir: parent.dir}).Steps() {
		if !exists(s.Spec()) {
			continue // no agent ran: its section says why
		}
		base := filepath.Base(s.Dir)
		page := stem + "/" + base + ".html"
		ctx := parent.ctx
		ctx.Page = filepath.Join(ctx.Report, filepath.FromSlash(page))
		ctx.ToRun, ctx.Assets = "../"+ctx.ToRun, "../"+ctx.Assets
		ctx.TrialRel = path.Join(ctx.TrialRel, runrecord.StepsDir, base)
		ctx.Index, ctx.Experiment = "../"+path.Base(parent.page), "all steps of the trial"
		ctx.Step = fmt.Sprintf("step %d %s", i+1, runrecord.StepName(s))
		ctx.Replacements, ctx.State, ctx.Reason = nil, "", ""
		out = append(out, trialJob{dir: s.Dir, page: page, fp: fingerprint(trialFingerprintFiles(s.Dir)) + fpSuffix, ctx: ctx})
	}
	return out
}

// stepPageHref is the URL of step dir rel's own page from the steps page.
func stepPageHref(page, rel string) string {
	stem := path.Base(page)
	stem = stem[:len(stem)-len(".html")]
	if stem == "index" {
		return rel + ".html" // steps/NN-<name>.html
	}
	return stem + "/" + path.Base(rel) + ".html"
}

// buildStepsPage renders the page of a multi-step trial.
func buildStepsPage(j trialJob, opts Options) ([]string, error) {
	sr, err := readSteps(j.dir, opts.MaxDiffBytes)
	if err != nil {
		return nil, err
	}
	ctx := j.ctx
	b := &stepsBuild{ctx: ctx, opts: opts, p: newStepsPage(sr, ctx, opts), byRole: map[runrecord.Role]*roleTokens{}}
	p := b.p
	for i, st := range sr.Steps {
		p.Steps = append(p.Steps, b.step(i, st, len(sr.Steps)))
	}
	for _, rt := range b.byRole {
		p.Roles = append(p.Roles, *rt)
	}
	sort.Slice(p.Roles, func(i, j int) bool { return p.Roles[i].Role.Rank() < p.Roles[j].Role.Rank() })
	b.fillEval(sr)
	for _, f := range []struct{ name, label string }{
		{runrecord.StepsFile, runrecord.StepsFile + " (the steps)"}, {runrecord.SummaryFile, runrecord.SummaryFile},
		{runrecord.RunnerFailureFile, runrecord.RunnerFailureFile},
	} {
		if exists(filepath.Join(sr.Dir, f.name)) {
			p.Files = append(p.Files, b.link(f.name, f.label))
		}
	}
	if _, err := renderPage(ctx.Page, "steps.html", p); err != nil {
		return nil, err
	}
	return b.links, nil
}

// stepsBuild carries buildStepsPage's state between its steps.
type stepsBuild struct {
	ctx    trialContext
	opts   Options
	p      *stepsPage
	links  []string                       // every record file the page links
	byRole map[runrecord.Role]*roleTokens // tokens by role over the steps
}

// link links a file of the trial, relative to its directory, recording it
// so the manifest lists the page's links.
func (b *stepsBuild) link(relToTrial, label string) fileLink {
	p := path.Join(b.ctx.TrialRel, filepath.ToSlash(relToTrial))
	b.links = append(b.links, p)
	return fileLink{Label: label, Href: b.ctx.ToRun + escapePath(p)}
}

// newStepsPage starts the page with the trial's title and status.
func newStepsPage(sr *stepsRecords, ctx trialContext, opts Options) *stepsPage {
	p := &stepsPage{Ctx: ctx, Assets: ctx.Assets, Spec: sr.Spec, Generated: opts.Now().UTC().Format("2006-01-02 15:04:05 UTC")}
	p.Title = fmt.Sprintf("%s · %s · %s · rep %d · %d steps", sr.Spec.Task, sr.Spec.Config, sr.Spec.Arm, max(sr.Spec.Rep, 1), len(sr.Steps))
	switch {
	case sr.Summary != nil:
		p.Status, p.Reason = string(sr.Summary.Status), sr.Summary.Reason
		p.Harness = sr.Summary.Harness + " " + sr.Summary.Version
	case sr.Failure != nil:
		p.Status, p.Reason = "failed (the runner gave up)", sr.Failure.Reason
	case ctx.State != "":
		p.Status, p.Reason = ctx.State, ctx.Reason
	default:
		p.Status = "running or interrupted (no summary yet)"
	}
	p.Ended = sr.Summary != nil || sr.Failure != nil
	if ctx.Live && !p.Ended {
		p.Refresh = 10
	}
	return p
}

// step is the section of step i of n: its outcome, metrics, activity while
// running and, when an agent started, its own trial.
func (b *stepsBuild) step(i int, st stepRecords, n int) stepView {
	p := b.p
	v := stepView{N: i + 1, Name: st.Name, Anchor: fmt.Sprintf("step-%d", i+1), StartFailure: st.StartFailure,
		Checkpoint: st.Checkpoint, EvalError: st.EvalError}
	v.Outcome, v.Class, v.Gate = stepOutcome(st.StepRecord, i == n-1, p.Ended)
	for _, m := range sortedKeys(st.Metrics) {
		v.Metrics = append(v.Metrics, metricView{m, formatValue(st.Metrics[m])})
	}
	if st.Pending && st.Rel != "" && !p.Ended {
		v.ActivityIfRunning = st.Activity.String()
		if p.Where == "" {
			a := st.Activity
			a.Step, a.Steps, a.StepName = i+1, n, st.Name
			p.Where = a.String()
		}
	}
	if st.Rel != "" && st.StartFailure != "" {
		v.Files = append(v.Files, b.link(path.Join(st.Rel, runrecord.StepStartFailure), runrecord.StepStartFailure))
	}
	if st.Loop != nil {
		b.stepTrial(&v, st)
	}
	return v
}

// stepTrial shows the step's own trial in its section, linking into the
// step's own page, and adds its tokens and violations to the trial's.
func (b *stepsBuild) stepTrial(v *stepView, st stepRecords) {
	p, ctx := b.p, b.ctx
	sctx := ctx
	sctx.TrialRel = path.Join(ctx.TrialRel, st.Rel)
	sctx.Unit, sctx.LoopHref = "iteration", ""
	tp, ls := trialView(st.Loop, sctx, b.opts)
	b.links = append(b.links, ls...)
	v.Trial, v.Files = tp, append(v.Files, tp.Files...)
	v.Href = stepPageHref(ctx.Page, st.Rel)
	for r := range tp.Timeline {
		tp.Timeline[r].Href = v.Href + tp.Timeline[r].Href
	}
	for _, rt := range tp.Roles {
		if b.byRole[rt.Role] == nil {
			b.byRole[rt.Role] = &roleTokens{Role: rt.Role}
		}
		b.byRole[rt.Role].Invocations += rt.Invocations
		b.byRole[rt.Role].Usage = b.byRole[rt.Role].Usage.Add(rt.Usage)
	}
	p.Total = p.Total.Add(tp.Total)
	for _, vi := range tp.Violations {
		p.Violations = append(p.Violations, "step "+st.Name+": "+vi)
	}
}

// fillEval composes the task's reward from the steps; the composed
// metrics have no cp-N.json, so the summary supplies them.
func (b *stepsBuild) fillEval(sr *stepsRecords) {
	p := b.p
	p.Eval = evaluation(&loopRecords{Dir: sr.Dir, Summary: sr.Summary, Scores: sr.Scores}, b.link)
	if sr.Summary != nil { // the composed metrics have no cp-N.json: the summary has them
		for _, cp := range sr.Summary.Checkpoints {
			for i := range p.Eval.Checkpoints {
				if cv := &p.Eval.Checkpoints[i]; cv.Step == cp.Step && len(cv.Metrics) == 0 {
					for _, m := range sortedKeys(cp.Metrics) {
						cv.Metrics = append(cv.Metrics, metricView{m, formatValue(cp.Metrics[m])})
					}
				}
			}
		}
	}
}

// stepOutcome says how a step went, the class of its badge and what its
// gate decided; ended: the trial has ended (a step still pending then is
// where the runner gave up).
func stepOutcome(r runrecord.StepRecord, last, ended bool) (outcome, class, gate string) {
	switch {
	case r.Pending && ended && r.Dir != "":
		return "did not finish", "fail", "the runner gave up on the trial in this step"
	case r.Pending && ended:
		return "not run", "missing", ""
	case r.Pending && r.Dir != "":
		return "running", "running", "not evaluated yet"
	case r.Pending:
		return "not started yet", "missing", ""
	case r.NotRun:
		return "not run", "missing", "an earlier step's gate stopped the sequence"
	case r.StartFailure != "":
		return "did not start", "fail", "its start failed, so no later step ran"
	case r.Stopped != "":
		return fmt.Sprintf("handed on checkpoint %d", r.Checkpoint), "evalfail", "stopped the sequence: " + r.Stopped
	case last:
		return fmt.Sprintf("handed on checkpoint %d", r.Checkpoint), "ok", "passed (the last step)"
	default:
		return fmt.Sprintf("handed on checkpoint %d", r.Checkpoint), "ok", "passed: the next step ran"
	}
}

func sortedKeys(m map[string]float64) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func exists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}
