package viewer

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/hoh-research/hoh/adapters/harness"
	"github.com/hoh-research/hoh/experiments/project"
	"github.com/hoh-research/hoh/experiments/roles"
	"github.com/hoh-research/hoh/internal/testenv/browserenv"
)

// projectDouble is an in-process TEST DOUBLE for a harness CLI and its
// model (no model is involved): the Planner and Developer answer at once
// (the Developer appends a line to app.sh), and the QA Tester reports a
// fixed schedule: loop 1 gaps "version" and "help"; loop 2 verifies
// "version"; loop 3 finds "version" broken again and verifies "help".
type projectDouble struct{}

var projectLoopRe = regexp.MustCompile(`Role: (Project Planner|Developer|QA Tester) \(project loop (\d+)\)`)

func (projectDouble) Name() string    { return "fake" }
func (projectDouble) Version() string { return "test-double" }

func (projectDouble) Run(ctx context.Context, inv harness.Invocation) (harness.Result, error) {
	m := projectLoopRe.FindStringSubmatch(inv.Prompt)
	if m == nil {
		return harness.Result{Outcome: harness.OutcomeAgentFailure, Evidence: "unexpected prompt"}, nil
	}
	loop, _ := strconv.Atoi(m[2])
	res := harness.Result{Outcome: harness.OutcomeCompleted, Usage: harness.Usage{Input: 100 * int64(loop), Output: 10, Total: 100*int64(loop) + 10}, Duration: time.Millisecond}
	claim := func(id, text, status string) roles.Claim {
		return roles.Claim{ClaimID: id, Claim: text, Status: status,
			ExecutionRecords: []roles.ExecutionRecord{{Type: "command", Command: "sh app.sh --" + id, Observation: status}}}
	}
	version, help := claim("version", "app.sh --version prints the version", "gap"), claim("help", "app.sh --help prints usage", "gap")
	switch m[1] {
	case "Project Planner":
		res.FinalMessage = fmt.Sprintf(`{"objective":"loop %d: grow app.sh","tasks":[{"id":"T1","description":"extend app.sh"}],"preserve":[],"acceptance":[{"id":"R1","requirement":"app.sh runs","observation":"sh app.sh"}]}`, loop)
	case "Developer":
		f, err := os.OpenFile(filepath.Join(inv.WorkDir, "app.sh"), os.O_APPEND|os.O_WRONLY, 0)
		if err != nil {
			return res, err
		}
		fmt.Fprintf(f, "echo loop %d\n", loop)
		f.Close()
		res.FinalMessage = `{"summary":"appended a line","self_tests":[{"command":"sh app.sh","outcome":"ok"}]}`
	case "QA Tester":
		r := roles.QAReport{Iteration: loop, QAStatus: "partial"}
		switch loop {
		case 1:
			r.GapRecords = []roles.Claim{version, help}
		case 2:
			version.Status = "verified"
			r.VerifiedRecords, r.GapRecords = []roles.Claim{version}, []roles.Claim{help}
		default:
			help.Status = "verified"
			r.VerifiedRecords, r.GapRecords = []roles.Claim{help}, []roles.Claim{version}
		}
		b, _ := json.Marshal(r)
		res.FinalMessage = string(b)
	}
	return res, nil
}

// runTestProject makes a project and runs three loops with the test double.
func runTestProject(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "app")
	must(t, os.MkdirAll(dir, 0o755))
	must(t, os.WriteFile(filepath.Join(dir, "app.sh"), []byte("#!/bin/sh\necho app\n"), 0o755))
	spec := filepath.Join(filepath.Dir(dir), "SPEC.md")
	must(t, os.WriteFile(spec, []byte("# App\n\napp.sh with --version and --help.\n"), 0o644))
	c := project.Config{Checks: []project.Check{{Name: "build", Command: "sh -n app.sh"}}}
	c.Harness.Harness = "codex"
	c.Harness.Provider.Name, c.Harness.Provider.Model, c.Harness.Provider.API = "none", "test-double", "responses"
	c.Harness.Provider.KeyEnv = "HOH_SCRIPTED_KEY"
	if _, err := project.Init(project.InitOptions{Project: dir, Spec: spec, Config: c}); err != nil {
		t.Fatal(err)
	}
	res, err := project.Run(context.Background(), dir, project.RunOptions{Limits: project.RunLimits{Loops: 3}, Harness: projectDouble{}})
	if err != nil || res.Loops != 3 {
		t.Fatalf("project run: %+v %v", res, err)
	}
	return dir
}

func TestProjectReportInABrowser(t *testing.T) {
	dir := runTestProject(t)
	res, err := Build(dir, testOpts(t))
	if err != nil {
		t.Fatal(err)
	}
	want := filepath.Join(dir, ".hoh", ReportDir, "index.html")
	if res.Index != want || res.Trials != 3 {
		t.Fatalf("project report %s with %d loop pages, want %s and 3", res.Index, res.Trials, want)
	}
	issues, err := project.ReadIssues(dir)
	if err != nil || len(issues) != 2 {
		t.Fatalf("issues %+v %v", issues, err)
	}
	ctx := browserenv.New(t, 2*time.Minute)
	if err := chromedp.Do(ctx, chromedp.Navigate("file://"+res.Index), chromedp.WaitVisible(chromedp.CSS("#issue-table"))); err != nil {
		t.Fatal(err)
	}
	rows := `Array.from(document.querySelectorAll("#issue-table tbody tr")).filter(r => !r.hidden).map(r => r.dataset.issue + ":" + r.dataset.state)`
	shown, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](rows))
	if err != nil {
		t.Fatal(err)
	}
	var fromRecords []string
	var reopened string
	for _, is := range issues {
		fromRecords = append(fromRecords, is.ID+":"+is.State)
		if is.State == project.Reopened {
			reopened = is.ID + ":" + is.State
		}
	}
	if strings.Join(shown, ",") != strings.Join(fromRecords, ",") || reopened == "" {
		t.Errorf("issue table shows %v, issues.jsonl has %v", shown, fromRecords)
	}
	if err := chromedp.Do(ctx, chromedp.SetValue(chromedp.CSS("#issue-filter"), "reopened"),
		chromedp.Evaluate[chromedp.Void](`document.getElementById("issue-filter").dispatchEvent(new Event("change"))`)); err != nil {
		t.Fatal(err)
	}
	if shown, _ = chromedp.Run(ctx, chromedp.Evaluate[[]string](rows)); len(shown) != 1 || shown[0] != reopened {
		t.Errorf("reopened filter shows %v, want [%s]", shown, reopened)
	}
	points, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`document.querySelector('polyline[data-series="unresolved"]').getAttribute("points")`))
	if len(strings.Fields(points)) != 3 {
		t.Errorf("dynamics plot: unresolved series %q, want 3 loops", points)
	}
	// Loop 2's page: its D_2 and the verified "version" claim.
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`#loop-table a[href="loops/loop-02.html"]`)), chromedp.WaitVisible(chromedp.CSS("#t2"))); err != nil {
		t.Fatal(err)
	}
	objective, _ := chromedp.Run(ctx, chromedp.TextContent(chromedp.CSS("#t2 .dt-objective")))
	verified, _ := chromedp.Run(ctx, chromedp.TextContent(chromedp.CSS("#t2 .verified")))
	diff, _ := chromedp.Run(ctx, chromedp.TextContent(chromedp.CSS("#t2 .diff")))
	if objective != "loop 2: grow app.sh" || !strings.Contains(verified, "--version prints the version") || !strings.Contains(diff, "echo loop 2") {
		t.Errorf("loop 2 page: objective %q, verified %q, diff %q", objective, verified, diff)
	}
	others, _ := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll("section.iteration").length`))
	if others != 1 {
		t.Errorf("loop page shows %d loops, want 1", others)
	}
	if os.Getenv("HOH_VIEW_SCREENSHOTS") != "" {
		buf, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
		must(t, err)
		must(t, os.WriteFile(filepath.Join(os.Getenv("HOH_VIEW_SCREENSHOTS"), "view-project-loop.png"), buf, 0o644))
	}
}
