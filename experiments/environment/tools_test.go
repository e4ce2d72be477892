package environment

// Harbor's hello-mcp and hello-skills through each of the four CLIs in
// their task containers: real CLIs, real Docker, the scripted provider (the
// test double for the model) asking for the tool; the CLIs' own event
// streams show what was called and what it returned.

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hoh-research/hoh/adapters/benchmark"
	"github.com/hoh-research/hoh/adapters/benchmark/harbor"
	"github.com/hoh-research/hoh/adapters/harness"
	"github.com/hoh-research/hoh/adapters/harness/catalogue"
	"github.com/hoh-research/hoh/adapters/sandbox"
	"github.com/hoh-research/hoh/adapters/sandbox/docker"
	"github.com/hoh-research/hoh/adapters/scripted"
	"github.com/hoh-research/hoh/internal/testenv/clienv"
	"github.com/hoh-research/hoh/internal/testenv/dockerenv"
	"github.com/hoh-research/hoh/internal/testenv/mcptest"
	"github.com/hoh-research/hoh/runrecord"
)

// toolBase is the busybox base of these tasks: node scripts start with
// #!/usr/bin/env node, and Claude Code's Bash tool needs a real bash (the
// host's, with the one library the container's mounts do not bring; as
// ubuntu's bash in the real tasks).
func toolBase(t *testing.T, c *docker.Client) string {
	t.Helper()
	base := dockerenv.BusyboxImage(t, c, "", "RUN mkdir -p /usr/bin && ln -s /bin/env /usr/bin/env")
	dir := t.TempDir()
	df := "FROM " + base + "\nCOPY bash /bin/bash\n"
	for _, f := range []struct{ src, name string }{{"/bin/bash", "bash"}, {"/lib/x86_64-linux-gnu/libtinfo.so.6", "libtinfo.so.6"}} {
		real, err := filepath.EvalSymlinks(f.src)
		if err != nil {
			t.Fatalf("the host's bash is needed for Claude Code's Bash tool: %v", err)
		}
		data, err := os.ReadFile(real)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, f.name), data, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	df += "COPY libtinfo.so.6 /lib/x86_64-linux-gnu/libtinfo.so.6\n"
	if err := os.WriteFile(filepath.Join(dir, "Dockerfile"), []byte(df), 0o644); err != nil {
		t.Fatal(err)
	}
	img, err := c.BuildImage(context.Background(), dir, "", "")
	if err != nil {
		t.Fatal(err)
	}
	return img
}

// cliAPIs is each CLI with a wire API it speaks.
var cliAPIs = []struct{ kind, api string }{
	{"codex", harness.APIResponses}, {"claude", harness.APIAnthropic}, {"opencode", harness.APIChat}, {"pi", harness.APIChat},
}

// toolTask loads the one task under root.
func toolTask(t *testing.T, root string, b *harbor.Benchmark) benchmark.Task {
	t.Helper()
	ts, err := b.Tasks(context.Background())
	if err != nil || len(ts) != 1 {
		t.Fatalf("tasks %v: %v (%v)", ts, err, b.LoadNotes())
	}
	return ts[0]
}

// runCLI runs kind as role in ex with the task's tools, and fails the test
// unless the CLI completed.
func runCLI(t *testing.T, env *Env, ex sandbox.Executor, kind, api string, role runrecord.Role, prompt, ws string) runrecord.Result {
	t.Helper()
	clienv.CLI(t, kind)
	p := env.Provider
	p.API = api
	h, err := catalogue.New(harness.Spec{Kind: kind, Provider: p, InContainer: true, Tools: env.Tools})
	if err != nil {
		t.Fatal(err)
	}
	access := map[runrecord.Role]harness.Access{runrecord.RoleDeveloper: harness.AccessWrite, runrecord.RoleQA: harness.AccessExec, runrecord.RolePlanner: harness.AccessReadOnly}[role]
	state := stateDir(env, kind, role)
	adir := filepath.Join(env.TrialDir, kind, string(role))
	res, err := h.Run(context.Background(), harness.Invocation{
		Role: role, Access: access, Prompt: prompt, WorkDir: ws, StateDir: state, LogDir: filepath.Join(adir, "logs"),
		WallTimeout: 8 * time.Minute, IdleTimeout: 6 * time.Minute,
		Env: []string{keyEnv + "=" + key}, Secrets: []string{key}, Exec: ex,
	})
	if err != nil {
		t.Fatal(err)
	}
	if res.Outcome != runrecord.OutcomeCompleted {
		so, _ := os.ReadFile(filepath.Join(adir, "logs", "stdout.jsonl"))
		se, _ := os.ReadFile(filepath.Join(adir, "logs", "stderr.log"))
		t.Fatalf("%s as %s: %+v\nstdout:\n%s\nstderr:\n%s", kind, role, res, so, se)
	}
	return res
}

// stateDir is the CLI state directory runCLI gives kind as role.
func stateDir(env *Env, kind string, role runrecord.Role) string {
	return filepath.Join(env.Exchange.Scratch, "state-"+kind+"-"+string(role))
}

// toolCalled is the recorded call named name, if any.
func toolCalled(res runrecord.Result, name string) (runrecord.ToolCall, bool) {
	for _, c := range res.Tools {
		if c.Name == name {
			return c, true
		}
	}
	return runrecord.ToolCall{}, false
}

// hello-mcp: each CLI, as the Developer, is given the task's mcp-server (a
// Compose sidecar serving streamable HTTP at http://mcp-server:8000/mcp, as
// task.toml declares) and calls get_secret through MCP: the call and the
// server's answer are in the CLI's own event stream. The QA Tester's CLI,
// in a role container of its own (its own copy of the sidecar), is given
// the server too (it runs inside the environment).
func TestHelloMCPThroughEachCLI(t *testing.T) {
	c := dockerClient(t)
	ctx := context.Background()
	base := toolBase(t, c)
	root := t.TempDir()
	mcptest.HelloMCP(t, root, base)
	b := &harbor.Benchmark{Dataset: "harbor-examples", Root: root, Docker: c}
	task := toolTask(t, root, b)
	_, prov := scriptedProvider(t, scripted.Script{Entries: []scripted.Entry{{
		Name: "developer", Match: "Call the `get_secret` tool", Repeat: true,
		Steps: []scripted.Step{
			{Tool: &scripted.ToolUse{Name: "get_secret"}},
			{Write: &scripted.FileWrite{Path: "/app/secret.txt", Content: mcptest.Secret}},
			{Say: "Wrote the secret."},
		},
	}, {
		Name: "qa", Match: "QA: ask the MCP server", Repeat: true,
		Steps: []scripted.Step{{Tool: &scripted.ToolUse{Name: "get_secret"}}, {Say: `{"qa_status": "pass"}`}},
	}}})
	env, err := Open(ctx, b, task, filepath.Join(t.TempDir(), "trial"), Options{Provider: prov, Docker: c, RelayBinary: relayBin})
	if err != nil {
		t.Fatal(err)
	}
	defer env.Close(context.WithoutCancel(ctx))
	if len(env.Tools.MCP) != 1 || env.Tools.MCP[0].URL != "http://mcp-server:8000/mcp" || !env.Tools.MCP[0].InEnvironment {
		t.Fatalf("the task's tools: %+v", env.Tools)
	}
	want := map[string]string{"codex": "mcp:mcp-server/get_secret", "claude": "mcp__mcp-server__get_secret",
		"opencode": "mcp-server_get_secret", "pi": "mcp__mcp_server__get_secret"}
	ws := workspaceInView(t, env)
	for _, cli := range cliAPIs {
		t.Run(cli.kind, func(t *testing.T) {
			os.Remove(filepath.Join(ws, "secret.txt"))
			res := runCLI(t, env, env.Exec, cli.kind, cli.api, runrecord.RoleDeveloper, task.Spec, ws)
			call, ok := toolCalled(res, want[cli.kind])
			if !ok || call.Output == nil || !strings.Contains(*call.Output, mcptest.Secret) {
				t.Errorf("no MCP call %s answered by the server in its event stream: %+v", want[cli.kind], res.Tools)
			}
			if got, _ := os.ReadFile(filepath.Join(ws, "secret.txt")); strings.TrimSpace(string(got)) != mcptest.Secret {
				t.Errorf("/app/secret.txt = %q; tools: %s", got, toolsText(res))
			}
		})
	}
	// QA in a container of its own, started as the environment starts.
	ex, release, err := RoleContainers(b, task, env.TrialDir, Options{Provider: prov, Docker: c, RelayBinary: relayBin}, nil)(ctx, runrecord.RoleQA, 1)
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	res := runCLI(t, env, ex, "codex", harness.APIResponses, runrecord.RoleQA, "QA: ask the MCP server for the secret.", ws)
	if _, ok := toolCalled(res, want["codex"]); !ok {
		t.Errorf("QA: no MCP call in its event stream: %+v", res.Tools)
	}
}

// hello-skills: each CLI is given the task's skills_dir (/skills in its
// container) the way it reads skills and loads generate-greeting through
// its own mechanism (Claude Code's Skill tool, OpenCode's skill tool, Codex
// reading the SKILL.md its skills list names under $CODEX_HOME/skills, Pi
// reading the one its --skill listing names): the call is in the CLI's
// event stream, the skill's listing is in its first request to the model
// and the skill's instructions are in the conversation after the call.
func TestHelloSkillsThroughEachCLI(t *testing.T) {
	c := dockerClient(t)
	ctx := context.Background()
	base := toolBase(t, c)
	root := t.TempDir()
	mcptest.HelloSkills(t, root, base)
	b := &harbor.Benchmark{Dataset: "harbor-examples", Root: root, Docker: c}
	task := toolTask(t, root, b)
	trialDir := filepath.Join(t.TempDir(), "trial")
	load := map[string]scripted.Step{
		"claude": {Tool: &scripted.ToolUse{Name: "Skill", Args: map[string]any{"skill": "generate-greeting"}}},
		// OpenCode's skill tool lists a skill's files with ripgrep, which
		// an offline image without rg lacks: the model reads the SKILL.md
		// its listing names.
		"opencode": {Tool: &scripted.ToolUse{Name: "read", Args: map[string]any{"filePath": filepath.Join(runrecord.TrialLayout{Dir: trialDir}.AgentViewScratch(), "state-opencode-developer", "config", "opencode", "skills", "generate-greeting", "SKILL.md")}}},
		"codex":    {Shell: `cat "$CODEX_HOME/skills/generate-greeting/SKILL.md"`},
		"pi":       {Tool: &scripted.ToolUse{Name: "read", Args: map[string]any{"path": "/skills/generate-greeting/SKILL.md"}}},
	}
	called := map[string]string{"claude": "Skill", "opencode": "read", "codex": "command_execution", "pi": "read"}
	var entries []scripted.Entry
	for _, cli := range cliAPIs {
		entries = append(entries, scripted.Entry{
			Name: cli.kind, Match: "generate-greeting(.|\\n)*\\(" + cli.kind + "\\)", Repeat: true,
			Steps: []scripted.Step{load[cli.kind], {Write: &scripted.FileWrite{Path: "/app/greeting.txt", Content: mcptest.Greeting + "\n"}}, {Say: "Done."}},
		})
	}
	logPath := filepath.Join(t.TempDir(), "provider.jsonl")
	srv, err := scripted.Start(scripted.Script{Entries: entries}, scripted.Options{LogPath: logPath})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	prov := harness.Provider{Name: "scripted", API: "responses", BaseURL: srv.URL() + "/v1", KeyEnv: keyEnv, Model: "scripted-model"}
	env, err := Open(ctx, b, task, trialDir, Options{Provider: prov, Docker: c, RelayBinary: relayBin})
	if err != nil {
		t.Fatal(err)
	}
	defer env.Close(context.WithoutCancel(ctx))
	if env.Tools.SkillsDir != "/skills" {
		t.Fatalf("the task's tools: %+v", env.Tools)
	}
	ws := workspaceInView(t, env)
	for _, cli := range cliAPIs {
		t.Run(cli.kind, func(t *testing.T) {
			os.Remove(filepath.Join(ws, "greeting.txt"))
			// A prompt of its own: the provider tells conversations apart by
			// API and prompt, and OpenCode and Pi both speak chat here.
			res := runCLI(t, env, env.Exec, cli.kind, cli.api, runrecord.RoleDeveloper, task.Spec+"\n("+cli.kind+")", ws)
			if _, ok := toolCalled(res, called[cli.kind]); !ok {
				t.Errorf("no %s call in its event stream: %+v", called[cli.kind], res.Tools)
			}
			if got, _ := os.ReadFile(filepath.Join(ws, "greeting.txt")); strings.TrimSpace(string(got)) != mcptest.Greeting {
				t.Errorf("/app/greeting.txt = %q", got)
			}
			listed, loaded := servedRequests(t, logPath, cli.kind)
			if !strings.Contains(listed, "Generate a greeting message and write it to a file.") {
				t.Errorf("the first request does not list the skill: %.400s", listed)
			}
			if !strings.Contains(loaded, "Write the exact text below") {
				t.Errorf("the skill's instructions are not in the conversation after the call (tools: %s): ...%s", toolsText(res), tail(loaded, 3000))
			}
		})
	}
}

// servedRequests are the bodies of an entry's requests at step 0, and
// those at later steps, from the scripted provider's log.
func servedRequests(t *testing.T, logPath, entry string) (first, later string) {
	t.Helper()
	data, err := os.ReadFile(logPath)
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		var l struct {
			Served scripted.Served `json:"served"`
			Body   json.RawMessage `json:"body"`
		}
		if json.Unmarshal([]byte(line), &l) != nil || l.Served.Entry != entry {
			continue
		}
		if l.Served.Step == 0 {
			first += string(l.Body)
		} else {
			later += string(l.Body)
		}
	}
	return first, later
}

func toolsText(res runrecord.Result) string {
	var b strings.Builder
	for _, c := range res.Tools {
		b.WriteString(c.Name + " " + c.Input)
		if c.Output != nil {
			b.WriteString(" -> " + *c.Output)
		}
		b.WriteString("; ")
	}
	return b.String()
}

func tail(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}
