package harness

import (
	"testing"

	"github.com/hoh-research/hoh/runrecord"
)

// The Developer gets every MCP server, the QA Tester those running in its
// own container, the Planner none; every role gets the skills.
func TestTaskToolsPerRole(t *testing.T) {
	tools := TaskTools{SkillsDir: "/skills", MCP: []MCPServer{
		{Name: "local", Transport: MCPStdio, Command: "srv", InEnvironment: true},
		{Name: "sidecar", Transport: MCPStreamableHTTP, URL: "http://db:8000/mcp", InEnvironment: true},
		{Name: "remote", Transport: MCPStreamableHTTP, URL: "https://example.com/mcp"},
	}}
	for role, want := range map[runrecord.Role]int{runrecord.RoleDeveloper: 3, runrecord.RoleQA: 2, runrecord.RolePlanner: 0} {
		if got := tools.MCPFor(role); len(got) != want {
			t.Errorf("%s gets %d servers, want %d: %+v", role, len(got), want, got)
		}
		if tools.SkillsFor(role) != "/skills" {
			t.Errorf("%s gets no skills", role)
		}
	}
	for _, s := range tools.MCPFor(runrecord.RoleQA) {
		if s.Name == "remote" {
			t.Error("QA got a server outside its environment")
		}
	}
	if (TaskTools{}).Empty() != true || tools.Empty() {
		t.Error("Empty")
	}
}
