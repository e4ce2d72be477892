package runner

import (
	"testing"
	"time"

	"github.com/hoh-research/hoh/adapters/benchmark"
	"github.com/hoh-research/hoh/adapters/harness"
	"github.com/hoh-research/hoh/adapters/sandbox"
	"github.com/hoh-research/hoh/experiments/environment"
	"github.com/hoh-research/hoh/experiments/provider"
	"github.com/hoh-research/hoh/experiments/trial"
	"github.com/hoh-research/hoh/runrecord"
)

// A step's unit changes the Developer's timeout and leaves its scores to
// its trial; the policy's other timeouts stay.
func TestTrialEnvStep(t *testing.T) {
	pol := trialPolicy{Policy: trial.Policy{ContractRetries: -1, RunDir: "/run",
		Timeouts: trial.Timeouts{Developer: time.Hour, QA: 2 * time.Hour}}}
	dev := &instantHarness{}
	place := (&environment.Env{Exchange: &sandbox.Exchange{Inputs: "in"}}).Place(nil, benchmark.Task{}, nil)
	e := trialEnv(pol, unit{}, routed{servedLog: "served.jsonl"}, place, attemptCLIs{developer: dev})
	if e.Timeouts.Developer != time.Hour || e.WithoutScores || e.ContractRetries != -1 || e.RunDir != "/run" {
		t.Fatalf("a trial's env: %+v", e)
	}
	if e.Harness != dev || e.Exchange != place.Exchange || e.ServedLog != "served.jsonl" || e.Team != nil || e.Checkpoints != nil {
		t.Fatalf("a trial's env: %+v", e)
	}
	e = trialEnv(pol, unit{developerTimeout: time.Minute, withoutScores: true}, routed{}, place, attemptCLIs{developer: dev})
	if e.Timeouts.Developer != time.Minute || e.Timeouts.QA != 2*time.Hour || !e.WithoutScores {
		t.Fatalf("a step's env: %+v", e.Timeouts)
	}
	if pol.Timeouts.Developer != time.Hour {
		t.Fatal("a step's timeout changed its trial's policy")
	}
}

// A team's seats are a fresh map of each role's CLI, route and price.
func TestTrialEnvTeam(t *testing.T) {
	planner, dev := &instantHarness{}, &instantHarness{}
	price := &runrecord.Price{}
	team := &provider.Team{Seats: map[runrecord.Role]provider.Seat{
		runrecord.RolePlanner:   {Route: &provider.Route{Env: []string{"K=planner"}}, Member: runrecord.TeamMember{Agent: "p"}},
		runrecord.RoleDeveloper: {Route: &provider.Route{Env: []string{"K=dev"}}},
	}}
	clis := attemptCLIs{developer: dev, roles: map[runrecord.Role]harness.Harness{runrecord.RolePlanner: planner, runrecord.RoleDeveloper: dev}}
	pol := trialPolicy{rolePrices: map[runrecord.Role]*runrecord.Price{runrecord.RolePlanner: price}}
	e := trialEnv(pol, unit{}, routed{team: team}, trial.Place{}, clis)
	p := e.Team[runrecord.RolePlanner]
	if len(e.Team) != 2 || p.Harness != planner || p.Price != price || p.Env[0] != "K=planner" || p.Member.Agent != "p" {
		t.Fatalf("planner seat: %+v", e.Team)
	}
	if d := e.Team[runrecord.RoleDeveloper]; d.Harness != dev || d.Price != nil || e.Harness != dev {
		t.Fatalf("developer seat: %+v", d)
	}
	again := trialEnv(pol, unit{}, routed{team: team}, trial.Place{}, clis)
	again.Team[runrecord.RoleQA] = trial.RoleAgent{}
	if len(e.Team) != 2 {
		t.Fatal("two attempts share their team's seats")
	}
}
