package main

// hoh view of a project run through the REAL Codex CLI: here, above both
// experiments (which writes the project) and analysis (which reads it).

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"gopkg.in/yaml.v3"

	"github.com/hoh-research/hoh/adapters/scripted"
	"github.com/hoh-research/hoh/analysis/viewer"
	"github.com/hoh-research/hoh/experiments/config"
	"github.com/hoh-research/hoh/experiments/project"
	"github.com/hoh-research/hoh/internal/testenv"
	"github.com/hoh-research/hoh/internal/testenv/browserenv"
	"github.com/hoh-research/hoh/internal/testenv/clienv"
	"github.com/hoh-research/hoh/runrecord"
)

// projectScript is the scripted provider's script (the provider is a TEST
// DOUBLE for the model): the Planner and Developer answer the same every
// loop (the Developer appends a line to app.sh through Codex's shell tool),
// and the QA Tester runs the commands its claims name (so its tool log backs
// them) and reports a fixed schedule: loop 1 gaps "version" and
// "help"; loop 2 verifies "version"; loop 3 finds "version" broken again
// and verifies "help".
func projectScript() scripted.Script {
	claim := func(id, text, status string) runrecord.Claim {
		return runrecord.Claim{ClaimID: id, Claim: text, Status: status,
			ExecutionRecords: []runrecord.ExecutionRecord{{Type: "command", Command: "sh app.sh --" + id, Observation: "app"}}} // what app.sh prints, as the QA shell recorded it
	}
	s := scripted.Script{Entries: []scripted.Entry{
		{Name: "planner", Match: `Role: Project Planner \(project loop \d+\)`, Repeat: true, Steps: []scripted.Step{{Say: `{"objective":"grow app.sh","tasks":[{"id":"T1","description":"extend app.sh"}],"preserve":[],"acceptance":[{"id":"R1","requirement":"app.sh runs","observation":"sh app.sh"}]}`}}},
		{Name: "developer", Match: `Role: Developer \(project loop \d+\)`, Repeat: true, Steps: []scripted.Step{
			{Shell: "echo 'echo more' >> app.sh"}, {Say: `{"summary":"appended a line","self_tests":[{"command":"sh app.sh","outcome":"ok"}]}`}}},
	}}
	for loop := 1; loop <= 3; loop++ {
		version, help := claim("version", "app.sh --version prints the version", "gap"), claim("help", "app.sh --help prints usage", "gap")
		r := runrecord.QAReport{Iteration: loop, QAStatus: "partial"}
		switch loop {
		case 1:
			r.GapRecords = []runrecord.Claim{version, help}
		case 2:
			version.Status = "verified"
			r.VerifiedRecords, r.GapRecords = []runrecord.Claim{version}, []runrecord.Claim{help}
		default:
			help.Status = "verified"
			r.VerifiedRecords, r.GapRecords = []runrecord.Claim{help}, []runrecord.Claim{version}
		}
		b, _ := json.Marshal(r)
		s.Entries = append(s.Entries, scripted.Entry{Name: fmt.Sprintf("qa-%d", loop), Match: fmt.Sprintf(`Role: QA Tester \(project loop %d\)`, loop),
			Repeat: true, Steps: []scripted.Step{{Shell: "sh app.sh --version"}, {Shell: "sh app.sh --help"}, {Say: string(b)}}})
	}
	return s
}

// runTestProject makes a project and runs three loops through the REAL
// Codex CLI against the scripted test-double provider.
func runTestProject(t *testing.T) string {
	t.Helper()
	bin := clienv.CLI(t, "codex")
	root := t.TempDir()
	dir := filepath.Join(root, "app")
	mustOK(t, os.MkdirAll(dir, 0o755))
	mustOK(t, os.WriteFile(filepath.Join(dir, "app.sh"), []byte("#!/bin/sh\necho app\n"), 0o755))
	spec := filepath.Join(root, "SPEC.md")
	mustOK(t, os.WriteFile(spec, []byte("# App\n\napp.sh with --version and --help.\n"), 0o644))
	script, err := yaml.Marshal(projectScript())
	mustOK(t, err)
	scriptPath := filepath.Join(root, "script.yaml")
	mustOK(t, os.WriteFile(scriptPath, script, 0o644))
	c := project.Config{Checks: []project.Check{{Name: "build", Command: "sh -n app.sh"}}}
	c.Harness.Harness, c.Harness.Binary = "codex", bin
	c.Harness.Provider.Name, c.Harness.Provider.Model, c.Harness.Provider.API = "scripted", "scripted-model", "responses"
	c.Harness.Provider.KeyEnv = "HOH_SCRIPTED_KEY"
	c.Harness.Scripted = &config.ScriptedSpec{Script: scriptPath}
	c.Timeouts = config.Timeouts{Planner: 2 * time.Minute, Developer: 2 * time.Minute, QA: 2 * time.Minute, Idle: time.Minute}
	if _, err := project.Init(project.InitOptions{Project: dir, Spec: spec, Config: c}); err != nil {
		t.Fatal(err)
	}
	res, err := project.Run(context.Background(), dir, project.RunOptions{Limits: project.RunLimits{Loops: 3}})
	if err != nil || res.Loops != 3 {
		t.Fatalf("project run: %+v %v", res, err)
	}
	return dir
}

func TestProjectReportInABrowser(t *testing.T) {
	dir := runTestProject(t)
	res, err := viewer.Build(dir, viewProjectOpts(t))
	if err != nil {
		t.Fatal(err)
	}
	want := filepath.Join(runrecord.ProjectLayout{Project: dir}.State(), viewer.ReportDir, "index.html")
	if res.Index != want || res.Trials != 3 {
		t.Fatalf("project report %s with %d loop pages, want %s and 3", res.Index, res.Trials, want)
	}
	issues, err := project.ReadIssues(dir)
	if err != nil || len(issues) != 2 {
		t.Fatalf("issues %+v %v", issues, err)
	}
	// Served: the report and the evidence it links; never the artifact's
	// files or the repository.
	srv, err := viewer.NewServer(dir, viewProjectOpts(t), time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv)
	defer hs.Close()
	for p, want := range map[string]int{"/report/index.html": 200, "/report/loops/loop-02.html": 200,
		"/trial/iter-02/qa/evidence.json": 200, "/../../app.sh": 404, "/../config": 404, "/hoh-project.yaml/../../HEAD": 404} {
		req, _ := http.NewRequest("GET", hs.URL, nil)
		req.URL.Opaque = p
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Errorf("GET %s: %d, want %d", p, resp.StatusCode, want)
		}
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
		if is.State == runrecord.IssueReopened {
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
	// The dynamics plot (hoh plot dynamics) is drawn, and the loop table
	// holds dynamics.csv's counts.
	width, _ := chromedp.Run(ctx, chromedp.Evaluate[int](`document.getElementById("dynamics-plot").naturalWidth`))
	if width == 0 {
		t.Error("the dynamics plot did not load")
	}
	dyn, err := runrecord.ReadDynamics(runrecord.ProjectLayout{Project: dir}.Dynamics())
	if err != nil || len(dyn) != 3 {
		t.Fatalf("dynamics.csv: %+v %v", dyn, err)
	}
	counts, _ := chromedp.Run(ctx, chromedp.Evaluate[[]string](`Array.from(document.querySelectorAll("#loop-table tbody tr")).map(r => Array.from(r.cells).slice(3, 7).map(c => c.textContent).join(","))`))
	for i, d := range dyn {
		if want := fmt.Sprintf("%d,%d,%d,%d", d.New, d.Closed, d.Reopened, d.Unresolved); i >= len(counts) || counts[i] != want {
			t.Errorf("loop %d: table shows %v, dynamics.csv %s", d.Loop, counts, want)
		}
	}
	if d := os.Getenv("HOH_VIEW_SCREENSHOTS"); d != "" {
		buf, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
		mustOK(t, err)
		mustOK(t, os.WriteFile(filepath.Join(d, "view-project.png"), buf, 0o644))
	}
	// Loop 2's page: its D_2 and the verified "version" claim.
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`#loop-table a[href="loops/loop-02.html"]`)), chromedp.WaitVisible(chromedp.CSS("#t2"))); err != nil {
		t.Fatal(err)
	}
	objective, _ := chromedp.Run(ctx, chromedp.TextContent(chromedp.CSS("#t2 .dt-objective")))
	verified, _ := chromedp.Run(ctx, chromedp.TextContent(chromedp.CSS("#t2 .verified")))
	diff, _ := chromedp.Run(ctx, chromedp.TextContent(chromedp.CSS("#t2 .diff")))
	if objective != "grow app.sh" || !strings.Contains(verified, "--version prints the version") || !strings.Contains(diff, "echo more") {
		t.Errorf("loop 2 page: objective %q, verified %q, diff %q", objective, verified, diff)
	}
	others, _ := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll("section.iteration").length`))
	if others != 1 {
		t.Errorf("loop page shows %d loops, want 1", others)
	}
	if os.Getenv("HOH_VIEW_SCREENSHOTS") != "" {
		buf, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
		mustOK(t, err)
		mustOK(t, os.WriteFile(filepath.Join(os.Getenv("HOH_VIEW_SCREENSHOTS"), "view-project-loop.png"), buf, 0o644))
	}
}

func viewProjectOpts(t testing.TB) viewer.Options {
	return viewer.Options{TableConfigDir: filepath.Join(testenv.RepoRoot(t), "configs", "paper"),
		Now: func() time.Time { return time.Unix(1700000000, 0) }}
}

func mustOK(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
