package runner

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/big"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hoh-research/hoh/adapters/harness"
	"github.com/hoh-research/hoh/adapters/harness/atif"
	"github.com/hoh-research/hoh/experiments/config"
	"github.com/hoh-research/hoh/experiments/export"
	"github.com/hoh-research/hoh/experiments/preflight"
	"github.com/hoh-research/hoh/experiments/provider"
	"github.com/hoh-research/hoh/experiments/served"
	"github.com/hoh-research/hoh/internal/testenv"
	"github.com/hoh-research/hoh/runrecord"
)

// wireHarness is an in-process test double for a CLI that makes one real
// model call per invocation through the route it was built for (the
// relay's base URL, its API and model, the placeholder in its key
// variable), reports the usage the provider answered, and replies like
// instantHarness. It notes which model each role asked for and which key
// variables the role's environment held.
type wireHarness struct {
	instantHarness
	spec harness.Spec
	seen *teamSeen
}

type teamSeen struct {
	mu        sync.Mutex
	models    map[runrecord.Role][]string
	keys      map[runrecord.Role][]string
	preflight []string
}

func (h *wireHarness) Name() string    { return h.spec.Kind }
func (h *wireHarness) Version() string { return "test" }

func (h *wireHarness) Run(ctx context.Context, inv harness.Invocation) (runrecord.Result, error) {
	p := h.spec.Provider
	var keys []string
	for _, kv := range inv.Env {
		if k, _, ok := strings.Cut(kv, "="); ok && strings.HasPrefix(k, "HOH_TEAM_") {
			keys = append(keys, k)
		}
	}
	h.seen.mu.Lock()
	if inv.Prompt == preflight.Prompt { // the preflight's turn plays the Planner for every agent
		h.seen.preflight = append(h.seen.preflight, p.Model)
	} else {
		h.seen.models[inv.Role] = append(h.seen.models[inv.Role], p.Model)
		h.seen.keys[inv.Role] = append(h.seen.keys[inv.Role], strings.Join(keys, ","))
	}
	h.seen.mu.Unlock()
	path, body := map[string]string{"responses": "/responses", "chat": "/chat/completions", "anthropic": "/messages"}[p.API], ""
	switch p.API {
	case "responses":
		body = fmt.Sprintf(`{"model":%q,"stream":false,"input":[{"role":"user","content":[{"type":"input_text","text":"go"}]}]}`, p.Model)
	default:
		body = fmt.Sprintf(`{"model":%q,"stream":false,"max_tokens":64,"messages":[{"role":"user","content":"go"}]}`, p.Model)
	}
	req, err := http.NewRequestWithContext(ctx, "POST", p.BaseURL+path, strings.NewReader(body))
	if err != nil {
		return runrecord.Result{}, err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return runrecord.Result{Outcome: runrecord.OutcomeInfraFailure, Evidence: err.Error()}, nil
	}
	defer resp.Body.Close()
	var got struct {
		Usage map[string]any `json:"usage"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&got); err != nil || resp.StatusCode != http.StatusOK {
		return runrecord.Result{Outcome: runrecord.OutcomeInfraFailure, Evidence: fmt.Sprintf("status %d: %v", resp.StatusCode, err)}, nil
	}
	res, err := h.instantHarness.Run(ctx, inv)
	n := func(k string) int64 { f, _ := got.Usage[k].(float64); return int64(f) }
	in, out := n("input_tokens")+n("prompt_tokens"), n("output_tokens")+n("completion_tokens")
	res.Usage = runrecord.Usage{Input: in, Output: out, Total: in + out}
	return res, err
}

// teamExtra gives the configuration a Planner and a QA Tester of their
// own, each on its own scripted provider (a test double) with its own model,
// key variable and served usage, and prices each model differently.
const teamExtra = `    roles:
      planner:
        harness: opencode
        provider: {name: scripted, api: chat, key_env: HOH_TEAM_PLANNER_KEY, model: plan-model}
        scripted: {script: planner.yaml}
      qa:
        harness: claude
        provider: {name: scripted, api: anthropic, key_env: HOH_TEAM_QA_KEY, model: qa-model}
        scripted: {script: qa.yaml}
`

// A role team runs each role through its own agent: the CLI built for the
// role, its own provider (each role's requests reach only its scripted
// provider, whose log names the role's model), its own placeholder key
// variable; the ledger's tokens per attempt equal what the relay served
// that attempt, each invocation is priced at its role's model, and the
// summary names the team.
func TestARoleTeamRunsEachRoleThroughItsOwnAgent(t *testing.T) {
	out := filepath.Join(t.TempDir(), "run")
	e := teamExperiment(t, out, "export: [atif]\n")
	seen := &teamSeen{models: map[runrecord.Role][]string{}, keys: map[runrecord.Role][]string{}}
	o := Options{Agents: provider.Using(func(_ config.HarnessModel, s harness.Spec) (harness.Harness, error) {
		return &wireHarness{spec: s, seen: seen}, nil
	})}
	o.Out, o.Preflight = io.Discard, true
	res := mustRun(t, e, o)
	// The preflight gave each role's own agent a turn besides the
	// configuration's, each through its own relay.
	slices.Sort(seen.preflight)
	if !slices.Equal(seen.preflight, []string{"dev-model", "plan-model", "qa-model"}) {
		t.Errorf("preflight turns asked for %v", seen.preflight)
	}
	for _, label := range []string{"instant", "instant.planner", "instant.qa"} {
		if ok, _ := served.Answered(filepath.Join(runrecord.RunLayout{Dir: out}.Preflight(), label+"-"+served.File), "", time.Time{}); !ok {
			t.Errorf("no preflight turn of %s through its relay", label)
		}
	}
	if res.Count(runrecord.StateDone) != len(res.Outcomes) || len(res.Outcomes) != 4 {
		t.Fatalf("outcomes %+v", res.Outcomes)
	}
	want := map[runrecord.Role]struct{ model, key string }{
		runrecord.RolePlanner: {"plan-model", "HOH_TEAM_PLANNER_KEY"}, runrecord.RoleDeveloper: {"dev-model", "HOH_TEAM_DEV_KEY"},
		runrecord.RoleQA: {"qa-model", "HOH_TEAM_QA_KEY"},
	}
	for role, w := range want {
		if len(seen.models[role]) == 0 || slices.ContainsFunc(seen.models[role], func(m string) bool { return m != w.model }) {
			t.Errorf("%s asked for models %v, want only %s", role, seen.models[role], w.model)
		}
		if slices.ContainsFunc(seen.keys[role], func(k string) bool { return k != w.key }) {
			t.Errorf("%s's environment held key variables %v, want only %s", role, seen.keys[role], w.key)
		}
	}
	// Each scripted provider saw its own role's model only.
	for log, model := range map[string]string{"provider-instant.planner.jsonl": "plan-model", "provider-instant.qa.jsonl": "qa-model", "provider-instant.jsonl": "dev-model"} {
		models := testenv.RequestModels(t, filepath.Join(out, log))
		if len(models) == 0 || slices.ContainsFunc(models, func(m string) bool { return m != model }) {
			t.Errorf("%s served models %v, want only %s", log, models, model)
		}
	}
	// The lock names each role's own CLI and script, so a resume finds them.
	lock, err := runrecord.ReadLock(out)
	if err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{"instant.planner", "instant.qa"} {
		if lock.Harnesses[key] == "" || lock.Scripts[key] == "" {
			t.Errorf("lock.json has no CLI or script of %s: %v %v", key, lock.Harnesses, lock.Scripts)
		}
	}
	if _, ok := lock.Harnesses["instant.developer"]; ok {
		t.Errorf("lock.json names a Developer agent apart from the entry's: %v", lock.Harnesses)
	}
	checkTeamRecords(t, out, e, res)
}

func teamExperiment(t *testing.T, out, extra string) *config.Experiment {
	t.Helper()
	e := experiment(t, out, "")
	dir := filepath.Dir(e.File)
	for name, usage := range map[string]string{"script.yaml": "{input: 2000, output: 20}", "planner.yaml": "{input: 1000, output: 10}", "qa.yaml": "{input: 3000, output: 30}"} {
		os.WriteFile(filepath.Join(dir, name), []byte("entries:\n  - name: any\n    match: .\n    repeat: true\n    usage: "+usage+"\n    steps:\n      - say: ok\n"), 0o644)
	}
	text, _ := os.ReadFile(e.File)
	s := strings.Replace(string(text), "key_env: HOH_UNIT_KEY, model: m}", "key_env: HOH_TEAM_DEV_KEY, model: dev-model}", 1)
	s = strings.Replace(s, "    scripted: {script: script.yaml}\n", "    scripted: {script: script.yaml}\n"+teamExtra, 1)
	s += "prices:\n  scripted/plan-model: {input: 1, output: 2}\n  scripted/dev-model: {input: 10, output: 20}\n  scripted/qa-model: {input: 100, output: 200}\n" + extra
	os.WriteFile(e.File, []byte(s), 0o644)
	e, err := config.Load(e.File)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// checkTeamRecords: in every trial, the ledger's usage per attempt is what
// the relay served it, each line costs its role's price, and the summary's
// team names each role's harness and model.
func checkTeamRecords(t *testing.T, out string, e *config.Experiment, res *Result) {
	t.Helper()
	var trials []string
	for _, o := range res.Outcomes {
		trials = append(trials, runrecord.RunLayout{Dir: out}.Trial(o.Trial.Dir).Dir)
	}
	wantInput := map[runrecord.Role]int64{runrecord.RolePlanner: 1000, runrecord.RoleDeveloper: 2000, runrecord.RoleQA: 3000}
	for _, dir := range trials {
		l := runrecord.TrialLayout{Dir: dir}
		lines, _, err := served.Read(l.Served())
		if err != nil {
			t.Fatal(err)
		}
		byAttempt := served.ByAttempt(lines)
		ledger, err := runrecord.ReadLedger(l.Usage())
		if err != nil || len(ledger) == 0 {
			t.Fatalf("%s: ledger %v", dir, err)
		}
		for _, inv := range ledger {
			sv := byAttempt[inv.Dir]
			if inv.Usage.Input != wantInput[inv.Role] || sv.Input != inv.Usage.Input || sv.Output != inv.Usage.Output {
				t.Errorf("%s %s: ledger usage %+v, served %+v, want input %d", dir, inv.Dir, inv.Usage, byAttempt[inv.Dir], wantInput[inv.Role])
			}
			p, _ := e.PriceOfRole("instant", inv.Role)
			if inv.CostUSD == "" || inv.CostUSD != runrecord.FormatUSD(p.Cost(inv.Usage)) {
				t.Errorf("%s %s: cost %q, want %s", dir, inv.Dir, inv.CostUSD, runrecord.FormatUSD(p.Cost(inv.Usage)))
			}
		}
		// Each score row costs its checkpoint's invocations, each at its
		// role's price.
		rows, err := runrecord.ReadScores(l.Scores())
		if err != nil || len(rows) == 0 {
			t.Fatalf("%s: scores %v", dir, err)
		}
		for _, row := range rows {
			want := new(big.Rat)
			for _, inv := range ledger {
				if inv.Iteration <= row.Checkpoint {
					p, _ := e.PriceOfRole("instant", inv.Role)
					want.Add(want, p.Cost(inv.Usage))
				}
			}
			if row.CostUSD == nil || row.CostUSD.Cmp(want) != 0 {
				t.Errorf("%s checkpoint %d: row cost %v, want %s", dir, row.Checkpoint, row.CostUSD, runrecord.FormatUSD(want))
			}
		}
		var s runrecord.Summary
		if err := runrecord.ReadJSON(l.Summary(), &s); err != nil {
			t.Fatal(err)
		}
		want := runrecord.Team{
			runrecord.RolePlanner:   {Harness: "opencode", Version: "test", API: "chat", Model: "plan-model"},
			runrecord.RoleDeveloper: {Harness: "codex", Version: "test", API: "responses", Model: "dev-model"},
			runrecord.RoleQA:        {Harness: "claude", Version: "test", API: "anthropic", Model: "qa-model"},
		}
		for role, m := range want {
			if s.Team[role] != m {
				t.Errorf("%s: team %+v, want %s %+v", dir, s.Team, role, m)
			}
		}
		if s.Harness != "codex" {
			t.Errorf("%s: summary harness %q, want the Developer's", dir, s.Harness)
		}
		checkTeamATIF(t, dir, want, ledger)
	}
}

// hoh rescore of a role team's trial keeps each row's cost at its roles'
// prices: the team has no one price, and the rows are not left unpriced.
func TestRescoreOfATeamPricesEachRole(t *testing.T) {
	godot := testenv.StandInGodot(t)
	out := filepath.Join(t.TempDir(), "run")
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "script.yaml"), []byte("entries:\n  - name: any\n    match: .\n    repeat: true\n    steps:\n      - say: ok\n"), 0o644)
	text := `name: rescore-team
output: ` + out + `
benchmark: {kind: gamecraft, path: ` + testenv.SharedPath(t, "benchmarks", "gamecraft-bench") + `, options: {judge: stub, godot_bin: ` + godot + `}}
tasks: {ids: [platformer-arcborne]}
configs:
  - label: instant
    harness: codex
    provider: {name: scripted, api: responses, key_env: HOH_UNIT_KEY, model: m}
    scripted: {script: script.yaml}
    roles:
      qa:
        harness: codex
        provider: {name: scripted, api: responses, key_env: HOH_UNIT_KEY, model: judge}
        scripted: {script: script.yaml}
conditions: [hoh@1]
prices:
  scripted/m: {input: 1, output: 2}
  scripted/judge: {input: 100, output: 200}
`
	path := filepath.Join(dir, "exp.yaml")
	os.WriteFile(path, []byte(text), 0o644)
	e, err := config.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	mustRun(t, e, opts(&instantHarness{}))
	matches, _ := filepath.Glob(filepath.Join(out, "*", "*", "*", "*", "evaluation", "cp-1-verifier", "breakdown.json"))
	if len(matches) != 1 {
		t.Fatalf("want one kept breakdown.json, found %v", matches)
	}
	var bd map[string]any
	raw, _ := os.ReadFile(matches[0])
	json.Unmarshal(raw, &bd)
	bd["reward"] = 0.5 // a changed score makes rescore rewrite the rows
	raw, _ = json.Marshal(bd)
	os.WriteFile(matches[0], raw, 0o644)
	if rep, err := Rescore(context.Background(), e, nil); err != nil || len(rep.Changed) != 1 {
		t.Fatalf("rescore: %+v, %v", rep, err)
	}
	trialDir := filepath.Dir(filepath.Dir(filepath.Dir(matches[0])))
	ledger, err := runrecord.ReadLedger(runrecord.TrialLayout{Dir: trialDir}.Usage())
	if err != nil {
		t.Fatal(err)
	}
	want := new(big.Rat)
	for _, inv := range ledger {
		p, _ := e.PriceOfRole("instant", inv.Role)
		want.Add(want, p.Cost(inv.Usage))
	}
	rows, err := runrecord.ReadScores(filepath.Join(out, "scores.csv"))
	if err != nil || len(rows) == 0 {
		t.Fatal(err)
	}
	for _, r := range rows {
		if r.CostUSD == nil || r.CostUSD.Cmp(want) != 0 {
			t.Errorf("%s: rescored cost %v, want %s (each role at its price)", r.Metric, r.CostUSD, runrecord.FormatUSD(want))
		}
	}
}

// A dollar budget counts a role team's spending role by role: greet's
// Vanilla trial costs $0.0204 (the Developer's 2000 + 20 tokens at $10 and
// $20 per million) and its HoH@2 trial $0.65484 (two iterations, mostly the
// QA Tester's 3000 + 30 tokens at $100 and $200), so a $0.5 budget is
// spent before calc starts.
func TestADollarBudgetPricesATeamRoleByRole(t *testing.T) {
	out := filepath.Join(t.TempDir(), "run")
	e := teamExperiment(t, out, "budget: {usd: 0.5}\n")
	e.Concurrency = 1
	seen := &teamSeen{models: map[runrecord.Role][]string{}, keys: map[runrecord.Role][]string{}}
	o := Options{Agents: provider.Using(func(_ config.HarnessModel, s harness.Spec) (harness.Harness, error) {
		return &wireHarness{spec: s, seen: seen}, nil
	}), Out: io.Discard}
	res := mustRun(t, e, o)
	if res.Count(runrecord.StateDone) != 2 || res.Count(runrecord.StateBudget) != 2 {
		t.Fatalf("outcomes: %d done, %d stopped by the budget", res.Count(runrecord.StateDone), res.Count(runrecord.StateBudget))
	}
	for _, o := range res.Outcomes {
		if o.State == runrecord.StateBudget && !strings.Contains(o.Reason, "dollar budget $0.5 reached") {
			t.Errorf("reason %q", o.Reason)
		}
	}
}

// checkTeamATIF: the trial's ATIF export names each invocation's own CLI
// and model, and prices it as the ledger did (per role).
func checkTeamATIF(t *testing.T, dir string, team runrecord.Team, ledger []runrecord.LedgerLine) {
	t.Helper()
	var doc atif.Trajectory
	if err := runrecord.ReadJSON(export.TrialFile(dir, "", ""), &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.SubagentTrajectories) != len(ledger) {
		t.Fatalf("%s: %d trajectories, %d ledger lines", dir, len(doc.SubagentTrajectories), len(ledger))
	}
	for i, sub := range doc.SubagentTrajectories {
		m := team[ledger[i].Role]
		if sub.Agent.Name != m.Harness || sub.Agent.ModelName != m.Model || sub.FinalMetrics.Extra["total_cost_usd_exact"] != ledger[i].CostUSD {
			t.Errorf("%s %s: ATIF agent %+v cost %v, want %s %s cost %s", dir, ledger[i].Dir, sub.Agent, sub.FinalMetrics.Extra["total_cost_usd_exact"], m.Harness, m.Model, ledger[i].CostUSD)
		}
	}
	if doc.FinalMetrics.TotalCostUSD == nil {
		t.Errorf("%s: the trial's ATIF cost is unknown", dir)
	}
}
