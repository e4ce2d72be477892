package harbor

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hoh-research/hoh/adapters/harness"
)

// Harbor's hello-mcp declares its Compose sidecar's server; hello-skills
// its skills directory: both reach the agents (AgentTools), and neither is
// a warning any more.
func TestHarborExamplesGiveMCPServersAndSkills(t *testing.T) {
	b := &Benchmark{Dataset: "harbor"}
	for id, check := range map[string]func(harness.TaskTools) bool{
		"hello-mcp": func(tt harness.TaskTools) bool {
			s := tt.MCP
			return len(s) == 1 && s[0].Name == "mcp-server" && s[0].Transport == harness.MCPStreamableHTTP &&
				s[0].URL == "http://mcp-server:8000/mcp" && s[0].InEnvironment && tt.SkillsDir == ""
		},
		"hello-skills": func(tt harness.TaskTools) bool { return len(tt.MCP) == 0 && tt.SkillsDir == "/skills" },
	} {
		dir := filepath.Join(harborTasks, "harbor-examples", "tasks", id)
		l, err := LoadTask("harbor", dir, "")
		if err != nil {
			t.Fatal(err)
		}
		tools, err := b.AgentTools(l.Task)
		if err != nil || !check(tools) {
			t.Errorf("%s: %+v %v", id, tools, err)
		}
		if w := l.Unapplied(); len(w) != 0 {
			t.Errorf("%s: warnings %v", id, w)
		}
	}
}

// Entries as Harbor's model validates them: transport sse by default, a url
// for sse and streamable-http, a command for stdio; a server outside the
// environment is marked so; an unknown key warns; a malformed entry refuses
// the task naming the entry.
func TestMCPServersAsHarborValidatesThem(t *testing.T) {
	write := func(servers string) Loaded {
		dir := filepath.Join(t.TempDir(), "task")
		os.MkdirAll(dir, 0o755)
		toml := "[task]\nname = \"x/y\"\n[environment]\n" + servers
		if err := os.WriteFile(filepath.Join(dir, "task.toml"), []byte(toml), 0o644); err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(dir, "instruction.md"), []byte("do it\n"), 0o644)
		l, err := LoadTask("x", dir, "")
		if err != nil {
			t.Fatal(err)
		}
		return l
	}
	l := write(`mcp_servers = [{name = "docs", url = "https://docs.example.com/sse", extra = 1},
  {name = "files", transport = "stdio", command = "srv", args = ["-x"]},
  {name = "local", transport = "streamable-http", url = "http://127.0.0.1:9000/mcp"}]
`)
	s, warnings, err := l.MCPServers()
	if err != nil || len(s) != 3 {
		t.Fatalf("%+v %v", s, err)
	}
	if s[0].Transport != harness.MCPSSE || s[0].InEnvironment || !s[1].InEnvironment || s[1].Args[0] != "-x" || !s[2].InEnvironment {
		t.Errorf("servers %+v", s)
	}
	if len(warnings) != 1 || !strings.Contains(warnings[0], "extra") {
		t.Errorf("warnings %v", warnings)
	}
	for servers, want := range map[string]string{
		`mcp_servers = [{name = "a", transport = "stdio"}]`:                                "needs a command",
		`mcp_servers = [{name = "a", transport = "sse"}]`:                                  "needs a url",
		`mcp_servers = [{name = "a", transport = "ws", url = "http://x/"}]`:                "transport",
		`mcp_servers = [{url = "http://x/"}]`:                                              "name is missing",
		`mcp_servers = [{name = "a", url = "http://x/"}, {name = "a", url = "http://y/"}]`: "twice",
	} {
		refs := write(servers).Unsupported()
		if len(refs) != 1 || !strings.Contains(refs[0].Reason, want) || refs[0].Feature != "environment.mcp_servers" {
			t.Errorf("%s: refusals %v, want one saying %q", servers, refs, want)
		}
	}
}
