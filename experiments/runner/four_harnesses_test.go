package runner

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/hoh-research/hoh/adapters/harness/catalogue"
	"github.com/hoh-research/hoh/experiments/config"
	"github.com/hoh-research/hoh/experiments/provider"
	relaylog "github.com/hoh-research/hoh/experiments/served"
	"github.com/hoh-research/hoh/internal/testenv"
	"github.com/hoh-research/hoh/runrecord"
)

// The same HoH@2 smoke run through each of the four real CLIs (installed by
// scripts/install-harnesses.sh), each against the scripted test-double
// provider on one of its wire APIs: every trial completes, every checkpoint
// is scored, and each trial's token ledger equals what its provider served.
func TestHoH2SmokeCompletesWithEachOfTheFourCLIs(t *testing.T) {
	e, err := config.Load(filepath.Join(repoRoot(t), "configs", "examples", "four-harnesses.yaml"))
	if err != nil {
		t.Fatalf("%v (the four CLIs are installed by scripts/install-harnesses.sh)", err)
	}
	res, out, log := runAt(t, e)
	harnesses := map[string]bool{}
	for _, o := range res.Outcomes {
		harnesses[o.Trial.Config] = true
		if o.State != runrecord.StateDone || o.Status != runrecord.StatusCompleted {
			t.Errorf("%s: %+v\n%s", o.Trial.Dir, o, log.String())
			continue
		}
		var s runrecord.Summary
		if err := runrecord.ReadJSON(filepath.Join(out, o.Trial.Dir, "summary.json"), &s); err != nil {
			t.Fatal(err)
		}
		if len(s.Checkpoints) != 2 || s.Checkpoints[1].Metrics["pass_rate"] != 100 {
			t.Errorf("%s: checkpoints %+v", o.Trial.Config, s.Checkpoints)
		}
		served := servedTokens(t, filepath.Join(out, "provider-"+o.Trial.Config+".jsonl"))
		if got := s.Usage.Input + s.Usage.Output; got != served || got == 0 {
			t.Errorf("%s: ledger %d tokens, provider served %d", o.Trial.Config, got, served)
		}
		// hoh's relay reads the same usage out of the responses of each API.
		if _, rel, err := relaylog.Read(filepath.Join(out, o.Trial.Dir, relaylog.File)); err != nil || rel.Input+rel.Output != servedTokens(t, filepath.Join(out, "provider-"+o.Trial.Config+".jsonl")) {
			t.Errorf("%s: relay counted %+v (%v), provider served %d", o.Trial.Config, rel, err, servedTokens(t, filepath.Join(out, "provider-"+o.Trial.Config+".jsonl")))
		}
	}
	for _, want := range []string{"codex-scripted", "claude-scripted", "opencode-scripted", "pi-scripted"} {
		if !harnesses[want] {
			t.Errorf("no trial for %s", want)
		}
	}
	// The CLIs' state (their databases included) is deleted once each
	// stage committed: no file left to scrub or to corrupt.
	attempts := 0
	filepath.Walk(out, func(p string, info os.FileInfo, err error) error {
		if err == nil && info.IsDir() && strings.HasPrefix(info.Name(), "attempt-") {
			attempts++
			if _, err := os.Stat(filepath.Join(p, "state")); err == nil {
				t.Errorf("CLI state left after the run in %s", p)
			}
		}
		return nil
	})
	if attempts == 0 {
		t.Error("no attempt directory found")
	}
	if n := testenv.AssertSQLiteIntact(t, out); n != 0 {
		t.Errorf("%d CLI database(s) left after a run without Vanilla Continuation", n)
	}
	testenv.AssertNoSecret(t, provider.ScriptedKeyValue, out)
	rows, err := runrecord.ReadScores(filepath.Join(out, "scores.csv"))
	if err != nil || len(rows) != 8 {
		t.Fatalf("scores.csv: %v, %d rows (want 4 CLIs x 2 checkpoints)", err, len(rows))
	}
}

// The paper's CLI versions (Codex 0.142.5, OpenCode 1.14.34, Pi 0.80.10;
// the adapters' suites run every pin, this runs the loop): one Vanilla pass
// and one HoH iteration through each, against the scripted test-double
// provider. Each trial completes at the version its configuration names
// (the lock file says so), and both arms are scored.
func TestVanillaAndOneHoHIterationAtThePapersVersions(t *testing.T) {
	e, err := config.Load(filepath.Join(repoRoot(t), "configs", "examples", "four-harnesses.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var configs []config.HarnessModel
	for _, c := range e.Configs {
		cli, _ := catalogue.Lookup(c.Harness)
		if cli.Paper == "" {
			continue // Claude Code: the paper did not use it; its one pin runs above
		}
		c.Version = cli.Paper
		configs = append(configs, c)
	}
	e.Configs = configs
	e.Conditions = []string{"vanilla", "hoh@1"}
	res, out, log := runAt(t, e)
	done := map[string]int{}
	for _, o := range res.Outcomes {
		if o.State != runrecord.StateDone || o.Status != runrecord.StatusCompleted {
			t.Errorf("%s: %+v\n%s", o.Trial.Dir, o, log.String())
			continue
		}
		done[o.Trial.Config]++
	}
	var lock runrecord.Lock
	if err := runrecord.ReadJSON(filepath.Join(out, "lock.json"), &lock); err != nil {
		t.Fatal(err)
	}
	for _, c := range configs {
		if done[c.Label] != 2 {
			t.Errorf("%s: %d completed trials, want vanilla and hoh@1", c.Label, done[c.Label])
		}
		if want := c.Harness + "@" + c.Version; lock.Harnesses[c.Label] != want {
			t.Errorf("lock.json says %s ran %q, want %s", c.Label, lock.Harnesses[c.Label], want)
		}
	}
	rows, err := runrecord.ReadScores(filepath.Join(out, "scores.csv"))
	if err != nil || len(rows) != 2*len(configs) || len(configs) != 3 {
		t.Fatalf("scores.csv: %v, %d rows (want 3 CLIs x (vanilla + hoh@1))", err, len(rows))
	}
	for _, r := range rows {
		if r.Metric == "pass_rate" && r.Value != 100 {
			t.Errorf("%+v: the scripted greet.sh should pass", r)
		}
	}
	testenv.AssertNoSecret(t, provider.ScriptedKeyValue, out)
}

// runAt runs e into a new directory, returning the result, the directory
// and the progress log; a run that fails to complete fails the test.
func runAt(t *testing.T, e *config.Experiment) (*Result, string, *strings.Builder) {
	t.Helper()
	out := filepath.Join(t.TempDir(), "run")
	e.Output = out
	log := &strings.Builder{}
	res, err := Run(context.Background(), e, Options{Out: log})
	if err != nil {
		t.Fatalf("run: %v\n%s", err, log.String())
	}
	return res, out, log
}

// assertEachRoleServedByItsOwnProvider checks the team "team" of a run in
// out: each role's scripted provider log names only that role's model
// (scripted-planner, scripted-developer, scripted-qa), and served as many
// tokens as the role's ledgers say.
func assertEachRoleServedByItsOwnProvider(t *testing.T, out string, ledgerByRole map[runrecord.Role]int64) {
	t.Helper()
	for role, w := range map[runrecord.Role]struct{ log, model string }{
		runrecord.RolePlanner:   {"provider-team.planner.jsonl", "scripted-planner"},
		runrecord.RoleDeveloper: {"provider-team.jsonl", "scripted-developer"},
		runrecord.RoleQA:        {"provider-team.qa.jsonl", "scripted-qa"},
	} {
		path := filepath.Join(out, w.log)
		models := testenv.RequestModels(t, path)
		if len(models) == 0 || slices.ContainsFunc(models, func(m string) bool { return m != w.model }) {
			t.Errorf("%s served models %v, want only %s", w.log, models, w.model)
		}
		if served := servedTokens(t, path); served == 0 || served != ledgerByRole[role] {
			t.Errorf("%s: the ledgers say %d tokens, its provider served %d", role, ledgerByRole[role], served)
		}
	}
}

// servedTokens sums input + output over the provider's request log.
func servedTokens(t *testing.T, path string) int64 {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var n int64
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		var line struct {
			Served struct {
				Usage struct{ Input, Output int64 } `json:"usage"`
			} `json:"served"`
		}
		if err := json.Unmarshal(sc.Bytes(), &line); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		n += line.Served.Usage.Input + line.Served.Usage.Output
	}
	return n
}

// A role team of three real CLIs, each on its own wire API and its own
// scripted test-double provider: Claude Code plans (Anthropic Messages),
// Codex develops (Responses), OpenCode tests (Chat Completions). Every
// condition completes with the scripted greet.sh passing, each provider is
// asked only by its own role, and each role's ledger equals what its
// provider served.
func TestARoleTeamOfThreeRealCLIsRunsEveryCondition(t *testing.T) {
	e, err := config.Load(filepath.Join(repoRoot(t), "configs", "examples", "four-harnesses.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	byHarness := map[string]config.HarnessModel{}
	for _, c := range e.Configs {
		byHarness[c.Harness] = c
	}
	team := byHarness["codex"]
	team.Label = "team"
	planner, qa := byHarness["claude"].AgentSpec, byHarness["opencode"].AgentSpec
	planner.Provider.Model, qa.Provider.Model = "scripted-planner", "scripted-qa"
	team.Provider.Model = "scripted-developer"
	team.Roles = &config.RoleAgents{Planner: &planner, QA: &qa}
	e.Configs = []config.HarnessModel{team}
	e.Conditions = []string{"vanilla", "vanilla-continuation@2", "hoh@2", "wo-plan-update@2", "wo-evidence-feedback@2", "wo-warm-start@2"}
	res, out, log := runAt(t, e)
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
		var s runrecord.Summary
		if err := runrecord.ReadJSON(l.Summary(), &s); err != nil {
			t.Fatal(err)
		}
		for role, h := range map[runrecord.Role]string{runrecord.RolePlanner: "claude", runrecord.RoleDeveloper: "codex", runrecord.RoleQA: "opencode"} {
			if s.Team[role].Harness != h {
				t.Errorf("%s: team %+v, want %s played by %s", o.Trial.Dir, s.Team, role, h)
			}
		}
	}
	rows, err := runrecord.ReadScores(filepath.Join(out, "scores.csv"))
	if err != nil || len(rows) == 0 {
		t.Fatalf("scores.csv: %v, %d rows", err, len(rows))
	}
	scored := map[string]bool{}
	for _, r := range rows {
		scored[runrecord.Arm{Condition: r.Condition, Checkpoint: r.Checkpoint}.String()] = true
		if r.Metric == "pass_rate" && r.Value != 100 {
			t.Errorf("%+v: the scripted greet.sh should pass", r)
		}
	}
	for _, want := range []string{"vanilla", "vanilla-continuation@2", "hoh@2", "wo-plan-update@2", "wo-evidence-feedback@2", "wo-warm-start@2"} {
		if !scored[want] {
			t.Errorf("no score row for %s (rows cover %v)", want, scored)
		}
	}
	assertEachRoleServedByItsOwnProvider(t, out, ledgerByRole)
	testenv.AssertNoSecret(t, provider.ScriptedKeyValue, out)
}
