package runrecord

import "testing"

func TestTeamIsSpelledOutInTheRolesOrder(t *testing.T) {
	team := Team{
		RoleQA:        {Harness: "opencode", Version: "1.18.33", API: "chat", Model: "judge"},
		RolePlanner:   {Agent: "cheap", Harness: "claude", API: "anthropic", Model: "small"},
		RoleDeveloper: {Harness: "codex", Model: "large"},
	}
	want := "Planner cheap: claude (anthropic small) · Developer codex (large) · QA Tester opencode 1.18.33 (chat judge)"
	if got := team.String(); got != want {
		t.Errorf("got  %q\nwant %q", got, want)
	}
	if got := Team(nil).String(); got != "" {
		t.Errorf("no team spelled %q", got)
	}
}
