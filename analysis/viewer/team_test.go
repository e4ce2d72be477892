package viewer

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/hoh-research/hoh/runrecord"
)

// The trial page of a role team spells the team out, role by role, with
// each role's agent, CLI, API and model (escaped like every record text).
func TestTrialPageShowsTheTeam(t *testing.T) {
	dir := t.TempDir()
	trials := writeSynthRun(t, dir, synthOpts{Tasks: 1, Configs: []string{"cfg"}, Arms: []string{"hoh@2"}})
	path := runrecord.RunLayout{Dir: dir}.Trial(trials[0].Dir).Summary()
	var s runrecord.Summary
	must(t, runrecord.ReadJSON(path, &s))
	s.Team = runrecord.Team{
		runrecord.RolePlanner:   {Agent: "cheap", Harness: "opencode", Version: "1.2.3", API: "chat", Model: "small<b>"},
		runrecord.RoleDeveloper: {Agent: "strong", Harness: "codex", Version: "0.9", API: "responses", Model: "large"},
		runrecord.RoleQA:        {Harness: "claude", Version: "2.0", API: "anthropic", Model: "judge"},
	}
	must(t, writeJSON(path, s))
	if _, err := Build(dir, testOpts(t)); err != nil {
		t.Fatal(err)
	}
	page := read(t, filepath.Join(dir, ReportDir, "trials", trials[0].Key+".html"))
	want := "team: Planner cheap: opencode 1.2.3 (chat small&lt;b&gt;) · Developer strong: codex 0.9 (responses large) · QA Tester claude 2.0 (anthropic judge)"
	if !strings.Contains(page, want) {
		i := strings.Index(page, "team:")
		t.Errorf("want %q on the trial page; it says %q", want, page[max(i, 0):min(max(i, 0)+300, len(page))])
	}
}
