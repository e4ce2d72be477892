package pi

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"github.com/hoh-research/hoh/adapters/harness"
	"github.com/hoh-research/hoh/runrecord"
)

// mcpSince is the first Pi release with MCP support (its built-in mcp
// extension, 0.99.0); the paper's 0.80.10 has none.
const mcpSince = "0.99.0"

// toolSupport: Pi speaks MCP from mcpSince on, over stdio and streamable
// HTTP only (its mcp.json rejects sse).
func toolSupport(version string, t harness.TaskTools) error {
	if len(t.MCP) == 0 {
		return nil
	}
	if harness.CompareVersions(version, mcpSince) < 0 {
		return fmt.Errorf("Pi %s has no MCP support (Pi connects to MCP servers from %s on) and the task gives %d MCP server(s)", version, mcpSince, len(t.MCP))
	}
	for _, s := range t.MCP {
		if s.Transport == harness.MCPSSE {
			return fmt.Errorf("MCP server %q uses the legacy sse transport, which Pi does not speak (stdio and streamable-http only)", s.Name)
		}
	}
	return nil
}

// writeMCP writes the role's MCP servers to mcp.json in
// PI_CODING_AGENT_DIR (Pi's user-level servers), each with exposure
// "direct": its tools are declared to the model as mcp__SERVER__TOOL, as
// the other CLIs declare theirs, instead of Pi's default codemode scripts.
func (h *Harness) writeMCP(dir string, role runrecord.Role) error {
	servers := map[string]any{}
	for _, s := range h.cfg.Tools.MCPFor(role) {
		e := map[string]any{"exposure": "direct"}
		if u := s.ServerURL(); u != "" {
			e["url"] = u
		} else {
			e["command"], e["args"] = s.Command, append([]string{}, s.Args...)
		}
		servers[s.Name] = e
	}
	if len(servers) == 0 {
		return nil
	}
	b, err := json.MarshalIndent(map[string]any{"mcpServers": servers}, "", "  ")
	if err != nil {
		return fmt.Errorf("pi: mcp.json: %w", err)
	}
	return os.WriteFile(filepath.Join(dir, "mcp.json"), append(b, '\n'), 0o600)
}

// toolArgs load Pi's built-in MCP extension when the role has servers
// (--no-extensions drops it otherwise) and the task's skills directory
// with --skill (which --no-skills leaves in force): Pi lists each skill's
// name, description and SKILL.md path to the model.
func (h *Harness) toolArgs(role runrecord.Role) []string {
	var args []string
	if len(h.cfg.Tools.MCPFor(role)) > 0 {
		args = append(args, "-e", "builtin:mcp")
	}
	if dir := h.cfg.Tools.SkillsFor(role); dir != "" {
		args = append(args, "--skill", dir)
	}
	return args
}
