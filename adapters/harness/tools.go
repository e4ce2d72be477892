package harness

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/hoh-research/hoh/adapters/sandbox"
	"github.com/hoh-research/hoh/runrecord"
)

// MCP transports a task may declare (Harbor's MCPServerConfig.transport).
const (
	MCPStdio          = "stdio"
	MCPStreamableHTTP = "streamable-http"
	MCPSSE            = "sse"
)

// MCPServer is one MCP server a task gives its agents: a command the CLI
// starts in the role's environment (stdio), or a URL it connects to.
type MCPServer struct {
	Name      string   `json:"name"`
	Transport string   `json:"transport"`
	URL       string   `json:"url,omitempty"`
	Command   string   `json:"command,omitempty"`
	Args      []string `json:"args,omitempty"`
	// InEnvironment: the server runs inside the task's environment (a
	// stdio command, a Compose sidecar, a loopback server of the image),
	// so every role container has its own copy of it.
	InEnvironment bool `json:"in_environment,omitempty"`
}

// TaskTools are what a task gives the roles' CLIs besides their own tools:
// MCP servers and a directory of skills (Harbor's environment.mcp_servers
// and skills_dir). What each role gets is MCPFor and SkillsFor.
type TaskTools struct {
	MCP []MCPServer `json:"mcp,omitempty"`
	// SkillsDir holds one folder per skill (NAME/SKILL.md), as the role's
	// executor sees it (a path in the task container).
	SkillsDir string `json:"skills_dir,omitempty"`
}

// Empty reports whether the task gives no tools.
func (t TaskTools) Empty() bool { return len(t.MCP) == 0 && t.SkillsDir == "" }

// MCPFor is the MCP servers a role's CLI is given. The Developer (and
// Vanilla, which plays it) gets every server. The QA Tester gets the
// servers that run inside its own container (stdio commands, sidecars,
// loopback servers): each QA invocation works on copies started from the
// environment the Developer left, so no tool call of QA's reaches what the
// Developer or the verifier sees; a server elsewhere is the Developer's
// only. The Planner gets none: it has no tool that acts.
func (t TaskTools) MCPFor(role runrecord.Role) []MCPServer {
	var out []MCPServer
	for _, s := range t.MCP {
		if role == runrecord.RoleDeveloper || (role == runrecord.RoleQA && s.InEnvironment) {
			out = append(out, s)
		}
	}
	return out
}

// SkillsFor is the skills directory a role's CLI is given: every role's
// (skills are instructions; each role's own tool limits still apply).
func (t TaskTools) SkillsFor(runrecord.Role) string { return t.SkillsDir }

// ServerURL is an HTTP server's URL, or "" for stdio.
func (s MCPServer) ServerURL() string {
	if s.Transport == MCPStdio {
		return ""
	}
	return s.URL
}

// CopySkills copies the skill folders of dir (a path in inv.Exec's view)
// into dst (the CLI's own skills directory under its state directory),
// through the invocation's executor, where the task keeps them. A missing
// dir (the Developer removed it from its environment) gives no skills.
func CopySkills(ctx context.Context, inv Invocation, dir, dst string) error {
	var out strings.Builder
	ex, err := inv.Exec.Run(ctx, sandbox.Command{
		Args:   []string{"/bin/sh", "-c", `[ ! -d "$1" ] || { mkdir -p "$2" && cp -R "$1"/. "$2"/; }`, "skills", dir, dst},
		Stdout: &out, Stderr: &out, WallTimeout: time.Minute,
	})
	if err == nil && ex.Code != 0 {
		err = fmt.Errorf("exit %d: %s", ex.Code, strings.TrimSpace(out.String()))
	}
	if err != nil {
		return fmt.Errorf("copying the task's skills %s to %s: %w", dir, dst, err)
	}
	return nil
}
