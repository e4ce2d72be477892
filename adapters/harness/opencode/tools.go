package opencode

import (
	"context"
	"path/filepath"

	"github.com/hoh-research/hoh/adapters/harness"
)

// mcpServers is the config's "mcp" object: stdio servers as "local"
// (command and arguments in one list, started where OpenCode runs: in the
// role's container), URL servers as "remote" (OpenCode tries streamable
// HTTP, then SSE). OpenCode names a server's tools SERVER_TOOL.
func mcpServers(list []harness.MCPServer) map[string]any {
	out := map[string]any{}
	for _, s := range list {
		if u := s.ServerURL(); u != "" {
			out[s.Name] = map[string]any{"type": "remote", "url": u, "enabled": true}
			continue
		}
		out[s.Name] = map[string]any{"type": "local", "command": append([]string{s.Command}, s.Args...), "enabled": true}
	}
	return out
}

// giveSkills copies the task's skills to $XDG_CONFIG_HOME/opencode/skills
// (OpenCode's global skills directory), which its skill tool lists.
func (h *Harness) giveSkills(ctx context.Context, inv harness.Invocation) error {
	dir := h.cfg.Tools.SkillsFor(inv.Role)
	if dir == "" {
		return nil
	}
	return harness.CopySkills(ctx, inv, dir, filepath.Join(inv.StateDir, "config", "opencode", "skills"))
}
