package runner

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/hoh-research/hoh/adapters/benchmark"
	"github.com/hoh-research/hoh/adapters/benchmark/harbor"
	"github.com/hoh-research/hoh/experiments/config"
	"github.com/hoh-research/hoh/experiments/plan"
	"github.com/hoh-research/hoh/internal/testenv"
)

// hello-mcp's server cannot be given to the paper's Pi (0.80.10, no MCP)
// nor to a command harness: the plan is refused naming configuration and
// task; Codex, Claude Code, OpenCode and Pi 1.6 take it, and hello-skills'
// skills go to every CLI but the command harness.
func TestCheckTaskToolsRefusesCLIsWithoutMCP(t *testing.T) {
	dir := testenv.SharedPath(t, "benchmarks", "harbor-tasks", "harbor-examples", "tasks")
	var tasks []benchmark.Task
	for _, id := range []string{"hello-mcp", "hello-skills"} {
		l, err := harbor.LoadTask("harbor", filepath.Join(dir, id), "")
		if err != nil {
			t.Fatal(err)
		}
		tasks = append(tasks, l.Task)
	}
	e := &config.Experiment{File: "exp.yaml", Configs: []config.HarnessModel{
		{Label: "codex", AgentSpec: config.AgentSpec{Harness: "codex"}}, {Label: "claude", AgentSpec: config.AgentSpec{Harness: "claude"}},
		{Label: "opencode", AgentSpec: config.AgentSpec{Harness: "opencode"}},
		{Label: "pi-new", AgentSpec: config.AgentSpec{Harness: "pi", Version: "1.6.0"}},
		{Label: "pi-paper", AgentSpec: config.AgentSpec{Harness: "pi", Version: "0.80.10"}},
		{Label: "cmd", AgentSpec: config.AgentSpec{Harness: "command"}},
	}}
	ps := checkTaskTools(&plan.Plan{Experiment: e, Bench: &harbor.Benchmark{Dataset: "harbor"}, Tasks: tasks})
	var got []string
	for _, p := range ps {
		got = append(got, p.Msg)
	}
	all := strings.Join(got, "\n")
	if len(ps) != 3 || !strings.Contains(all, `config "pi-paper" cannot be given task hello-mcp's tools: Pi 0.80.10 has no MCP support`) ||
		!strings.Contains(all, `config "cmd" cannot be given task hello-mcp's tools`) || !strings.Contains(all, `config "cmd" cannot be given task hello-skills's tools`) {
		t.Errorf("problems:\n%s", all)
	}
}
