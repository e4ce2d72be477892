package viewer

import (
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/hoh-research/hoh/runrecord"
)

// trialContext is what a trial page knows of its surroundings.
type trialContext struct {
	Report, Page       string // absolute paths of the report and this page
	ToRun              string // relative URL from the page to the run directory
	TrialRel           string // the trial directory, relative to the run directory
	Index              string // URL of the experiment (or project) page
	Notice, Experiment string
	Replacements       []runrecord.Replacement
	Live               bool
	State, Reason      string // the runner's view (failed, running, ...)
	Unit               string // "iteration" for trials, "loop" for projects
	Assets             string // URL of the report's assets/ from the page
	Only               int    // render only this loop (a project's loop page)
	LoopHref           string // format of another loop's page ("loop-%02d.html")
	Step               string // "step k name" on a step's own page
}

type trialPage struct {
	Ctx            trialContext
	Assets         string
	Title          string
	Spec           runrecord.TrialSpec
	Status, Reason string
	Harness        string
	// Team names who played each role of a role team ("" otherwise).
	Team        string
	Refresh     int
	Timeline    []timelineRow
	Times       []timeRow
	Iterations  []iterationView
	Roles       []roleTokens
	Total       runrecord.Usage
	Violations  []string
	HistoryNote string
	Eval        evalView
	Files       []fileLink
	Generated   string
	Prev, Next  string // neighbouring loop pages
}

type timelineRow struct {
	T            int
	Anchor, Href string
	Stages       []timelineStage
}

type timelineStage struct {
	Role         runrecord.Role
	Class, Label string
	Percent      float64
	Failed       bool
}

type roleTokens struct {
	Role        runrecord.Role
	Invocations int
	Usage       runrecord.Usage
	Duration    string
}

type iterationView struct {
	T, ReusedFrom                 int
	Anchor, StartedFrom           string
	Plan                          *runrecord.Plan
	PlanHref                      string
	PlanContext                   []fileLink
	Dev                           *runrecord.DevReport
	Diff                          diffView
	Checks                        []runrecord.CheckResult
	ChecksHref                    string
	ChecksPassed                  int
	Evidence                      *runrecord.Evidence
	EvidenceHref                  string
	Verified, Gaps                []claimView
	Stages                        []stageView
	Violations                    []string
	Failure                       string
	Tokens                        int64
	HasPlanner, HasDev, HasQA     bool
	PlannerRan, DevRan, QARan     bool
	CandidateHref, CandidateLabel string
}

type claimView struct {
	ID, Text, Status, PlayerImpact, RecommendedUpdate string
	Records                                           []execView
}

type execView struct {
	runrecord.ExecutionRecord
	Media, MediaHref string // "image" when the record points at a frame kept in the trial
}

type stageView struct {
	Role             runrecord.Role
	Commit, Duration string
	Tokens           int64
	Invocations      []invocationView
	Violations       []string
	Failure          string
	Finished         string
}

type invocationView struct {
	Role                                 runrecord.Role
	Outcome, Evidence, Duration, Session string
	Attempt                              int
	Usage                                runrecord.Usage
	Files                                []fileLink
	Tools                                []runrecord.ToolCall
	Stderr, FinalMessage                 string
}

type evalView struct {
	Checkpoints []checkpointView
	Scores      []runrecord.Row
	ScoresHref  string
}

type checkpointView struct {
	Step                  int
	Commit, Error         string
	Tokens                int64
	Metrics               []metricView
	Details, DetailsHref  string
	DetailsTruncatedBytes int
}

type metricView struct {
	Name, Value string
}

const maxInline = 16 << 10

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + fmt.Sprintf("\n… (%d more bytes; open the raw file)", len(s)-n)
}

func fmtDuration(d time.Duration) string {
	if d <= 0 {
		return ""
	}
	return d.Round(100 * time.Millisecond).String()
}

// buildTrialPage renders one trial page and returns the run files it links.
func buildTrialPage(j trialJob, opts Options) ([]string, error) {
	if j.steps {
		return buildStepsPage(j, opts)
	}
	lr, err := readLoop(j.dir, "", opts.MaxDiffBytes)
	if err != nil {
		return nil, err
	}
	return renderTrial(lr, j.ctx, opts)
}

// renderTrial writes the page of a trial (or, with ctx.Only, of one loop).
func renderTrial(lr *loopRecords, ctx trialContext, opts Options) ([]string, error) {
	p, links := trialView(lr, ctx, opts)
	if _, err := renderPage(ctx.Page, "trial.html", p); err != nil {
		return nil, err
	}
	return links, nil
}

// trialView is what a trial page shows, and the run files it links.
func trialView(lr *loopRecords, ctx trialContext, opts Options) (*trialPage, []string) {
	if ctx.Unit == "" {
		ctx.Unit = "iteration"
	}
	b := &trialBuild{lr: lr, ctx: ctx, p: newTrialPage(lr, ctx, opts), byRole: map[runrecord.Role]*roleTokens{},
		maxRow: longestIteration(lr)}
	p := b.p
	for _, it := range lr.Iterations {
		b.iteration(it)
	}
	p.Times = timeRows(lr.Stages, lr.Summary, ctx.Unit)
	b.roles()
	p.Eval = evaluation(lr, b.link)
	for _, f := range []struct{ name, label string }{
		{runrecord.TrialSpecFile, runrecord.TrialSpecFile}, {runrecord.StagesFile, runrecord.StagesFile + " (committed stages)"},
		{runrecord.UsageFile, runrecord.UsageFile + " (token ledger)"}, {runrecord.SummaryFile, runrecord.SummaryFile},
		{runrecord.RunnerFailureFile, runrecord.RunnerFailureFile},
	} {
		if _, err := os.Stat(filepath.Join(lr.Dir, f.name)); err == nil {
			p.Files = append(p.Files, b.link(f.name, f.label))
		}
	}
	return p, b.links
}

// trialBuild carries trialView's state between its steps.
type trialBuild struct {
	lr     *loopRecords
	ctx    trialContext
	p      *trialPage
	links  []string                       // every record file the page links
	byRole map[runrecord.Role]*roleTokens // tokens by role over the iterations shown
	maxRow time.Duration                  // the longest iteration, the timeline's full width
}

// link links a file of the trial, relative to its directory, recording it
// so the manifest lists the page's links.
func (b *trialBuild) link(relToTrial, label string) fileLink {
	p := path.Join(b.ctx.TrialRel, filepath.ToSlash(relToTrial))
	b.links = append(b.links, p)
	return fileLink{Label: label, Href: b.ctx.ToRun + escapePath(p)}
}

// newTrialPage starts the page with the trial's (or loop's) title, its
// neighbours and its status.
func newTrialPage(lr *loopRecords, ctx trialContext, opts Options) *trialPage {
	p := &trialPage{Ctx: ctx, Assets: ctx.Assets, Spec: lr.Spec, HistoryNote: lr.HistoryNote,
		Generated: opts.Now().UTC().Format("2006-01-02 15:04:05 UTC")}
	p.Title = fmt.Sprintf("%s · %s · %s · rep %d", lr.Spec.Task, lr.Spec.Config, lr.Spec.Arm, max(lr.Spec.Rep, 1))
	if ctx.Step != "" {
		p.Title += " · " + ctx.Step
	}
	if ctx.Only > 0 {
		p.Title = fmt.Sprintf("%s · loop %d", ctx.Experiment, ctx.Only)
		if ctx.Only > 1 {
			p.Prev = fmt.Sprintf(ctx.LoopHref, ctx.Only-1)
		}
		if ctx.Only < len(lr.Iterations) {
			p.Next = fmt.Sprintf(ctx.LoopHref, ctx.Only+1)
		}
	}
	switch {
	case lr.Summary != nil:
		p.Status, p.Reason = string(lr.Summary.Status), lr.Summary.Reason
		p.Harness = lr.Summary.Harness + " " + lr.Summary.Version
		p.Team = lr.Summary.Team.String()
	case lr.Failure != nil:
		p.Status, p.Reason = "failed (the runner gave up)", lr.Failure.Reason
	case ctx.State != "":
		p.Status, p.Reason = ctx.State, ctx.Reason
	default:
		p.Status = "running or interrupted (no summary yet)"
	}
	if ctx.Live && lr.Summary == nil && lr.Failure == nil {
		p.Refresh = 10
	}
	return p
}

// longestIteration is the invocation time of the longest iteration. A
// bar's width is its share of it, so rows are as long as their iterations
// took and durations compare across rows.
func longestIteration(lr *loopRecords) time.Duration {
	var maxRow time.Duration
	for _, it := range lr.Iterations {
		var d time.Duration
		for _, s := range it.Stages {
			for _, inv := range s.Invocations {
				d += inv.Duration
			}
		}
		maxRow = max(maxRow, d)
	}
	return maxRow
}

// iteration adds the iteration's timeline row and, unless the page is of
// another loop (then the row is only its stages), its section.
func (b *trialBuild) iteration(it iterationRecords) {
	p, ctx := b.p, b.ctx
	row := timelineRow{T: it.T, Anchor: fmt.Sprintf("t%d", it.T), Href: fmt.Sprintf("#t%d", it.T)}
	if ctx.LoopHref != "" {
		row.Href = fmt.Sprintf(ctx.LoopHref, it.T) + row.Href
	}
	if ctx.Only > 0 && it.T != ctx.Only {
		for _, s := range it.Stages {
			row.Stages = append(row.Stages, timelineStage{Role: s.Role, Class: "r-" + string(s.Role), Label: string(s.Role), Percent: 100.0 / 3, Failed: s.RoleFailure != ""})
		}
		p.Timeline = append(p.Timeline, row)
		return
	}
	iv := b.iterationFiles(it)
	iv.Diff = renderDiff(it.Diff, it.DiffNote)
	for _, s := range it.Stages {
		b.stage(&iv, &row, it, s)
	}
	if it.CandidateDir != "" {
		iv.CandidateLabel = it.CandidateDir
	}
	p.Timeline = append(p.Timeline, row)
	p.Iterations = append(p.Iterations, iv)
}

// iterationFiles starts the iteration's section with its plan, checks and
// evidence, linking the files they came from.
func (b *trialBuild) iterationFiles(it iterationRecords) iterationView {
	iv := iterationView{T: it.T, Anchor: fmt.Sprintf("t%d", it.T), Plan: it.Plan, Dev: it.DevReport,
		Checks: it.Checks, Evidence: it.Evidence}
	if it.PlanPath != "" {
		iv.PlanHref = b.link(it.PlanPath, "plan.md").Href
	}
	for _, c := range it.PlanContext {
		iv.PlanContext = append(iv.PlanContext, b.link(c, path.Base(c)))
	}
	if it.ChecksPath != "" {
		iv.ChecksHref = b.link(it.ChecksPath, "runtime-checks.json").Href
	}
	for _, c := range it.Checks {
		if c.Passed {
			iv.ChecksPassed++
		}
	}
	if it.EvidencePath != "" {
		iv.EvidenceHref = b.link(it.EvidencePath, "evidence.json").Href
	}
	if it.Evidence != nil {
		iv.Verified = claims(it.Evidence.Verified, b.lr.Dir, it, b.link)
		iv.Gaps = claims(it.Evidence.Gaps, b.lr.Dir, it, b.link)
	}
	return iv
}

// stage adds stage s to the iteration's section and its timeline row, and
// its invocations' tokens to the role and trial totals.
func (b *trialBuild) stage(iv *iterationView, row *timelineRow, it iterationRecords, s runrecord.StageRecord) {
	p := b.p
	sv := stageView{Role: s.Role, Commit: short(s.Commit), Violations: s.Violations, Failure: s.RoleFailure,
		Finished: s.Finished.UTC().Format("15:04:05")}
	var d time.Duration
	for _, inv := range s.Invocations {
		d += inv.Duration
		sv.Tokens += inv.Usage.Total
		rt := b.byRole[inv.Role]
		if rt == nil {
			rt = &roleTokens{Role: inv.Role}
			b.byRole[inv.Role] = rt
		}
		rt.Invocations++
		rt.Usage = rt.Usage.Add(inv.Usage)
		p.Total = p.Total.Add(inv.Usage)
		sv.Invocations = append(sv.Invocations, invocation(inv, it, b.link))
	}
	sv.Duration = fmtDuration(d)
	iv.Tokens += sv.Tokens
	iv.Violations = append(iv.Violations, s.Violations...)
	p.Violations = append(p.Violations, s.Violations...)
	if s.RoleFailure != "" {
		iv.Failure = s.RoleFailure
	}
	switch s.Role {
	case runrecord.RolePlanner:
		iv.PlannerRan, iv.ReusedFrom = true, s.ReusedFrom
	case runrecord.RoleDeveloper:
		iv.DevRan, iv.StartedFrom = true, s.StartedFrom
	case runrecord.RoleQA:
		iv.QARan = true
	}
	pct := 0.0
	if b.maxRow > 0 {
		pct = 100 * float64(d) / float64(b.maxRow)
	}
	label := fmt.Sprintf("%s %s, %d tokens", s.Role, sv.Duration, sv.Tokens)
	if s.ReusedFrom > 0 {
		label = fmt.Sprintf("planner: D reused from %s %d", b.ctx.Unit, s.ReusedFrom)
	}
	row.Stages = append(row.Stages, timelineStage{Role: s.Role, Class: "r-" + string(s.Role), Label: label,
		Percent: max(pct, 1), Failed: s.RoleFailure != ""})
	iv.Stages = append(iv.Stages, sv)
}

// roles lists the tokens by role in the roles' order, each with its
// invocations' time (on a loop's page, that loop's).
func (b *trialBuild) roles() {
	p := b.p
	for _, rt := range b.byRole {
		p.Roles = append(p.Roles, *rt)
	}
	sort.Slice(p.Roles, func(i, j int) bool { return p.Roles[i].Role.Rank() < p.Roles[j].Role.Rank() })
	for i := range p.Roles {
		var d time.Duration
		for _, s := range b.lr.Stages {
			if b.ctx.Only > 0 && s.Iteration != b.ctx.Only {
				continue
			}
			for _, inv := range s.Invocations {
				if inv.Role == p.Roles[i].Role {
					d += inv.Duration
				}
			}
		}
		p.Roles[i].Duration = fmtDuration(d)
	}
}

func invocation(inv runrecord.Invocation, it iterationRecords, link func(string, string) fileLink) invocationView {
	v := invocationView{Role: inv.Role, Attempt: inv.Attempt, Outcome: string(inv.Outcome), Evidence: inv.Evidence,
		Usage: inv.Usage, Duration: fmtDuration(inv.Duration), Session: inv.Session}
	ar, ok := it.Attempts[filepath.ToSlash(inv.Dir)]
	if !ok {
		return v
	}
	for _, f := range ar.Files {
		v.Files = append(v.Files, link(f, strings.TrimPrefix(f, filepath.ToSlash(inv.Dir)+"/")))
	}
	v.Stderr = ar.StderrEnd
	if ar.Result != nil {
		v.Tools = ar.Result.Tools
		v.FinalMessage = truncate(ar.Result.FinalMessage, maxInline)
	}
	return v
}

var imageExt = map[string]bool{".png": true, ".jpg": true, ".jpeg": true, ".gif": true, ".webp": true, ".svg": true}

// claims resolves each execution record's path to a file kept in the
// trial directory (the QA candidate copy or the trial itself), so media
// frames can be shown.
func claims(cs []runrecord.Claim, trialDir string, it iterationRecords, link func(string, string) fileLink) []claimView {
	var out []claimView
	for _, c := range cs {
		cv := claimView{ID: c.ClaimID, Text: c.Claim, Status: c.Status, PlayerImpact: c.PlayerImpact, RecommendedUpdate: c.RecommendedUpdate}
		for _, er := range c.ExecutionRecords {
			ev := execView{ExecutionRecord: er}
			if er.Path != "" {
				if rp, ok := keptFile(trialDir, it, er.Path); ok {
					ev.MediaHref = link(rp, path.Base(rp)).Href
					if imageExt[strings.ToLower(path.Ext(rp))] {
						ev.Media = "image"
					} else {
						ev.Media = "file"
					}
				}
			}
			cv.Records = append(cv.Records, ev)
		}
		out = append(out, cv)
	}
	return out
}

// keptFile finds p (absolute, or relative to the QA candidate) inside the
// trial directory; nothing outside it is ever linked.
func keptFile(trialDir string, it iterationRecords, p string) (string, bool) {
	var cands []string
	// A path in the QA Tester's view (GameCraft's /workspace/frame.png) is
	// where the evidence's media manifest says the file is kept.
	if it.Evidence != nil {
		for _, m := range it.Evidence.Media {
			if m.ViewPath == p {
				cands = append(cands, filepath.Join(trialDir, m.Path))
			}
		}
	}
	if filepath.IsAbs(p) {
		cands = append(cands, p)
	} else {
		if it.CandidateDir != "" {
			cands = append(cands, filepath.Join(trialDir, it.CandidateDir, p))
		}
		cands = append(cands, filepath.Join(trialDir, p))
	}
	for _, c := range cands {
		r, err := filepath.Rel(trialDir, filepath.Clean(c))
		if err != nil || r == ".." || strings.HasPrefix(r, ".."+string(filepath.Separator)) {
			continue
		}
		if st, err := os.Stat(c); err == nil && st.Mode().IsRegular() {
			return filepath.ToSlash(r), true
		}
	}
	return "", false
}

// evaluation is the after-the-run panel: checkpoint scores, evaluator
// output. None of it was ever shown to a role.
func evaluation(lr *loopRecords, link func(string, string) fileLink) evalView {
	ev := evalView{Scores: lr.Scores}
	if len(lr.Scores) > 0 {
		ev.ScoresHref = link(runrecord.ScoresFile, runrecord.ScoresFile).Href
	}
	cps := map[int]*checkpointView{}
	if lr.Summary != nil {
		for _, c := range lr.Summary.Checkpoints {
			cv := &checkpointView{Step: c.Step, Commit: short(c.Commit), Tokens: c.Tokens, Error: c.EvalError}
			cps[c.Step] = cv
		}
	}
	for t, e := range lr.Evaluations {
		cv := cps[t]
		if cv == nil {
			cv = &checkpointView{Step: t}
			cps[t] = cv
		}
		if cv.Error == "" {
			cv.Error = e.Error
		}
		var names []string
		for m := range e.Metrics {
			names = append(names, m)
		}
		sort.Strings(names)
		for _, m := range names {
			cv.Metrics = append(cv.Metrics, metricView{m, formatValue(e.Metrics[m])})
		}
		if len(e.Details) > 0 {
			b, _ := json.MarshalIndent(e.Details, "", "  ")
			cv.Details = truncate(string(b), maxInline)
		}
		rel := runrecord.TrialLayout{}.CheckpointEvaluation(t)
		cv.DetailsHref = link(rel, filepath.Base(rel)).Href
	}
	for _, cv := range cps {
		ev.Checkpoints = append(ev.Checkpoints, *cv)
	}
	sort.Slice(ev.Checkpoints, func(i, j int) bool { return ev.Checkpoints[i].Step < ev.Checkpoints[j].Step })
	return ev
}

// escapePath percent-escapes each segment of a run-relative path; '@'
// stays (run directories are named config/arm@T/task/rep-N).
func escapePath(p string) string {
	segs := strings.Split(p, "/")
	for i, s := range segs {
		segs[i] = strings.ReplaceAll(url.PathEscape(s), "%40", "@")
	}
	return strings.Join(segs, "/")
}
