package project

// Integration test: a project run by a role team of three REAL CLIs, each
// against its own scripted TEST-DOUBLE provider: Claude Code plans
// (Anthropic Messages), Codex develops (Responses), OpenCode tests (Chat
// Completions). The providers are test doubles: nothing here is a model's
// work, only the wiring of each role to its own CLI, key and provider.

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/hoh-research/hoh/experiments/config"
	"github.com/hoh-research/hoh/experiments/provider"
	"github.com/hoh-research/hoh/experiments/served"
	"github.com/hoh-research/hoh/internal/testenv"
	"github.com/hoh-research/hoh/internal/testenv/clienv"
	"github.com/hoh-research/hoh/runrecord"
)

// teamRolesFile writes a roles file as a user would for hoh project init
// --roles: the Planner on Claude Code, the QA Tester on OpenCode, each on
// its own scripted model; the script path relative to the file.
func teamRolesFile(t *testing.T, root string) string {
	t.Helper()
	text := "planner:\n" +
		"  harness: claude\n  binary: " + clienv.CLI(t, "claude") + "\n" +
		"  provider: {name: scripted, api: anthropic, key_env: HOH_SCRIPTED_KEY, model: scripted-planner}\n" +
		"  scripted: {script: script.yaml}\n" +
		"qa:\n" +
		"  harness: opencode\n  binary: " + clienv.CLI(t, "opencode") + "\n" +
		"  provider: {name: scripted, api: chat, key_env: HOH_SCRIPTED_KEY, model: scripted-qa}\n" +
		"  scripted: {script: script.yaml}\n"
	path := filepath.Join(root, "roles.yaml")
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestARoleTeamProjectRunsEachRoleThroughItsOwnCLI(t *testing.T) {
	t.Parallel() // long: overlaps with the other project tests
	const loops = 2
	sched := schedule(70)
	root := t.TempDir()
	data, err := yaml.Marshal(codexScript(sched, loops))
	if err != nil {
		t.Fatal(err)
	}
	scriptPath := filepath.Join(root, "script.yaml")
	if err := os.WriteFile(scriptPath, data, 0o644); err != nil {
		t.Fatal(err)
	}
	roles, err := config.LoadRoles(teamRolesFile(t, root))
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(root, "app")
	if err := newTestProject(dir, func(c *Config) {
		c.Harness.Binary = clienv.CLI(t, "codex")
		c.Harness.Provider.Model = "scripted-developer"
		c.Harness.Scripted = &config.ScriptedSpec{Script: scriptPath}
		c.Harness.Roles = roles
		c.Timeouts = config.Timeouts{Planner: 3 * time.Minute, Developer: 3 * time.Minute, QA: 3 * time.Minute, Idle: 2 * time.Minute}
	}); err != nil {
		t.Fatal(err)
	}
	res, err := Run(context.Background(), dir, RunOptions{Limits: RunLimits{Loops: loops}})
	if err != nil {
		t.Fatal(err)
	}
	if res.Loops != loops || res.Reason != StopLoops {
		t.Fatalf("run: %+v", res)
	}
	checkSchedule(t, dir, sched, loops)
	l := runrecord.ProjectLayout{Project: dir}
	checkTeamServed(t, l)
	for role, w := range map[runrecord.Role]struct{ log, model string }{
		runrecord.RolePlanner:   {l.RoleProviderLog(runrecord.RolePlanner), "scripted-planner"},
		runrecord.RoleDeveloper: {l.ProviderLog(), "scripted-developer"},
		runrecord.RoleQA:        {l.RoleProviderLog(runrecord.RoleQA), "scripted-qa"},
	} {
		models := testenv.RequestModels(t, w.log)
		if len(models) == 0 || slices.ContainsFunc(models, func(m string) bool { return m != w.model }) {
			t.Errorf("%s: %s served models %v, want only %s", role, filepath.Base(w.log), models, w.model)
		}
	}
	// The same roles again: the identity holds; another QA model is a
	// changed configuration, refused without --force.
	if _, err := Run(context.Background(), dir, RunOptions{Limits: RunLimits{Loops: loops}}); err != nil {
		t.Fatalf("a resumed project with the same team: %v", err)
	}
	c, err := LoadConfig(dir)
	if err != nil {
		t.Fatal(err)
	}
	c.Harness.Roles.QA.Provider.Model = "scripted-qa-2"
	out, err := yaml.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(l.Config(), out, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Run(context.Background(), dir, RunOptions{Limits: RunLimits{Loops: loops}}); err == nil || !strings.Contains(err.Error(), `qa model "scripted-qa" -> "scripted-qa-2"`) {
		t.Errorf("a changed QA model: %v", err)
	}
	if s, err := ReadStatus(dir); err != nil || !strings.Contains(s.Team, "claude") || !strings.Contains(s.Team, "opencode") {
		t.Errorf("status team %+v, %v", s, err)
	}
	rep, err := Report(dir)
	if err != nil {
		t.Fatal(err)
	}
	text, _ := os.ReadFile(rep)
	for _, want := range []string{"Planner claude (anthropic scripted-planner)", "Developer codex (responses", "QA Tester opencode (chat scripted-qa", "scripted test double"} {
		if !strings.Contains(string(text), want) {
			t.Errorf("the project report does not name the team (%q):\n%s", want, text)
		}
	}
	testenv.AssertNoSecret(t, provider.ScriptedKeyValue, l.Trial())
}

// checkTeamServed: in the project's one relay log, every model request of
// a role's attempt went to its own CLI's wire API (Claude Code: Messages,
// Codex: Responses, OpenCode: Chat Completions), and every role made some.
func checkTeamServed(t *testing.T, l runrecord.ProjectLayout) {
	t.Helper()
	want := map[string]string{"planner": "/messages", "developer": "/responses", "qa": "/chat/completions"}
	seen := map[string]int{}
	lines, _, err := served.Read(filepath.Join(l.State(), "relay.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range lines {
		if !served.IsModelRequest(line) {
			continue
		}
		for role, api := range want {
			if strings.Contains(line.Attempt, "/"+role+"/") {
				seen[role]++
				if !strings.HasSuffix(line.Path, api) {
					t.Errorf("attempt %s requested %s, want its CLI's %s", line.Attempt, line.Path, api)
				}
			}
		}
	}
	for role := range want {
		if seen[role] == 0 {
			t.Errorf("the relay log has no model request of the %s", role)
		}
	}
}
