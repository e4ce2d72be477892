package config

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/hoh-research/hoh/runrecord"
)

// team is good with a Planner and a QA Tester of their own (the scripted
// provider is a test double); the Developer runs the entry's agent.
const team = good + `    roles:
      planner:
        harness: opencode
        provider: {name: scripted, api: chat, key_env: K, model: small}
        scripted: {script: script.yaml}
      qa:
        harness: claude
        provider: {name: scripted, api: anthropic, key_env: K, model: judge}
        scripted: {script: script.yaml}
`

func teamConfig() string {
	// roles: belongs to the configs entry, before conditions:.
	i := strings.Index(good, "conditions:")
	return good[:i] + team[len(good):] + good[i:]
}

// roles: is read from the file: each role runs its own agent (paths made
// absolute like the entry's), a role left out the entry's, and the team is
// part of the digest.
func TestRolesAreReadFromTheConfig(t *testing.T) {
	path := write(t, teamConfig())
	e, err := LoadOffline(path)
	if err != nil {
		t.Fatal(err)
	}
	c := e.Configs[0]
	if !c.HasTeam() {
		t.Fatalf("no team: %+v", c)
	}
	p, d, q := c.ForRole(runrecord.RolePlanner), c.ForRole(runrecord.RoleDeveloper), c.ForRole(runrecord.RoleQA)
	if p.Harness != "opencode" || p.Provider.Model != "small" || p.Label != "a" || p.Roles != nil {
		t.Errorf("planner %+v", p)
	}
	if d.Harness != "codex" || d.Provider.Model != "m" {
		t.Errorf("developer %+v", d)
	}
	if q.Harness != "claude" || q.Provider.API != "anthropic" {
		t.Errorf("qa %+v", q)
	}
	if want := filepath.Join(filepath.Dir(path), "script.yaml"); p.Scripted.Script != want || q.Scripted.AsWritten() != "script.yaml" {
		t.Errorf("planner script %q (want %q), qa as written %q", p.Scripted.Script, want, q.Scripted.AsWritten())
	}
	plain, err := LoadOffline(write(t, good))
	if err != nil {
		t.Fatal(err)
	}
	if plain.Digest() == e.Digest() || plain.Configs[0].HasTeam() {
		t.Error("the team is not part of the digest")
	}
	other, err := LoadOffline(write(t, strings.Replace(teamConfig(), "model: judge", "model: judge2", 1)))
	if err != nil {
		t.Fatal(err)
	}
	if other.Digest() == e.Digest() {
		t.Error("a role's model is not part of the digest")
	}
}

// Each role's agent is checked as the entry's is: the problem names the
// role and its line.
func TestBadRoleAgentsNameTheRoleAndLine(t *testing.T) {
	cfg := teamConfig()
	lineOf := func(text, s string) int { return strings.Count(text[:strings.Index(text, s)], "\n") + 1 }
	badAPI := strings.Replace(cfg, "api: anthropic", "api: responses", 1)
	has(t, problems(t, badAPI), lineOf(badAPI, "api: responses, key_env: K, model: judge"), `config "a" role qa: harness claude speaks only`)
	badHarness := strings.Replace(cfg, "harness: opencode", "harness: opencod", 1)
	has(t, problems(t, badHarness), lineOf(badHarness, "harness: opencod"), `config "a" role planner:`)
	badKey := strings.Replace(cfg, "api: chat, key_env: K", "api: chat, key_env: sk-abcdefabcdefabcdefabcdef", 1)
	has(t, problems(t, badKey), lineOf(badKey, "key_env: sk-"), `config "a" role planner: provider.key_env`)
	real := strings.Replace(cfg, "provider: {name: scripted, api: chat, key_env: K, model: small}\n        scripted: {script: script.yaml}",
		"provider: {name: openai, api: chat, base_url: \"http://127.0.0.1:9/v1\", key_env: HOH_ROLE_TEST_UNSET_KEY, model: small}", 1)
	has(t, problems(t, real), lineOf(real, "name: openai"), `config "a" role planner: the provider key variable HOH_ROLE_TEST_UNSET_KEY is not set`)
	unknown := strings.Replace(cfg, "      qa:\n", "      tester:\n", 1)
	has(t, problems(t, unknown), lineOf(unknown, "tester:"), `unknown key "tester"`)
	empty := good[:strings.Index(good, "conditions:")] + "    roles: {}\n" + good[strings.Index(good, "conditions:"):]
	has(t, problems(t, empty), lineOf(empty, "roles: {}"), "gives no role an agent")
}

// A team whose roles talk to different models has no one price: each role
// is priced at its own model, and a dollar budget needs every role's.
func TestATeamIsPricedPerRole(t *testing.T) {
	prices := "prices:\n  scripted/m: {input: 1, output: 1}\n  scripted/small: {input: 2, output: 2}\n  scripted/judge: {input: 3, output: 3}\n"
	e, err := LoadOffline(write(t, teamConfig()+prices))
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := e.PriceOf("a"); ok {
		t.Error("a team of three models has one price")
	}
	u := runrecord.Usage{Input: 1_000_000}
	for role, want := range map[runrecord.Role]string{runrecord.RolePlanner: "2", runrecord.RoleDeveloper: "1", runrecord.RoleQA: "3"} {
		p, ok := e.PriceOfRole("a", role)
		if !ok || runrecord.FormatUSD(p.Cost(u)) != want {
			t.Errorf("%s: price %v %v, want $%s per million input tokens", role, p, ok, want)
		}
	}
	if _, err := LoadOffline(write(t, teamConfig()+prices+"budget: {usd: 5}\n")); err != nil {
		t.Errorf("a team priced role by role refused a dollar budget: %v", err)
	}
	unpriced := strings.Replace(prices, "  scripted/judge: {input: 3, output: 3}\n", "", 1)
	ps := problems(t, teamConfig()+unpriced+"budget: {usd: 5}\n")
	has(t, ps, strings.Count(teamConfig()+unpriced, "\n")+1, "budget.usd needs a price for every agent of a role team: prices has none for a role qa (scripted/judge)")
	if len(ps) != 1 {
		t.Errorf("one problem, not %v", ps)
	}
}
