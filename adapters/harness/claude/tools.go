package claude

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"github.com/hoh-research/hoh/adapters/harness"
)

// given is what an invocation was given of the task's tools.
type given struct {
	mcpConfig string   // the --mcp-config file, or ""
	servers   []string // MCP server names, pre-approved as mcp__NAME
	skills    bool     // skills copied to $CLAUDE_CONFIG_DIR/skills
}

// allow adds the MCP servers (every tool of each) to a tool allowlist.
func (g given) allow(tools []string) []string {
	out := append([]string(nil), tools...)
	for _, s := range g.servers {
		out = append(out, "mcp__"+s)
	}
	return out
}

// giveTools writes the role's MCP servers to hoh-mcp.json in the state
// directory (passed as --mcp-config with --strict-mcp-config: no other
// server is loaded) and copies the task's skills to
// $CLAUDE_CONFIG_DIR/skills, where Claude Code's Skill tool finds them.
// Claude Code reports a call as tool_use mcp__SERVER__TOOL.
func (h *Harness) giveTools(ctx context.Context, inv harness.Invocation) (given, error) {
	var g given
	if dir := h.cfg.Tools.SkillsFor(inv.Role); dir != "" {
		if err := harness.CopySkills(ctx, inv, dir, filepath.Join(inv.StateDir, "skills")); err != nil {
			return g, err
		}
		g.skills = true
	}
	servers := map[string]any{}
	for _, s := range h.cfg.Tools.MCPFor(inv.Role) {
		switch s.Transport {
		case harness.MCPStdio:
			servers[s.Name] = map[string]any{"type": "stdio", "command": s.Command, "args": append([]string{}, s.Args...)}
		case harness.MCPSSE:
			servers[s.Name] = map[string]any{"type": "sse", "url": s.URL}
		default:
			servers[s.Name] = map[string]any{"type": "http", "url": s.URL}
		}
		g.servers = append(g.servers, s.Name)
	}
	if len(servers) == 0 {
		return g, nil
	}
	b, err := json.MarshalIndent(map[string]any{"mcpServers": servers}, "", "  ")
	if err != nil {
		return g, err
	}
	g.mcpConfig = filepath.Join(inv.StateDir, "hoh-mcp.json")
	if err := os.WriteFile(g.mcpConfig, append(b, '\n'), 0o644); err != nil {
		return g, fmt.Errorf("MCP config: %w", err)
	}
	return g, nil
}
