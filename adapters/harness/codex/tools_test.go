package codex

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/BurntSushi/toml"

	"github.com/hoh-research/hoh/adapters/harness"
	"github.com/hoh-research/hoh/runrecord"
)

// config.toml names the role's MCP servers: stdio as command and args, HTTP
// as url; the Planner's has none. Codex refuses sse servers at plan time.
func TestConfigTOMLGivesTheRolesMCPServers(t *testing.T) {
	h := testHarness(t, true)
	h.cfg.Tools = harness.TaskTools{MCP: []harness.MCPServer{
		{Name: "mcp-server", Transport: harness.MCPStreamableHTTP, URL: "http://mcp-server:8000/mcp", InEnvironment: true},
		{Name: "files", Transport: harness.MCPStdio, Command: "/srv", Args: []string{"-x"}, InEnvironment: true},
		{Name: "far", Transport: harness.MCPStreamableHTTP, URL: "https://example.com/mcp"},
	}}
	read := func(role runrecord.Role) map[string]map[string]any {
		dir := t.TempDir()
		if err := h.writeConfig(dir, role); err != nil {
			t.Fatal(err)
		}
		var cfg struct {
			MCP map[string]map[string]any `toml:"mcp_servers"`
		}
		if _, err := toml.DecodeFile(dir+"/config.toml", &cfg); err != nil {
			t.Fatal(err)
		}
		return cfg.MCP
	}
	dev := read(runrecord.RoleDeveloper)
	if dev["mcp-server"]["url"] != "http://mcp-server:8000/mcp" || dev["files"]["command"] != "/srv" || len(dev) != 3 {
		t.Errorf("developer's servers %v", dev)
	}
	if qa := read(runrecord.RoleQA); len(qa) != 2 || qa["far"] != nil {
		t.Errorf("QA's servers %v", qa)
	}
	if pl := read(runrecord.RolePlanner); len(pl) != 0 {
		t.Errorf("planner's servers %v", pl)
	}
	err := CLI.CheckTools("", harness.TaskTools{MCP: []harness.MCPServer{{Name: "old", Transport: harness.MCPSSE, URL: "http://x/sse"}}})
	if err == nil || !strings.Contains(err.Error(), "sse") {
		t.Errorf("sse accepted: %v", err)
	}
}

// An mcp_tool_call item (as Codex 0.171 wrote it calling hello-mcp's
// server) is recorded with its arguments and the server's text answer.
func TestMCPToolCallIsRecordedWithItsResult(t *testing.T) {
	line := `{"type":"item.completed","item":{"id":"item_1","type":"mcp_tool_call","server":"mcp-server","tool":"get_secret","arguments":{},"result":{"content":[{"type":"text","text":"harbor-mcp-secret-12345"}],"structured_content":null},"error":null,"status":"completed"}}`
	rep := ParseEvents([]json.RawMessage{json.RawMessage(line)})
	if len(rep.Tools) != 1 || rep.Tools[0].Name != "mcp:mcp-server/get_secret" || rep.Tools[0].Input != "{}" ||
		rep.Tools[0].Output == nil || *rep.Tools[0].Output != "harbor-mcp-secret-12345" {
		t.Errorf("tools %+v", rep.Tools)
	}
}
