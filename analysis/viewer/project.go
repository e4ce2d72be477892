package viewer

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/hoh-research/hoh/analysis/figures"
	"github.com/hoh-research/hoh/runrecord"
)

// projectPage is a multi-day project's page: its issue table, the
// dynamics per loop and links to one page per loop.
type projectPage struct {
	Title, Assets, Generated string
	Refresh                  int
	Harness, Model, Spec     string
	// Team names who plays each role of a role team ("" otherwise).
	Team            string
	Loops           int
	InProgress      string
	Tokens          int64
	IssueCounts     []countView
	Issues          []issueView
	Dynamics        []runrecord.LoopDynamics
	Chart, ChartCSV string // the dynamics figure and its data
	ChartNote       string
	LoopLinks       []loopLink
	Files           []fileLink
	Notice          string
}

type issueView struct {
	runrecord.Issue
	Last    int
	History []transitionView
}

type transitionView struct {
	runrecord.Transition
	Href string
}

type loopLink struct {
	T                int
	Href, QA, Build  string
	New, Closed      int
	Reopened, Unres  int
	Tokens, Files    int64
	Added, Deleted   int
	FilesChanged     int
	CumulativeTokens int64
}

// isProject reports whether dir is an hoh project (hoh project init).
func isProject(dir string) bool {
	_, err := os.Stat(runrecord.ProjectLayout{Project: dir}.Config())
	return err == nil
}

// siteRoot is the directory the report lives in and whose files it links:
// the run directory, or a project's state directory (never the artifact).
func siteRoot(dir string) string {
	if isProject(dir) {
		return runrecord.ProjectLayout{Project: dir}.State()
	}
	return dir
}

// readProjectConfig reads what the report shows of hoh-project.yaml.
func readProjectConfig(l runrecord.ProjectLayout) (*runrecord.ProjectConfig, error) {
	data, err := os.ReadFile(l.Config())
	if errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("%s is not an hoh project (no %s; run hoh project init)", l.Project, l.Config())
	}
	if err != nil {
		return nil, err
	}
	var c runrecord.ProjectConfig
	if err := yaml.Unmarshal(data, &c); err != nil {
		return nil, fmt.Errorf("%s: %w", l.Config(), err)
	}
	return &c, nil
}

func buildProject(dir string, opts Options) (*Result, error) {
	l := runrecord.ProjectLayout{Project: dir}
	cfg, err := readProjectConfig(l)
	if err != nil {
		return nil, err
	}
	state := l.State()
	report := filepath.Join(state, ReportDir)
	if err := writeAssets(report); err != nil {
		return nil, err
	}
	m := readManifest(report)
	issues, err := runrecord.ReadIssues(l.IssuesJSONL())
	if err != nil {
		return nil, fmt.Errorf("%s: %w", l.IssuesJSONL(), err)
	}
	dyn, err := runrecord.ReadDynamics(l.Dynamics())
	if err != nil && !os.IsNotExist(err) {
		return nil, fmt.Errorf("%s: %w", l.Dynamics(), err)
	}
	p := newProjectPage(cfg, dyn, opts)
	links := &linkList{}
	fillIssues(p, issues, state, links)
	drawDynamics(p, cfg.Name, dyn, report)
	for _, f := range []struct{ path, note string }{
		{l.IssuesCSV(), ""}, {l.IssuesJSONL(), ""}, {l.IssuesMD(), ""},
		{l.Dynamics(), ""}, {l.Config(), ""}, {l.Runs(), " (runs, stops, rollbacks)"},
	} {
		if _, err := os.Stat(f.path); err == nil {
			rel, _ := filepath.Rel(state, f.path)
			p.Files = append(p.Files, links.add(filepath.ToSlash(rel), filepath.Base(f.path)+f.note))
		}
	}
	res := &Result{Index: filepath.Join(report, "index.html")}
	tdir := l.Trial()
	if _, err := os.Stat(runrecord.TrialLayout{Dir: tdir}.Spec()); err == nil {
		if err := buildLoopPages(p, res, m, l, cfg, dyn, report, opts); err != nil {
			return nil, err
		}
	}
	n, err := renderPage(res.Index, "project.html", p)
	if err != nil {
		return nil, err
	}
	res.IndexBytes = n
	m.Pages["index.html"] = pageEntry{Links: uniqueSorted(links.rels)}
	return res, saveManifest(report, m)
}

// newProjectPage starts the project page with what the config and the
// dynamics say.
func newProjectPage(cfg *runrecord.ProjectConfig, dyn []runrecord.LoopDynamics, opts Options) *projectPage {
	p := &projectPage{Title: cfg.Name, Assets: "assets/", Harness: cfg.Harness.Harness, Model: cfg.Harness.Provider.Model,
		Spec: cfg.Spec, Dynamics: dyn, Loops: len(dyn), Generated: opts.Now().UTC().Format("2006-01-02 15:04:05 UTC")}
	if team := cfg.Team(); team != nil {
		p.Team = team.String()
	}
	if cfg.IsScripted() {
		p.Notice = "this project's model is the scripted test double: its loops are a plumbing check, not results"
	}
	if n := len(dyn); n > 0 {
		p.Tokens = dyn[n-1].Tokens
	}
	return p
}

// linkList links files of the state directory from the index, recording
// each so the manifest lists the index's links.
type linkList struct{ rels []string }

func (k *linkList) add(rel, label string) fileLink {
	k.rels = append(k.rels, rel)
	return fileLink{Label: label, Href: "../" + escapePath(rel)}
}

// fillIssues lists the issues with their histories, linking evidence that
// exists inside the state directory, and counts them by state.
func fillIssues(p *projectPage, issues []runrecord.Issue, state string, links *linkList) {
	counts := map[string]int{}
	for _, is := range issues {
		counts[is.State]++
		iv := issueView{Issue: is, Last: is.LastLoop()}
		for _, tr := range is.History {
			tv := transitionView{Transition: tr}
			if tr.Evidence != "" && !strings.Contains(tr.Evidence, "..") {
				if _, err := os.Stat(filepath.Join(state, tr.Evidence)); err == nil {
					tv.Href = links.add(filepath.ToSlash(tr.Evidence), tr.Evidence).Href
				}
			}
			iv.History = append(iv.History, tv)
		}
		p.Issues = append(p.Issues, iv)
	}
	for _, s := range []struct{ state, class string }{{"open", "fail"}, {"reopened", "evalfail"}, {"closed", "ok"}} {
		p.IssueCounts = append(p.IssueCounts, countView{s.state, s.class, counts[s.state]})
	}
}

// buildLoopPages reads the project's trial and renders one page per loop,
// linking each from the project page with its dynamics.
func buildLoopPages(p *projectPage, res *Result, m manifest, l runrecord.ProjectLayout, cfg *runrecord.ProjectConfig,
	dyn []runrecord.LoopDynamics, report string, opts Options) error {
	tdir := l.Trial()
	lr, err := readLoop(tdir, l.GitDir(), opts.MaxDiffBytes)
	if err != nil {
		return err
	}
	if lr.Summary == nil && opts.Live {
		p.Refresh = 10
	}
	if n := len(lr.Stages); n > 0 && lr.Stages[n-1].Role != runrecord.RoleQA {
		p.InProgress = fmt.Sprintf("loop %d: %s committed", lr.Stages[n-1].Iteration, lr.Stages[n-1].Role)
	}
	byLoop := map[int]runrecord.LoopDynamics{}
	for _, d := range dyn {
		byLoop[d.Loop] = d
	}
	rel, _ := filepath.Rel(l.State(), tdir)
	for _, it := range lr.Iterations {
		name := fmt.Sprintf("loops/loop-%02d.html", it.T)
		d := byLoop[it.T]
		p.LoopLinks = append(p.LoopLinks, loopLink{T: it.T, Href: name, QA: d.QAStatus, Build: d.BuildStatus, New: d.New,
			Closed: d.Closed, Reopened: d.Reopened, Unres: d.Unresolved, FilesChanged: d.FilesChanged, Added: d.LinesAdded,
			Deleted: d.LinesDeleted, CumulativeTokens: d.Tokens})
		ctx := trialContext{Report: report, Page: filepath.Join(report, name), ToRun: "../../", TrialRel: filepath.ToSlash(rel),
			Index: "../index.html", Assets: "../assets/", Experiment: cfg.Name, Notice: p.Notice, Live: opts.Live,
			Unit: "loop", Only: it.T, LoopHref: "loop-%02d.html"}
		ls, err := renderTrial(lr, ctx, opts)
		if err != nil {
			return err
		}
		m.Pages[name] = pageEntry{Links: uniqueSorted(ls)}
		res.Trials++
		res.Rebuilt++
	}
	return nil
}

// drawDynamics draws hoh plot dynamics (the paper's Figure 1 style) as SVG
// into report/figures.
func drawDynamics(p *projectPage, name string, dyn []runrecord.LoopDynamics, report string) {
	if len(dyn) == 0 {
		return
	}
	loops := make([]figures.LoopIssues, len(dyn))
	for i, d := range dyn {
		loops[i] = figures.LoopIssues{Loop: d.Loop, New: d.New, Closed: d.Closed, Reopened: d.Reopened, Unresolved: d.Unresolved, Total: d.Total}
	}
	out := filepath.Join(report, "figures")
	scope := name
	if p.Notice != "" { // the scripted test double: the figure says so when shown alone
		scope += "\n" + figures.NoticeScope(p.Notice)
	}
	outs, err := figures.Dynamics("dynamics", scope, loops, figures.Options{OutDir: out, Formats: []string{"svg"}})
	if err != nil {
		p.ChartNote = "dynamics plot: " + err.Error()
		return
	}
	for _, o := range outs {
		switch o.Format {
		case "svg":
			p.Chart = rel(report, o.Path)
		case "csv":
			p.ChartCSV = rel(report, o.Path)
		}
	}
}
