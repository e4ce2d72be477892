package main

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/hoh-research/hoh/internal/testenv"
)

// hoh run --estimate plans a factorial design's every team (2 agents over
// 3 roles: 8 configurations, each for every task and condition) without a
// key; hoh run --check checks every role's CLI of every team.
func TestFactorialDesignEstimateAndCheck(t *testing.T) {
	root := testenv.RepoRoot(t)
	cfg := filepath.Join(root, "configs", "examples", "roles-factorial.yaml")
	code, stdout, stderr := runCLI(t, "run", "--estimate", cfg, "--output", t.TempDir())
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if !strings.Contains(stdout, "benchmark builtin, 3 task(s), 8 configuration(s), 2 condition(s), 1 repetition(s): 48 trial(s)") {
		t.Errorf("plan size:\n%s", stdout)
	}
	rows := regexp.MustCompile(`(?m)^team\.planner-(cheap|strong)\.developer-(cheap|strong)\.qa-(cheap|strong) +(vanilla|hoh@3) +3 `).FindAllString(stdout, -1)
	if len(rows) != 16 {
		t.Errorf("%d estimate rows, want 8 teams x 2 arms:\n%s", len(rows), stdout)
	}
	code, stdout, stderr = runCLI(t, "run", "--check", cfg, "--output", t.TempDir())
	if code != 0 || !strings.Contains(stdout, "config team.planner-cheap.developer-strong.qa-cheap role developer: codex ") ||
		!strings.Contains(stdout, "config team.planner-cheap.developer-strong.qa-cheap role qa: opencode ") {
		t.Errorf("hoh run --check: exit %d, %s%s", code, stdout, stderr)
	}
}

// hoh run --check of a role team whose QA Tester's CLI does not speak its
// provider's API names the role, the file and the line.
func TestCheckOfATeamNamesTheRoleFileAndLine(t *testing.T) {
	root := testenv.RepoRoot(t)
	data, err := os.ReadFile(filepath.Join(root, "configs", "examples", "roles-factorial.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	head := string(data[:strings.Index(string(data), "factorial:")])
	dir := t.TempDir()
	script, _ := filepath.Abs(filepath.Join(root, "configs", "examples", "scripts", "local-smoke.yaml"))
	cfg := filepath.Join(dir, "team.yaml")
	text := strings.Replace(head, "output: ../../runs/roles-factorial", "output: run", 1) + `configs:
  - label: team
    harness: codex
    provider: {name: scripted, api: responses, key_env: HOH_SCRIPTED_KEY, model: big}
    scripted: {script: ` + script + `}
    roles:
      qa:
        harness: claude
        provider: {name: scripted, api: chat, key_env: HOH_SCRIPTED_KEY, model: small}
        scripted: {script: ` + script + `}
conditions: [vanilla]
`
	os.WriteFile(cfg, []byte(text), 0o644)
	line := strings.Count(text[:strings.Index(text, "api: chat")], "\n") + 1
	code, _, stderr := runCLI(t, "run", "--check", cfg)
	if want := fmt.Sprintf("team.yaml:%d: config \"team\" role qa: harness claude speaks only anthropic", line); code == 0 || !strings.Contains(stderr, want) {
		t.Errorf("exit %d, want %q in:\n%s", code, want, stderr)
	}
}

// hoh plan power --design counts a factorial's teams among the
// configurations whose trials each planned point needs.
func TestPlanPowerKnowsTheDesignSize(t *testing.T) {
	cfg := filepath.Join(testenv.RepoRoot(t), "configs", "examples", "roles-factorial.yaml")
	code, stdout, stderr := runCLI(t, "plan", "power", "--effect", "5", "--sims", "2000", "--tolerance", "0.02", "--design", cfg)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	m := regexp.MustCompile(`(?m)^1 +(\d+) `).FindStringSubmatch(stdout)
	if m == nil || !strings.Contains(stdout, "8 configuration(s) (8 the teams of its factorial design) x 2 condition(s)") {
		t.Fatalf("no design size:\n%s", stdout)
	}
	tasks, _ := strconv.Atoi(m[1])
	if want := fmt.Sprintf("  1 repetition(s), %d tasks: %d trials", tasks, tasks*8*2); !strings.Contains(stdout, want) {
		t.Errorf("want %q in:\n%s", want, stdout)
	}
}
