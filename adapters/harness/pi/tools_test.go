package pi

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/hoh-research/hoh/adapters/harness"
	"github.com/hoh-research/hoh/runrecord"
)

// mcp.json declares the role's servers with direct exposure and the
// built-in MCP extension is loaded for them; --skill names the task's
// skills directory. Pi before 0.99 (the paper's 0.80.10) is refused MCP.
func TestPiGivesMCPAndSkills(t *testing.T) {
	h := &Harness{cfg: Config{Tools: harness.TaskTools{SkillsDir: "/skills", MCP: []harness.MCPServer{
		{Name: "mcp-server", Transport: harness.MCPStreamableHTTP, URL: "http://mcp-server:8000/mcp", InEnvironment: true}}}}}
	dir := t.TempDir()
	if err := h.writeMCP(dir, runrecord.RoleDeveloper); err != nil {
		t.Fatal(err)
	}
	var cfg struct {
		Servers map[string]map[string]any `json:"mcpServers"`
	}
	b, _ := os.ReadFile(filepath.Join(dir, "mcp.json"))
	if err := json.Unmarshal(b, &cfg); err != nil || cfg.Servers["mcp-server"]["url"] != "http://mcp-server:8000/mcp" || cfg.Servers["mcp-server"]["exposure"] != "direct" {
		t.Errorf("mcp.json %s %v", b, err)
	}
	if args := h.toolArgs(runrecord.RoleDeveloper); !slices.Equal(args, []string{"-e", "builtin:mcp", "--skill", "/skills"}) {
		t.Errorf("developer args %v", args)
	}
	if args := h.toolArgs(runrecord.RolePlanner); !slices.Equal(args, []string{"--skill", "/skills"}) {
		t.Errorf("planner args %v", args)
	}
	if err := CLI.CheckTools(PaperVersion, h.cfg.Tools); err == nil || !strings.Contains(err.Error(), "no MCP support") {
		t.Errorf("Pi %s given MCP: %v", PaperVersion, err)
	}
	if err := CLI.CheckTools(PinnedVersion, h.cfg.Tools); err != nil {
		t.Errorf("Pi %s: %v", PinnedVersion, err)
	}
	if err := CLI.CheckTools(PaperVersion, harness.TaskTools{SkillsDir: "/skills"}); err != nil {
		t.Errorf("skills refused: %v", err)
	}
}
