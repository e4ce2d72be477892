package viewer

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/hoh-research/hoh/runrecord"
)

// indexPage is the experiment page.
type indexPage struct {
	Title, Notice, Generated string
	Assets                   string
	Refresh                  int // seconds; 0: no reload
	LockJSON, ConfigText     string
	Counts                   []countView
	Groups                   []groupView
	Columns                  []gridColumn
	Rows                     []gridRow
	Benchmarks, Configs      []string
	Arms, Statuses           []string
	Metrics                  []string // "benchmark: metric" shown in the grid
	Tables                   []tableView
	TableErrors              []string
	Figures                  []figureView
	FigureNotes              []string
	Replacements             []replacementView
	Files                    []fileLink
	Harnesses                map[string]string // configuration -> harness@version (lock.json)
	TrialCount               int
	Runs                     []string // the labels of a page of several runs (BuildRuns)
}

type countView struct {
	Label, Class string
	N            int
}

type groupView struct {
	Config, Arm                                   string
	Done, Running, Failed, Remaining, NotRun, Rep int
	Tokens                                        int64
}

type gridColumn struct {
	Config, Arm string
}

type gridRow struct {
	Benchmark, Task string
	Rep             int
	Cells           []gridCell
}

// gridCell is one trial in the grid; Class distinguishes completed,
// failed, replaced and missing cells.
type gridCell struct {
	Present               bool
	Key, Href             string
	Class, Status, Title  string
	Value, Metric         string
	Num                   float64
	HasValue              bool
	Tokens                int64
	Checkpoint, Replaced  int
	State, StatusCategory string
}

type replacementView struct {
	runrecord.Replacement
	Href string
}

type fileLink struct{ Label, Href string }

// Status categories the grid and its filter use.
const (
	catCompleted  = "completed"
	catFailed     = "failed"
	catRunning    = "running"
	catMissing    = "not run"
	catEvalFailed = "evaluation failed"
)

func buildExperiment(dir string, opts Options) (*Result, error) {
	rr, err := readRun(dir)
	if err != nil {
		return nil, err
	}
	report := filepath.Join(dir, ReportDir)
	m := readManifest(report)
	if err := writeAssets(report); err != nil {
		return nil, err
	}
	page := experimentPage(dir, rr, opts)
	unfinished := fillGrid(page, rr)
	if opts.Live && unfinished {
		page.Refresh = 10
	}
	fillAnalysis(page, rr, report, opts)
	for _, r := range rr.Replacements {
		page.Replacements = append(page.Replacements, replacementView{r, "trials/" + r.Key + ".html"})
	}
	indexLinks := linkRunFiles(page, dir)
	// Trial pages: only those whose records changed since the last build.
	res := &Result{Index: filepath.Join(report, "index.html")}
	jobs := staleTrialJobs(res, page, rr, m, dir, report, opts)
	if opts.LazyTrials {
		// hoh view --serve: a trial page is built when it is first asked
		// for (Server.ServeHTTP), so a large run is served at once.
		res.pending = map[string]trialJob{}
		for _, j := range jobs {
			res.pending[j.page] = j
		}
		jobs = nil
	}
	res.Rebuilt = len(jobs)
	if err := buildTrialPages(jobs, m, opts); err != nil {
		return nil, err
	}
	n, err := renderPage(res.Index, "index.html", page)
	if err != nil {
		return nil, err
	}
	res.IndexBytes = n
	m.Pages["index.html"] = pageEntry{Links: indexLinks}
	return res, saveManifest(report, m)
}

// experimentPage starts the experiment page with what the lock says.
func experimentPage(dir string, rr *runRecords, opts Options) *indexPage {
	page := &indexPage{Assets: "assets/", Title: rr.Lock.Experiment, Notice: rr.Lock.Notice, ConfigText: rr.ConfigText,
		Generated: opts.Now().UTC().Format("2006-01-02 15:04:05 UTC")}
	if page.Title == "" {
		page.Title = filepath.Base(dir)
	}
	page.Harnesses, page.TrialCount = rr.Lock.Harnesses, len(rr.Trials)
	if b, err := json.MarshalIndent(rr.Lock, "", "  "); err == nil {
		page.LockJSON = string(b)
	}
	return page
}

// linkRunFiles links the page to the run's record files that exist and
// returns their names, the index's links in the manifest.
func linkRunFiles(page *indexPage, dir string) []string {
	indexLinks := []string{}
	for _, f := range []struct{ label, name string }{
		{runrecord.LockFile + " (what was run: config digest, harness versions, scripts)", runrecord.LockFile},
		{runrecord.PlanFile + " (every planned trial)", runrecord.PlanFile},
		{runrecord.TrialsFile + " (state of every trial)", runrecord.TrialsFile},
		{runrecord.ScoresFile + " (every checkpoint's scores)", runrecord.ScoresFile},
		{runrecord.ReplacementsFile + " (replaced attempts)", runrecord.ReplacementsFile},
		{runrecord.ConfigCopyNames[0] + " (the config as run)", runrecord.ConfigCopyNames[0]},
	} {
		if _, err := os.Stat(filepath.Join(dir, f.name)); err == nil {
			page.Files = append(page.Files, fileLink{f.label, "../" + f.name})
			indexLinks = append(indexLinks, f.name)
		}
	}
	return indexLinks
}

// staleTrialJobs counts the trials with pages in res and returns the jobs
// of the pages (a trial's, and each step's of a multi-step trial) whose
// fingerprint differs from the manifest's or whose file is gone.
func staleTrialJobs(res *Result, page *indexPage, rr *runRecords, m manifest, dir, report string, opts Options) []trialJob {
	var jobs []trialJob
	repsByKey := map[string][]runrecord.Replacement{}
	for _, r := range rr.Replacements {
		repsByKey[r.Key] = append(repsByKey[r.Key], r)
	}
	for _, t := range rr.Trials {
		tdir := filepath.Join(dir, t.Dir)
		multi := runrecord.TrialLayout{Dir: tdir}.MultiStep()
		if !multi && !exists(runrecord.TrialLayout{Dir: tdir}.Spec()) {
			continue
		}
		res.Trials++
		name := "trials/" + t.Key + ".html"
		reps := repsByKey[t.Key]
		superseded := 0
		for _, r := range reps {
			if r.Superseded {
				superseded++
			}
		}
		suffix := fmt.Sprintf("n%q;l%v;v%s", rr.Lock.Notice, opts.Live, pagesVersion)
		fp := fingerprint(trialFingerprintFiles(tdir)) + fmt.Sprintf("r%d/%d;", len(reps), superseded) + suffix
		j := trialJob{dir: tdir, page: name, fp: fp, steps: multi, ctx: trialContext{
			Report: report, Page: filepath.Join(report, name), ToRun: "../../", TrialRel: filepath.ToSlash(t.Dir),
			Index: "../index.html", Assets: "../assets/", Notice: rr.Lock.Notice, Experiment: page.Title, Replacements: reps,
			Live: opts.Live, State: t.State, Reason: t.Reason,
		}}
		cands := []trialJob{j}
		if multi { // and a page of each step's own trial
			cands = append(cands, stepPages(j, suffix)...)
		}
		for _, j := range cands {
			if e, ok := m.Pages[j.page]; ok && e.Fingerprint == j.fp && exists(filepath.Join(report, j.page)) {
				continue
			}
			jobs = append(jobs, j)
		}
	}
	return jobs
}

// primaryMetrics are tried in order for a benchmark's grid value, as the
// tables choose a benchmark's metric.
var primaryMetrics = []string{"overall", "reward", "pass_rate"}

func primaryMetric(rows []runrecord.Row) map[string]string {
	have := map[string]map[string]bool{}
	for _, r := range rows {
		if have[r.Benchmark] == nil {
			have[r.Benchmark] = map[string]bool{}
		}
		have[r.Benchmark][r.Metric] = true
	}
	out := map[string]string{}
	for b, ms := range have {
		for _, m := range primaryMetrics {
			if ms[m] {
				out[b] = m
				break
			}
		}
		if out[b] == "" {
			var names []string
			for m := range ms {
				names = append(names, m)
			}
			sort.Strings(names)
			out[b] = names[0]
		}
	}
	return out
}

func formatValue(v float64) string {
	if math.Abs(v) >= 1000 {
		return strconv.FormatFloat(v, 'f', 0, 64)
	}
	return strconv.FormatFloat(v, 'g', 4, 64)
}

// fillGrid lays the trials out as task x (configuration, arm) and counts
// states; it reports whether the run is unfinished.
func fillGrid(p *indexPage, rr *runRecords) bool {
	g := newGridFill(p, rr)
	for _, sc := range servedCells(rr) {
		g.place(sc)
	}
	g.finish()
	return g.unfinished
}

// gridFinal is one evaluated checkpoint of a trial: its primary metric's
// value and the tokens spent up to it.
type gridFinal struct {
	cp     int
	value  float64
	tokens float64
}

type gridRowKey struct {
	bench, task string
	rep         int
}

// gridFill carries fillGrid's state between its steps.
type gridFill struct {
	p          *indexPage
	rr         *runRecords
	metric     map[string]string      // benchmark -> its grid metric
	evaluated  map[string][]gridFinal // trial key -> its evaluated checkpoints
	colIdx     map[gridColumn]int
	rowIdx     map[gridRowKey]int
	seen       map[string]map[string]bool // "b", "c", "a" -> the benchmarks, configurations, arms listed
	counts     map[string]int
	groups     map[gridColumn]*groupView
	unfinished bool
}

// newGridFill reads the evaluated checkpoints and lists the grid's metrics.
func newGridFill(p *indexPage, rr *runRecords) *gridFill {
	metric := primaryMetric(rr.Scores)
	// Every evaluated checkpoint of each trial: an arm served by a longer
	// trial of its series (vanilla by vanilla-continuation@3) shows its own
	// checkpoint, the trial's own arm its last.
	evaluated := map[string][]gridFinal{}
	for _, r := range rr.Scores {
		if r.Metric != metric[r.Benchmark] {
			continue
		}
		evaluated[r.Source] = append(evaluated[r.Source], gridFinal{r.Checkpoint, r.Value, r.Tokens})
	}
	for b, m := range metric {
		p.Metrics = append(p.Metrics, b+": "+m)
	}
	sort.Strings(p.Metrics)
	return &gridFill{p: p, rr: rr, metric: metric, evaluated: evaluated,
		colIdx: map[gridColumn]int{}, rowIdx: map[gridRowKey]int{},
		seen:   map[string]map[string]bool{"b": {}, "c": {}, "a": {}},
		counts: map[string]int{}, groups: map[gridColumn]*groupView{}}
}

// finalAt is the trial's latest evaluated checkpoint up to cp.
func (g *gridFill) finalAt(key string, cp int) (gridFinal, bool) {
	best, ok := gridFinal{}, false
	for _, f := range g.evaluated[key] {
		if f.cp <= cp && (!ok || f.cp > best.cp) {
			best, ok = f, true
		}
	}
	return best, ok
}

// servedCells lists every trial once in the column of each arm it serves.
func servedCells(rr *runRecords) []servedCell {
	var cells []servedCell
	for _, t := range rr.Trials {
		for i, arm := range t.Served {
			tc := t
			tc.Arm = arm.String()
			cells = append(cells, servedCell{tc, arm.Checkpoint, i == len(t.Served)-1})
		}
	}
	return cells
}

// place puts one served cell in its row and column, adding either when
// new, and counts it in its group and, for its own arm, in the totals.
func (g *gridFill) place(sc servedCell) {
	p, t := g.p, sc.trialEntry
	col := gridColumn{t.Config, t.Arm}
	if _, ok := g.colIdx[col]; !ok {
		g.colIdx[col] = len(p.Columns)
		p.Columns = append(p.Columns, col)
		g.groups[col] = &groupView{Config: t.Config, Arm: t.Arm}
		p.Groups = append(p.Groups, groupView{})
	}
	g.listFilters(t)
	rk := gridRowKey{t.Benchmark, t.Task, t.Rep}
	if _, ok := g.rowIdx[rk]; !ok {
		g.rowIdx[rk] = len(p.Rows)
		p.Rows = append(p.Rows, gridRow{Benchmark: t.Benchmark, Task: t.Task, Rep: t.Rep})
	}
	gv := g.groups[col]
	c := g.cell(sc, gv)
	if c.HasValue && !sc.own {
		gv.Tokens += c.Tokens // up to the arm's checkpoint
	} else {
		gv.Tokens += t.Tokens
	}
	if t.Replacements > 0 {
		c.Class += " replaced"
	}
	if sc.own { // the counts are of trials, once each
		g.counts[c.StatusCategory]++
		if t.Replacements > 0 {
			g.counts["replaced"]++
		}
	}
	if c.Class != "ok" { // a completed cell says all in its text and headers
		c.Title = cellTitle(t, c)
	}
	row := &p.Rows[g.rowIdx[rk]]
	for len(row.Cells) <= g.colIdx[col] {
		row.Cells = append(row.Cells, gridCell{})
	}
	row.Cells[g.colIdx[col]] = c
}

// listFilters adds the trial's benchmark, configuration and arm to the
// filters' lists the first time each is seen.
func (g *gridFill) listFilters(t trialEntry) {
	p := g.p
	for k, v := range map[string]string{"b": t.Benchmark, "c": t.Config, "a": t.Arm} {
		if !g.seen[k][v] {
			g.seen[k][v] = true
			switch k {
			case "b":
				p.Benchmarks = append(p.Benchmarks, v)
			case "c":
				p.Configs = append(p.Configs, v)
			case "a":
				p.Arms = append(p.Arms, v)
			}
		}
	}
}

// cell is the served cell as the grid shows it, by the trial's state,
// counted in its group gv.
func (g *gridFill) cell(sc servedCell, gv *groupView) gridCell {
	t := sc.trialEntry
	c := gridCell{Present: true, Key: t.Key, State: t.State, Status: t.Status, Tokens: t.Tokens,
		Replaced: t.Replacements, Metric: g.metric[t.Benchmark]}
	switch runrecord.State(t.State) {
	case runrecord.StateDone:
		gv.Done++
		c.Href = "trials/" + t.Key + ".html"
		if f, ok := g.finalAt(t.Key, sc.cp); ok {
			c.HasValue, c.Num, c.Value, c.Checkpoint, c.Tokens = true, f.value, formatValue(f.value), f.cp, int64(f.tokens)
		}
		switch t.Status {
		case "completed":
			c.StatusCategory, c.Class = catCompleted, "ok"
		case "evaluation_failed":
			c.StatusCategory, c.Class = catEvalFailed, "evalfail"
		default:
			c.StatusCategory, c.Class = catFailed, "fail"
		}
	case runrecord.StateFailed:
		// A protocol failure still has its evaluated checkpoints.
		gv.Failed++
		c.StatusCategory, c.Class = catFailed, "fail"
		if t.Status == "evaluation_failed" {
			c.StatusCategory, c.Class = catEvalFailed, "evalfail"
		}
		if tl := (runrecord.RunLayout{Dir: g.rr.Dir}.Trial(t.Dir)); exists(tl.Spec()) || tl.MultiStep() {
			c.Href = "trials/" + t.Key + ".html"
		}
		if f, ok := g.finalAt(t.Key, sc.cp); ok {
			c.HasValue, c.Num, c.Value, c.Checkpoint, c.Tokens = true, f.value, formatValue(f.value), f.cp, int64(f.tokens)
		}
	case runrecord.StateRunning:
		gv.Running++
		g.unfinished = true
		c.StatusCategory, c.Class, c.Href = catRunning, "running", "trials/"+t.Key+".html"
	case runrecord.StateBudget:
		gv.NotRun++
		c.StatusCategory, c.Class = catMissing, "missing"
	default:
		gv.Remaining++
		g.unfinished = true
		c.StatusCategory, c.Class = catMissing, "missing"
	}
	return c
}

// finish pads the rows to every column, copies the groups' counts and
// lists the states present, in a fixed order.
func (g *gridFill) finish() {
	p := g.p
	for i := range p.Rows {
		for len(p.Rows[i].Cells) < len(p.Columns) {
			p.Rows[i].Cells = append(p.Rows[i].Cells, gridCell{})
		}
	}
	for i, col := range p.Columns {
		p.Groups[i] = *g.groups[col]
	}
	for _, s := range []struct{ label, class string }{
		{catCompleted, "ok"}, {catEvalFailed, "evalfail"}, {catFailed, "fail"}, {catRunning, "running"}, {catMissing, "missing"}, {"replaced", "replaced"},
	} {
		if g.counts[s.label] > 0 {
			p.Counts = append(p.Counts, countView{s.label, s.class, g.counts[s.label]})
			if s.label != "replaced" {
				p.Statuses = append(p.Statuses, s.label)
			}
		}
	}
}

// servedCell is one trial in the column of one arm it serves (cp: that
// arm's checkpoint; own: the arm the trial runs, whose counts it makes).
type servedCell struct {
	trialEntry
	cp  int
	own bool
}

func cellTitle(t trialEntry, c gridCell) string {
	parts := []string{fmt.Sprintf("%s %s %s rep %d", t.Config, t.Arm, t.Task, t.Rep), t.State}
	if t.Status != "" {
		parts = append(parts, t.Status)
	}
	if c.HasValue {
		parts = append(parts, fmt.Sprintf("%s at checkpoint %d = %s, %d tokens", c.Metric, c.Checkpoint, c.Value, c.Tokens))
	}
	if t.Replacements > 0 {
		parts = append(parts, fmt.Sprintf("%d replaced attempt(s)", t.Replacements))
	}
	if t.Reason != "" {
		parts = append(parts, t.Reason)
	}
	return strings.Join(parts, "; ")
}
