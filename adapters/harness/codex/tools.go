package codex

import (
	"context"
	"fmt"
	"path/filepath"

	"github.com/hoh-research/hoh/adapters/harness"
)

// MCP servers go into config.toml's [mcp_servers.NAME] tables: command and
// args for stdio (Codex starts it where it runs: in the role's container),
// url for streamable HTTP. Codex reports each call as an mcp_tool_call item
// (recorded as tool "mcp:SERVER/TOOL").
func mcpServers(list []harness.MCPServer) map[string]any {
	out := map[string]any{}
	for _, s := range list {
		// Generous: servers start in busy containers.
		t := map[string]any{"startup_timeout_sec": 60}
		if u := s.ServerURL(); u != "" {
			t["url"] = u
		} else {
			t["command"], t["args"] = s.Command, append([]string{}, s.Args...)
		}
		out[s.Name] = t
	}
	return out
}

// toolSupport: Codex's MCP client speaks stdio and streamable HTTP, not the
// legacy SSE transport.
func toolSupport(_ string, t harness.TaskTools) error {
	for _, s := range t.MCP {
		if s.Transport == harness.MCPSSE {
			return fmt.Errorf("MCP server %q uses the legacy sse transport, which Codex CLI does not speak (stdio and streamable-http only)", s.Name)
		}
	}
	return nil
}

// giveSkills copies the task's skills into $CODEX_HOME/skills, where Codex
// lists them to the model (name, description and the SKILL.md path).
func (h *Harness) giveSkills(ctx context.Context, inv harness.Invocation) error {
	dir := h.cfg.Tools.SkillsFor(inv.Role)
	if dir == "" {
		return nil
	}
	return harness.CopySkills(ctx, inv, dir, filepath.Join(inv.StateDir, "skills"))
}
