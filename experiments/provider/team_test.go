package provider

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hoh-research/hoh/adapters/harness"
	"github.com/hoh-research/hoh/experiments/config"
	"github.com/hoh-research/hoh/runrecord"
)

// A team whose Planner and QA Tester share one agent and whose Developer
// has its own: one route per agent, each role's CLI built for its own
// relay, every relay logging to the one log, every placeholder a secret.
func TestRouteTeamGivesEachAgentOneRouteAndEachRoleItsRelay(t *testing.T) {
	t.Setenv("HOH_TEAM_KEY_A", "sk-team-a")
	t.Setenv("HOH_TEAM_KEY_B", "sk-team-b")
	agent := func(name, key string) *Agent {
		c := config.HarnessModel{AgentSpec: config.AgentSpec{Name: name, Harness: "codex",
			Provider: harness.Provider{Name: "p", API: "responses", BaseURL: "http://127.0.0.1:1/v1", KeyEnv: key, Model: "m-" + name}}}
		a, err := Using(build)(c, Files{})
		if err != nil {
			t.Fatal(err)
		}
		return a
	}
	shared, dev := agent("shared", "HOH_TEAM_KEY_A"), agent("dev", "HOH_TEAM_KEY_B")
	log := filepath.Join(t.TempDir(), "served.jsonl")
	team, err := RouteTeam(map[runrecord.Role]*Agent{runrecord.RolePlanner: shared, runrecord.RoleDeveloper: dev, runrecord.RoleQA: shared},
		log, []string{"X=1"}, []string{"caller-secret"})
	if err != nil {
		t.Fatal(err)
	}
	defer team.Close()
	p, d, q := team.Seats[runrecord.RolePlanner], team.Seats[runrecord.RoleDeveloper], team.Seats[runrecord.RoleQA]
	if p.Route != q.Route || p.Route == d.Route || len(team.routes) != 2 {
		t.Fatalf("routes: planner %p developer %p qa %p (%d)", p.Route, d.Route, q.Route, len(team.routes))
	}
	for role, s := range team.Seats {
		built := s.Harness.(nullHarness).spec.Provider.BaseURL
		if built != s.Route.Relay.BaseURL() || s.Provider.BaseURL != built || s.Route.ServedLog() != log {
			t.Errorf("%s: CLI built for %q, relay %q, log %q", role, built, s.Route.Relay.BaseURL(), s.Route.ServedLog())
		}
		if s.Member.Agent != s.Agent.Config.Name || s.Member.Model != s.Agent.Config.Provider.Model || s.Member.Harness != "null" {
			t.Errorf("%s: member %+v", role, s.Member)
		}
		if s.Route.Env[0] != "X=1" {
			t.Errorf("%s: env %v", role, s.Route.Env)
		}
	}
	secrets := strings.Join(team.Secrets, " ")
	for _, s := range []string{"caller-secret", "sk-team-a", "sk-team-b", placeholder(p.Route), placeholder(d.Route)} {
		if !strings.Contains(secrets, s) {
			t.Errorf("secrets %q lack %q", secrets, s)
		}
	}
	if team.ServedLog != log {
		t.Errorf("served log %q", team.ServedLog)
	}
}

func placeholder(r *Route) string {
	_, ph, _ := strings.Cut(r.Env[len(r.Env)-1], "=")
	return ph
}

// A relay that cannot start names its role, as an error the runner can
// tell from a CLI that cannot be built.
func TestRouteTeamNamesTheRoleWhoseRelayFailed(t *testing.T) {
	agent := func(url string) *Agent {
		c := config.HarnessModel{AgentSpec: config.AgentSpec{Harness: "codex", Provider: harness.Provider{BaseURL: url, Model: "m"}}}
		a, err := Using(build)(c, Files{})
		if err != nil {
			t.Fatal(err)
		}
		return a
	}
	good, bad := agent("http://127.0.0.1:1/v1"), agent("not a url")
	log := filepath.Join(t.TempDir(), "served.jsonl")
	_, err := RouteTeam(map[runrecord.Role]*Agent{runrecord.RolePlanner: good, runrecord.RoleDeveloper: good, runrecord.RoleQA: bad}, log, nil, nil)
	var re *RelayError
	if !errors.As(err, &re) || re.Role != runrecord.RoleQA || !strings.Contains(err.Error(), "QA") {
		t.Fatalf("err %v", err)
	}
}
