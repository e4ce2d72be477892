package claude

import (
	"slices"
	"strings"
	"testing"

	"github.com/hoh-research/hoh/adapters/harness"
)

// With MCP servers Claude Code gets --mcp-config and --strict-mcp-config and
// each server pre-approved; with skills it leaves --bare (which drops the
// Skill tool), reads only hoh's user settings and gets the Skill tool.
func TestArgvGivesMCPAndSkills(t *testing.T) {
	h := &Harness{cfg: Config{Binary: "claude", Provider: harness.Provider{Model: "m"}}}
	g := given{mcpConfig: "/s/hoh-mcp.json", servers: []string{"mcp-server"}, skills: true}
	dev := h.argv(harness.Invocation{Access: harness.AccessWrite}, g)
	i := slices.Index(dev, "--allowedTools")
	if i < 0 || !strings.Contains(dev[i+1], "mcp__mcp-server") || slices.Contains(dev, "--bare") ||
		!slices.Contains(dev, "--strict-mcp-config") || dev[slices.Index(dev, "--mcp-config")+1] != "/s/hoh-mcp.json" ||
		dev[slices.Index(dev, "--setting-sources")+1] != "user" || !strings.Contains(dev[slices.Index(dev, "--tools")+1], "Skill") {
		t.Errorf("developer argv %v", dev)
	}
	plan := h.argv(harness.Invocation{Access: harness.AccessReadOnly}, given{skills: true})
	if plan[slices.Index(plan, "--tools")+1] != "Read,Grep,Glob,Skill" || slices.Contains(plan, "--mcp-config") {
		t.Errorf("planner argv %v", plan)
	}
	if bare := h.argv(harness.Invocation{Access: harness.AccessWrite}, given{}); !slices.Contains(bare, "--bare") {
		t.Errorf("without tools %v", bare)
	}
	if !slices.Equal(ReadOnlyTools, []string{"Read", "Grep", "Glob"}) || slices.Contains(WriterTools, "Skill") {
		t.Error("the role tool lists were changed in place")
	}
}
