package runner

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hoh-research/hoh/adapters/harness"
	"github.com/hoh-research/hoh/experiments/config"
	"github.com/hoh-research/hoh/experiments/provider"
	"github.com/hoh-research/hoh/internal/testenv"
	"github.com/hoh-research/hoh/internal/testenv/clienv"
	"github.com/hoh-research/hoh/runrecord"
)

// A role team in a Harbor task container, under every condition: Claude Code plans (Anthropic
// Messages), Codex develops (Responses) and OpenCode tests (Chat
// Completions), each REAL CLI inside its own task container and reaching
// its own scripted TEST-DOUBLE provider only through its own relay. Each
// provider serves only its role's model, each role's ledger tokens equal
// what its provider served, and the Harbor verifier scores every
// checkpoint. The scores are a plumbing check, not results.
func TestARoleTeamRunsInAHarborTaskContainer(t *testing.T) {
	c := dockerPrereqs(t)
	clienv.CLI(t, "claude")
	clienv.CLI(t, "opencode")
	e, err := config.Load(filepath.Join(repoRoot(t), "configs", "examples", "harbor-smoke.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	team := e.Configs[0]
	team.Label = "team"
	team.Provider.Model = "scripted-developer"
	team.Scripted = &config.ScriptedSpec{Script: filepath.Join(repoRoot(t), "experiments", "runner", "testdata", "harbor-team-script.yaml")}
	role := func(cli, api, model string) *config.AgentSpec {
		a := team.AgentSpec
		a.Harness = cli
		a.Provider = harness.Provider{Name: "scripted", API: api, KeyEnv: "HOH_SCRIPTED_KEY", Model: model}
		return &a
	}
	team.Roles = &config.RoleAgents{Planner: role("claude", "anthropic", "scripted-planner"), QA: role("opencode", "chat", "scripted-qa")}
	e.Configs = []config.HarnessModel{team}
	e.Conditions = []string{"vanilla", "vanilla-continuation@2", "hoh@2", "wo-plan-update@2", "wo-evidence-feedback@2", "wo-warm-start@2"}
	res, out, log := runAt(t, e)
	assertRunRemoved(t, c, res.DockerRun)
	// Vanilla is Vanilla Continuation's first pass: one trial for both.
	if len(res.Outcomes) != len(e.Conditions)-1 {
		t.Fatalf("%d outcomes for %d conditions\n%s", len(res.Outcomes), len(e.Conditions), log.String())
	}
	ledgerByRole := map[runrecord.Role]int64{}
	for _, o := range res.Outcomes {
		if o.State != runrecord.StateDone || o.Status != runrecord.StatusCompleted {
			t.Errorf("%s: %+v\n%s", o.Trial.Dir, o, log.String())
			continue
		}
		l := runrecord.RunLayout{Dir: out}.Trial(o.Trial.Dir)
		ledger, err := runrecord.ReadLedger(l.Usage())
		if err != nil {
			t.Fatal(err)
		}
		for _, inv := range ledger {
			ledgerByRole[inv.Role] += inv.Usage.Input + inv.Usage.Output
		}
		if o.Trial.Arm.String() == "hoh@2" {
			if got, _ := os.ReadFile(filepath.Join(l.Workspace(), "proof.txt")); string(got) != "seed\n42" {
				t.Errorf("the Developer's shell did not run in the task container: proof.txt = %q", got)
			}
		}
	}
	rows, err := runrecord.ReadScores(filepath.Join(out, "scores.csv"))
	if err != nil {
		t.Fatal(err)
	}
	scored := map[string]bool{}
	for _, r := range rows {
		scored[runrecord.Arm{Condition: r.Condition, Checkpoint: r.Checkpoint}.String()] = true
		if r.Metric != "reward" || r.Value != 1 {
			t.Errorf("%+v: the verifier should reward the scripted answer", r)
		}
	}
	for _, want := range e.Conditions {
		if !scored[want] {
			t.Errorf("no score row for %s (rows cover %v)", want, scored)
		}
	}
	assertEachRoleServedByItsOwnProvider(t, out, ledgerByRole)
	testenv.AssertNoSecret(t, provider.ScriptedKeyValue, out)
	if strings.Contains(log.String(), "role teams run on the host only") {
		t.Error("the run still refuses a team in containers")
	}
}
