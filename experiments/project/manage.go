package project

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/hoh-research/hoh/experiments/history"
	"github.com/hoh-research/hoh/runrecord"
)

// Status is what `hoh project status` shows.
type Status struct {
	Name       string `json:"name"`
	Loops      int    `json:"loops"`
	InProgress string `json:"in_progress,omitempty"` // "loop 5: planner done" when a loop is unfinished
	Issues     int    `json:"issues"`
	Unresolved int    `json:"unresolved"`
	Reopened   int    `json:"reopened"`
	Tokens     int64  `json:"tokens"`
	LastQA     string `json:"last_qa_status"`
	LastBuild  string `json:"last_build_status"`
	LastStop   string `json:"last_stop,omitempty"`
	Running    bool   `json:"running"`
	Harness    string `json:"harness"`
	Model      string `json:"model"`
	// Team spells out who plays each role in a role team ("" without one).
	Team string `json:"team,omitempty"`
}

// ReadStatus summarises the project from its records.
func ReadStatus(project string) (*Status, error) {
	project, _ = filepath.Abs(project)
	l := runrecord.ProjectLayout{Project: project}
	c, err := LoadConfig(project)
	if err != nil {
		return nil, err
	}
	st, err := stages(l)
	if err != nil {
		return nil, err
	}
	s := &Status{Name: c.Name, Loops: completedLoops(st), Tokens: tokens(st), Harness: c.Harness.Harness, Model: c.Harness.Provider.Model}
	if c.Harness.HasTeam() {
		s.Team = c.team().String()
	}
	if n := len(st); n > 0 && st[n-1].Role != runrecord.RoleQA {
		s.InProgress = fmt.Sprintf("loop %d: %s committed", st[n-1].Iteration, st[n-1].Role)
	}
	issues, err := ReadIssues(project)
	if err != nil {
		return nil, err
	}
	s.Issues = len(issues)
	for _, is := range issues {
		if is.Unresolved() {
			s.Unresolved++
		}
		if is.State == runrecord.IssueReopened {
			s.Reopened++
		}
	}
	if dyn, err := runrecord.ReadDynamics(l.Dynamics()); err == nil && len(dyn) > 0 {
		s.LastQA, s.LastBuild = dyn[len(dyn)-1].QAStatus, dyn[len(dyn)-1].BuildStatus
	}
	evs, err := ReadEvents(project)
	if err != nil {
		return nil, err
	}
	for _, e := range evs {
		if e.Kind == "stop" || e.Kind == "error" {
			s.LastStop = e.Reason
		}
	}
	if unlock, err := lock(l); err != nil {
		s.Running = true
	} else {
		unlock()
	}
	return s, nil
}

// Rollback restores the artifact and the state to the end of loop n. Nothing
// is deleted or rewritten: the artifact's restore is a new commit on top of
// the history (the pre-rollback head stays reachable through the tag
// rollback-K/head), the moved tags keep their targets under rollback-K/, and
// the records of loops after n move to .git/hoh/rollbacks/K/.
func Rollback(project string, n int) error {
	project, err := filepath.Abs(project)
	if err != nil {
		return err
	}
	l := runrecord.ProjectLayout{Project: project}
	c, err := LoadConfig(project)
	if err != nil {
		return err
	}
	unlock, err := lock(l)
	if err != nil {
		return err
	}
	defer unlock()
	st, err := stages(l)
	if err != nil {
		return err
	}
	done := completedLoops(st)
	if n < 0 || n > done {
		return fmt.Errorf("cannot roll back to loop %d: the project has completed loops 0..%d", n, done)
	}
	repo, err := history.Open(l.GitDir(), project)
	if err != nil {
		return err
	}
	repo.Exclude = exclude
	target := "loop-0"
	if n > 0 {
		target = find(st, n, runrecord.RoleQA).Commit
	}
	k := nextRollback(l)
	arch := filepath.Join(l.Rollbacks(), strconv.Itoa(k))
	tl := runrecord.TrialLayout{Dir: l.Trial()}
	if err := os.MkdirAll(arch, 0o755); err != nil {
		return err
	}
	// Archive first: the old stages.jsonl and usage.jsonl whole, the derived
	// files, then move the loop directories after n.
	if err := archiveFiles(arch, tl.Stages(), tl.Usage(), l.IssuesJSONL(), l.IssuesCSV(), l.IssuesMD(), l.Dynamics()); err != nil {
		return err
	}
	if err := archiveTags(repo, k, n); err != nil {
		return err
	}
	if err := keepStages(tl, st, n); err != nil {
		return err
	}
	if err := archiveLoops(tl, arch, n, done); err != nil {
		return err
	}
	if err := repo.Restore(target); err != nil {
		return err
	}
	if _, err := repo.Commit(fmt.Sprintf("hoh rollback %d: restore the artifact to the end of loop %d", k, n)); err != nil {
		return err
	}
	if err := appendEvent(l, Event{Kind: "rollback", Loop: n, Reason: fmt.Sprintf("rolled back from loop %d to loop %d; records in %s", done, n, arch)}); err != nil {
		return err
	}
	return writeDerived(l, c)
}

// nextRollback is the number of the project's next rollback: the first
// without an archive directory.
func nextRollback(l runrecord.ProjectLayout) int {
	k := 1
	for {
		if _, err := os.Stat(filepath.Join(l.Rollbacks(), strconv.Itoa(k))); errors.Is(err, os.ErrNotExist) {
			return k
		}
		k++
	}
}

// archiveTags tags the pre-rollback head rollback-K/head and moves the
// checkpoint and loop tags of loops after n under rollback-K/.
func archiveTags(repo *history.Repo, k, n int) error {
	if head := repo.Head(); head != "" {
		if err := repo.Tag(fmt.Sprintf("rollback-%d/head", k), head); err != nil {
			return err
		}
	}
	tags, err := repo.Git("tag", "--list", "cp-*", "loop-*")
	if err != nil {
		return err
	}
	for _, tag := range strings.Fields(tags) {
		i := strings.LastIndexByte(tag, '-')
		if t, err := strconv.Atoi(tag[i+1:]); err == nil && t > n {
			if _, err := repo.Git("tag", "--force", fmt.Sprintf("rollback-%d/%s", k, tag), tag); err != nil {
				return err
			}
			if _, err := repo.Git("tag", "--delete", tag); err != nil {
				return err
			}
		}
	}
	return nil
}

// keepStages rewrites stages.jsonl and the usage ledger with the stages of
// loops up to n only.
func keepStages(tl runrecord.TrialLayout, st []runrecord.StageRecord, n int) error {
	var kept []runrecord.StageRecord
	var ledger bytes.Buffer
	for _, s := range st {
		if s.Iteration <= n {
			kept = append(kept, s)
			for _, inv := range s.Invocations {
				line, _ := json.Marshal(inv)
				ledger.Write(line)
				ledger.WriteByte('\n')
			}
		}
	}
	var buf bytes.Buffer
	for _, s := range kept {
		line, _ := json.Marshal(s)
		buf.Write(line)
		buf.WriteByte('\n')
	}
	if err := runrecord.WriteFile(tl.Stages(), buf.Bytes()); err != nil {
		return err
	}
	return runrecord.WriteFile(tl.Usage(), ledger.Bytes())
}

// archiveFiles copies each of paths that exists into arch.
func archiveFiles(arch string, paths ...string) error {
	for _, p := range paths {
		if data, err := os.ReadFile(p); err == nil {
			if err := runrecord.WriteFile(filepath.Join(arch, filepath.Base(p)), data); err != nil {
				return err
			}
		}
	}
	return nil
}

// archiveLoops moves the directories of loops n+1..done+1 (the last one
// possibly unfinished) into arch.
func archiveLoops(tl runrecord.TrialLayout, arch string, n, done int) error {
	for t := n + 1; t <= done+1; t++ {
		dir := filepath.Dir(tl.Stage(t, runrecord.RoleQA))
		if _, err := os.Stat(dir); err == nil {
			if err := os.Rename(dir, filepath.Join(arch, filepath.Base(dir))); err != nil {
				return err
			}
		}
	}
	return nil
}

// team is who plays each role: a role team's own agents, else the
// project's one agent in all three roles.
func (c *Config) team() runrecord.Team {
	team := runrecord.Team{}
	for _, role := range runrecord.Roles {
		a := c.Harness.ForRole(role)
		team[role] = runrecord.TeamMember{Harness: a.Harness, API: a.Provider.API, Model: a.Provider.Model}
	}
	return team
}

// Scripted reports whether any role talks to the scripted test double, so
// that what the project's records say is a plumbing check.
func (c *Config) Scripted() bool {
	for _, role := range runrecord.Roles {
		if c.Harness.ForRole(role).IsScripted() {
			return true
		}
	}
	return false
}

// Report writes a Markdown summary per day and for the whole project into
// .git/hoh/reports/report.md and returns its path: per day the loops run, what
// was added (the loops' objectives), what broke (issues opened or reopened)
// and what was repaired (issues closed).
func Report(project string) (string, error) {
	project, _ = filepath.Abs(project)
	l := runrecord.ProjectLayout{Project: project}
	c, err := LoadConfig(project)
	if err != nil {
		return "", err
	}
	issues, dyn, err := derive(l)
	if err != nil {
		return "", err
	}
	tl := runrecord.TrialLayout{Dir: l.Trial()}
	objective := func(t int) string {
		var p runrecord.Plan
		if err := runrecord.ReadJSON(tl.StageFiles(t, runrecord.RolePlanner).Plan(), &p); err != nil {
			return "(no plan)"
		}
		return clip(p.Objective, 200)
	}
	days := reportDays(dyn)
	var b strings.Builder
	fmt.Fprintf(&b, "# Project %s\n\nReport written %s from the project's records (%s).\n\n", c.Name, time.Now().UTC().Format(time.RFC3339), l.State())
	fmt.Fprintf(&b, "Agents: %s.\n\n", c.team())
	if c.Scripted() {
		b.WriteString("NOTE: the model is the scripted test double: this report is a plumbing check, not a result.\n\n")
	}
	n, cl, re, tok, files, add, del := loopTotals(dyn)
	unresolved := 0
	if len(dyn) > 0 {
		unresolved = dyn[len(dyn)-1].Unresolved
	}
	fmt.Fprintf(&b, "## Whole project\n\n%s over %s; %s recorded, %s, %s, %d unresolved now; %d tokens; %s (+%d/-%d lines).\n",
		count(len(dyn), "loop"), count(len(days), "day"), count(n, "issue"), count(cl, "closing"), count(re, "reopening"), unresolved, tok, count(files, "file change"), add, del)
	for _, d := range days {
		writeReportDay(&b, d, issues, objective)
	}
	p := l.Report()
	return p, runrecord.WriteFile(p, []byte(b.String()))
}

// reportDay is one day's section of the report: the loops finished that
// day (UTC).
type reportDay struct {
	date  string
	loops []runrecord.LoopDynamics
}

// reportDays groups the loops by the day they finished.
func reportDays(dyn []runrecord.LoopDynamics) []reportDay {
	var days []reportDay
	for _, d := range dyn {
		date := d.Finished.UTC().Format("2006-01-02")
		if len(days) == 0 || days[len(days)-1].date != date {
			days = append(days, reportDay{date: date})
		}
		days[len(days)-1].loops = append(days[len(days)-1].loops, d)
	}
	return days
}

// loopTotals sums the loops' issues (new, closed, reopened), tokens and
// file changes (files, lines added, lines deleted).
func loopTotals(ds []runrecord.LoopDynamics) (n, cl, re int, tok int64, files, add, del int) {
	for _, d := range ds {
		n, cl, re = n+d.New, cl+d.Closed, re+d.Reopened
		tok += d.PlannerTokens + d.DeveloperTokens + d.QATokens
		files, add, del = files+d.FilesChanged, add+d.LinesAdded, del+d.LinesDeleted
	}
	return
}

// issueEvents lists the issues opened, reopened and closed in loops
// from..to.
func issueEvents(issues []runrecord.Issue, from, to int) (opened, reopened, closed []string) {
	for _, is := range issues {
		for _, h := range is.History {
			if h.Loop < from || h.Loop > to {
				continue
			}
			label := fmt.Sprintf("%s (loop %d): %s", is.ID, h.Loop, clip(is.Claim, 120))
			switch {
			case h.From == "":
				opened = append(opened, label)
			case h.To == runrecord.IssueReopened:
				reopened = append(reopened, label)
			case h.To == runrecord.IssueClosed:
				closed = append(closed, label)
			}
		}
	}
	return
}

// writeReportDay writes a day's section: its totals, what was added (the
// loops' objectives), what broke, was found and was repaired.
func writeReportDay(b *strings.Builder, d reportDay, issues []runrecord.Issue, objective func(int) string) {
	first, last := d.loops[0].Loop, d.loops[len(d.loops)-1].Loop
	n, cl, re, tok, files, add, del := loopTotals(d.loops)
	span := fmt.Sprintf("loops %d-%d", first, last)
	if first == last {
		span = fmt.Sprintf("loop %d", first)
	}
	fmt.Fprintf(b, "\n## %s: %s\n\n%d new, %d closed, %d reopened, %d unresolved at the end of the day; %d tokens; %s (+%d/-%d lines).\n",
		d.date, span, n, cl, re, d.loops[len(d.loops)-1].Unresolved, tok, count(files, "file change"), add, del)
	b.WriteString("\n### Added (the loops' objectives)\n")
	for _, ld := range d.loops {
		fmt.Fprintf(b, "- loop %d (QA %s, build %s): %s\n", ld.Loop, ld.QAStatus, ld.BuildStatus, objective(ld.Loop))
	}
	opened, reopened, closed := issueEvents(issues, first, last)
	for _, sec := range []struct {
		title string
		items []string
	}{{"Broke (reopened after an earlier verification)", reopened}, {"Found (new issues)", opened}, {"Repaired (verified by QA)", closed}} {
		fmt.Fprintf(b, "\n### %s\n", sec.title)
		if len(sec.items) == 0 {
			b.WriteString("- none\n")
		}
		for _, it := range sec.items {
			fmt.Fprintf(b, "- %s\n", it)
		}
	}
}

// PushGitHub mirrors the issue table to a GitHub repository's issues with
// the gh CLI (which must be installed and authenticated): an issue is
// created once (its number kept in .git/hoh/github.json), then closed or
// reopened to follow the table. repo may be "" (gh's default repository).
func PushGitHub(project, repo string) ([]string, error) {
	project, _ = filepath.Abs(project)
	l := runrecord.ProjectLayout{Project: project}
	gh, err := exec.LookPath("gh")
	if err != nil {
		return nil, errors.New("the gh CLI is not installed (https://cli.github.com); pushing issues is optional")
	}
	run := func(args ...string) (string, error) {
		if repo != "" {
			args = append(args, "--repo", repo)
		}
		cmd := exec.Command(gh, args...)
		cmd.Dir = project
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		if err := cmd.Run(); err != nil {
			return "", fmt.Errorf("gh %s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(errb.String()))
		}
		return strings.TrimSpace(out.String()), nil
	}
	if c := exec.Command(gh, "auth", "status"); c.Run() != nil {
		return nil, errors.New("gh is not authenticated (run gh auth login)")
	}
	issues, err := ReadIssues(project)
	if err != nil {
		return nil, err
	}
	type pushed struct {
		Number int    `json:"number"`
		State  string `json:"state"` // state last pushed: open or closed
	}
	known := map[string]pushed{}
	if err := runrecord.ReadJSON(l.GitHub(), &known); err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	var log []string
	save := func() error { return runrecord.WriteJSON(l.GitHub(), known) }
	for _, is := range issues {
		want := "open"
		if is.State == runrecord.IssueClosed {
			want = "closed"
		}
		p, ok := known[is.ID]
		if !ok {
			var body strings.Builder
			fmt.Fprintf(&body, "Recorded by hoh from the QA evidence bundles (loop %d).\n\nClaim: %s\n", is.Opened, is.Claim)
			if is.Recommended != "" {
				fmt.Fprintf(&body, "\nQA recommended: %s\n", is.Recommended)
			}
			url, err := run("issue", "create", "--title", fmt.Sprintf("[hoh %s] %s", is.ID, clip(is.Claim, 80)), "--body", body.String())
			if err != nil {
				return log, errors.Join(err, save())
			}
			num, err := strconv.Atoi(url[strings.LastIndexByte(url, '/')+1:])
			if err != nil {
				return log, errors.Join(fmt.Errorf("gh issue create printed %q, not an issue URL", url), save())
			}
			p = pushed{Number: num, State: "open"}
			known[is.ID] = p
			log = append(log, fmt.Sprintf("created #%d for %s", num, is.ID))
		}
		if p.State != want {
			verb := map[string]string{"closed": "close", "open": "reopen"}[want]
			if _, err := run("issue", verb, strconv.Itoa(p.Number)); err != nil {
				return log, errors.Join(err, save())
			}
			known[is.ID] = pushed{Number: p.Number, State: want}
			log = append(log, fmt.Sprintf("%s #%d (%s)", verb, p.Number, is.ID))
		}
	}
	return log, save()
}

// count is "1 issue", "2 issues".
func count(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
