package opencode

import (
	"encoding/json"
	"testing"

	"github.com/hoh-research/hoh/adapters/harness"
	"github.com/hoh-research/hoh/runrecord"
)

// The config's "mcp" holds the role's servers (local: one command list;
// remote: url); the Planner gets none but may load skills.
func TestConfigGivesTheRolesMCPServers(t *testing.T) {
	h := &Harness{cfg: Config{Provider: harness.Provider{Name: "ds", API: "chat", BaseURL: "http://x/v1", KeyEnv: "K", Model: "m"},
		Tools: harness.TaskTools{SkillsDir: "/skills", MCP: []harness.MCPServer{
			{Name: "files", Transport: harness.MCPStdio, Command: "/srv", Args: []string{"-x"}, InEnvironment: true},
			{Name: "far", Transport: harness.MCPSSE, URL: "https://example.com/sse"},
		}}}}
	read := func(access harness.Access, role runrecord.Role) (cfg struct {
		MCP        map[string]map[string]any `json:"mcp"`
		Permission map[string]string         `json:"permission"`
	}) {
		s, err := h.configJSON(access, role)
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal([]byte(s), &cfg); err != nil {
			t.Fatal(err)
		}
		return cfg
	}
	dev := read(harness.AccessWrite, runrecord.RoleDeveloper)
	if dev.MCP["far"]["type"] != "remote" || dev.MCP["files"]["type"] != "local" || len(dev.MCP["files"]["command"].([]any)) != 2 {
		t.Errorf("developer's mcp %v", dev.MCP)
	}
	if qa := read(harness.AccessExec, runrecord.RoleQA); len(qa.MCP) != 1 {
		t.Errorf("QA's mcp %v", qa.MCP)
	}
	pl := read(harness.AccessReadOnly, runrecord.RolePlanner)
	if len(pl.MCP) != 0 || pl.Permission["skill"] != "allow" || pl.Permission["*"] != "deny" {
		t.Errorf("planner %+v", pl)
	}
}
