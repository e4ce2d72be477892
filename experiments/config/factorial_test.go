package config

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
)

// design is a config of two scripted agents (the scripted provider is a
// test double) over the three roles, and no written configuration.
const design = `name: t
output: runs/t
benchmark: {kind: builtin}
tasks: {ids: [greet]}
factorial:
  agents:
    - name: cheap
      harness: opencode
      provider: {name: scripted, api: chat, key_env: K, model: small}
      scripted: {script: script.yaml}
    - name: strong
      harness: codex
      provider: {name: scripted, api: responses, key_env: K, model: big}
      scripted: {script: script.yaml}
conditions: [vanilla, hoh@3]
`

// Every assignment of 2 agents to 3 roles is a configuration, labelled
// with its team in a stable order, whose roles and factors name the
// agents; its own harness is the Developer's.
func TestFactorialExpandsEveryTeam(t *testing.T) {
	e, err := LoadOffline(write(t, design))
	if err != nil {
		t.Fatal(err)
	}
	var labels []string
	for _, c := range e.Configs {
		labels = append(labels, c.Label)
	}
	want := []string{
		"team.planner-cheap.developer-cheap.qa-cheap", "team.planner-cheap.developer-cheap.qa-strong",
		"team.planner-cheap.developer-strong.qa-cheap", "team.planner-cheap.developer-strong.qa-strong",
		"team.planner-strong.developer-cheap.qa-cheap", "team.planner-strong.developer-cheap.qa-strong",
		"team.planner-strong.developer-strong.qa-cheap", "team.planner-strong.developer-strong.qa-strong",
	}
	if !slices.Equal(labels, want) {
		t.Fatalf("labels:\n%s", strings.Join(labels, "\n"))
	}
	c := e.Configs[2] // planner cheap, developer strong, qa cheap
	if c.Roles == nil || c.Roles.Planner.Name != "cheap" || c.Roles.Developer.Name != "strong" || c.Roles.QA.Name != "cheap" ||
		c.Roles.Planner.Harness != "opencode" || c.Roles.Developer.Provider.Model != "big" {
		t.Fatalf("roles %+v", c.Roles)
	}
	if c.Harness != "codex" || c.Provider.API != "responses" || c.Provider.Model != "big" {
		t.Errorf("the entry's own agent is not the Developer's: %+v", c)
	}
	if want := map[string]string{"planner": "cheap", "developer": "strong", "qa": "cheap"}; !mapsEqual(c.Factors, want) {
		t.Errorf("factors %v", c.Factors)
	}
	if !strings.HasSuffix(c.Roles.QA.Scripted.Script, "/script.yaml") || c.Roles.QA.Scripted.AsWritten() != "script.yaml" {
		t.Errorf("script path %q (written %q)", c.Roles.QA.Scripted.Script, c.Roles.QA.Scripted.AsWritten())
	}
	// The lock's canonical config keeps the design's agent order (the
	// report's baseline) and no absolute path.
	var canon struct {
		Factorial Factorial      `json:"factorial"`
		Configs   []HarnessModel `json:"configs"`
	}
	data := e.Canonical()
	if err := json.Unmarshal(data, &canon); err != nil {
		t.Fatal(err)
	}
	if len(canon.Factorial.Agents) != 2 || canon.Factorial.Agents[0].Name != "cheap" || len(canon.Configs) != 8 || canon.Configs[2].Factors["developer"] != "strong" {
		t.Errorf("canonical %s", data)
	}
	if strings.Contains(string(data), e.dir) {
		t.Errorf("canonical config holds the checkout's path: %s", data)
	}
}

// A half fraction keeps the 4 teams with an even number of first agents
// (I = planner*developer*qa); a design over two roles gives the third the
// first agent.
func TestFactorialFractionsAndRoleSubsets(t *testing.T) {
	e, err := LoadOffline(write(t, strings.Replace(design, "factorial:\n", "factorial:\n  label: half\n  fraction: half\n", 1)))
	if err != nil {
		t.Fatal(err)
	}
	var labels []string
	for _, c := range e.Configs {
		labels = append(labels, c.Label)
	}
	want := []string{"half.planner-cheap.developer-cheap.qa-strong", "half.planner-cheap.developer-strong.qa-cheap",
		"half.planner-strong.developer-cheap.qa-cheap", "half.planner-strong.developer-strong.qa-strong"}
	if !slices.Equal(labels, want) {
		t.Fatalf("half fraction: %v", labels)
	}
	e, err = LoadOffline(write(t, strings.Replace(design, "factorial:\n", "factorial:\n  roles: [planner, qa]\n", 1)))
	if err != nil {
		t.Fatal(err)
	}
	if len(e.Configs) != 4 || e.Configs[3].Label != "team.planner-strong.developer-cheap.qa-strong" || len(e.Configs[3].Factors) != 2 {
		t.Fatalf("two roles: %+v", e.Configs)
	}
}

func TestBadDesignsNameTheirLine(t *testing.T) {
	oneAgent := design[:strings.Index(design, "    - name: strong")] + "conditions: [vanilla]\n"
	has(t, problems(t, oneAgent), 7, "at least two agents")
	dup := strings.Replace(design, "name: strong", "name: cheap", 1)
	has(t, problems(t, dup), 11, `factorial agent "cheap": name given twice (first at line 7)`)
	unknown := strings.Replace(design, "factorial:\n", "factorial:\n  roles: [planner, tester]\n", 1)
	has(t, problems(t, unknown), 6, `unknown role "tester"`)
	badAPI := strings.Replace(design, "api: responses", "api: chat", 1)
	has(t, problems(t, badAPI), 13, `factorial agent "strong": harness codex speaks only`)
	bigDesign := strings.Replace(design, "conditions:", `    - name: a3
      harness: codex
      provider: {name: scripted, api: responses, key_env: K, model: m3}
      scripted: {script: script.yaml}
    - name: a4
      harness: codex
      provider: {name: scripted, api: responses, key_env: K, model: m4}
      scripted: {script: script.yaml}
    - name: a5
      harness: codex
      provider: {name: scripted, api: responses, key_env: K, model: m5}
      scripted: {script: script.yaml}
conditions:`, 1)
	has(t, problems(t, bigDesign), 6, "make 125 teams, more than the cap of 64")
	badFraction := strings.Replace(design, "factorial:\n", "factorial:\n  fraction: third\n", 1)
	has(t, problems(t, badFraction), 6, `factorial.fraction must be full or half, got "third"`)
	clash := strings.Replace(good, "label: a", "label: team.planner-cheap.developer-cheap.qa-cheap", 1) + design[strings.Index(design, "factorial:"):strings.Index(design, "conditions:")]
	has(t, problems(t, clash), 13, "is also a configuration's label")
}

// The runner gives each role its agent (experiments/runner's
// TestARoleTeamRunsEachRoleThroughItsOwnAgent), so a design loads for a
// run as it does offline.
func TestRoleTeamsLoadForARun(t *testing.T) {
	e, err := Load(write(t, design))
	if err != nil {
		t.Fatal(err)
	}
	if len(e.Configs) != 8 || !e.Configs[0].HasTeam() {
		t.Fatalf("configs %+v", e.Configs)
	}
}

func mapsEqual(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}
