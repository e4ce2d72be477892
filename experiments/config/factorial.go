package config

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/hoh-research/hoh/runrecord"
)

// Factorial is a factorial design of role teams (docs/roles.md): every
// assignment of its agents to its roles, or a documented fraction of them,
// expanded into configurations when the config is loaded.
type Factorial struct {
	// Label prefixes every team's label (default "team").
	Label  string           `yaml:"label" json:"label,omitempty"`
	Agents []FactorialAgent `yaml:"agents" json:"agents"`
	// Roles are the factors (default planner, developer, qa); a role left
	// out plays the first agent in every team.
	Roles []string `yaml:"roles" json:"roles,omitempty"`
	// Fraction is "full" (default: every team) or "half": the principal
	// half fraction of a two-agent design, I = the product of all roles.
	Fraction string `yaml:"fraction" json:"fraction,omitempty"`
}

// FactorialAgent is one agent of a design: its name and its agent.
type FactorialAgent struct {
	Name      string `yaml:"name" json:"name"`
	AgentSpec `yaml:",inline"`
}

// MaxTeams caps a design's expansion: 3 agents over 3 roles (27) fit, a
// typo's 10 agents (1000 teams) do not.
const MaxTeams = 64

// Fractions a design may ask for.
const (
	FractionFull = "full"
	FractionHalf = "half"
)

// DesignRoles are the roles a design may vary, in label order (the
// configuration spells them as strings).
var DesignRoles = []string{string(runrecord.RolePlanner), string(runrecord.RoleDeveloper), string(runrecord.RoleQA)}

// agentName is a design agent's name: part of every team's label.
var agentName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_-]*$`)

// roles are the design's factors, the default filled in.
func (f *Factorial) roles() []string {
	if len(f.Roles) == 0 {
		return DesignRoles
	}
	return f.Roles
}

func (f *Factorial) label() string {
	if f.Label == "" {
		return "team"
	}
	return f.Label
}

// Teams are the design's teams, each the agent index per design role
// (DesignRoles order), in a stable order: the first role varies slowest.
func (f *Factorial) Teams() [][]int {
	roles := f.roles()
	var out [][]int
	var walk func(i int, team []int)
	walk = func(i int, team []int) {
		if i == len(DesignRoles) {
			if f.Fraction != FractionHalf || f.inPrincipalHalf(team) {
				out = append(out, slices.Clone(team))
			}
			return
		}
		if !slices.Contains(roles, DesignRoles[i]) {
			walk(i+1, append(team, 0))
			return
		}
		for a := range f.Agents {
			walk(i+1, append(team, a))
		}
	}
	walk(0, nil)
	return out
}

// inPrincipalHalf: coding the first agent -1 and the second +1, the product
// of the varied roles' codes is +1 (an even number of first agents).
func (f *Factorial) inPrincipalHalf(team []int) bool {
	firsts := 0
	for i, r := range DesignRoles {
		if slices.Contains(f.roles(), r) && team[i] == 0 {
			firsts++
		}
	}
	return firsts%2 == 0
}

// size is the number of teams, computed without expanding.
func (f *Factorial) size() int {
	n := 1
	for range f.roles() {
		n *= len(f.Agents)
		if n > MaxTeams*len(f.Agents) {
			break // no overflow for an absurd design
		}
	}
	if f.Fraction == FractionHalf {
		n /= 2
	}
	return n
}

// teamLabel is a team's label: stable, a safe path segment, every role's
// agent spelled out ("team.planner-cheap.developer-strong.qa-cheap").
func (f *Factorial) teamLabel(team []int) string {
	parts := []string{f.label()}
	for i, r := range DesignRoles {
		parts = append(parts, r+"-"+f.Agents[team[i]].Name)
	}
	return strings.Join(parts, ".")
}

// agentSpec is agent a as an AgentSpec with its paths made absolute.
func (e *Experiment) agentSpec(a FactorialAgent) *AgentSpec {
	s := a.AgentSpec
	s.Name, s.Binary = a.Name, e.Resolve(a.Binary)
	if a.Scripted != nil {
		s.Scripted = &ScriptedSpec{Script: e.Resolve(a.Scripted.Script), written: a.Scripted.Script}
	}
	return &s
}

// set gives role r agent a.
func (r *RoleAgents) set(role string, a *AgentSpec) {
	switch runrecord.Role(role) {
	case runrecord.RolePlanner:
		r.Planner = a
	case runrecord.RoleDeveloper:
		r.Developer = a
	case runrecord.RoleQA:
		r.QA = a
	}
}

// expandFactorial appends the design's teams to Configs: each runs its
// Developer's agent as the entry's own (what Vanilla runs), with Roles and
// Factors naming every role's agent.
func (e *Experiment) expandFactorial() {
	f := e.Factorial
	if f == nil {
		return
	}
	for _, team := range f.Teams() {
		roles := &RoleAgents{}
		factors := map[string]string{}
		for i, r := range DesignRoles {
			a := e.agentSpec(f.Agents[team[i]])
			roles.set(r, a)
			if slices.Contains(f.roles(), r) {
				factors[r] = a.Name
			}
		}
		// The entry's own agent is the Developer's, unnamed: a name is a
		// role's, in Roles and Factors.
		own := *roles.Developer
		own.Name = ""
		e.Configs = append(e.Configs, HarnessModel{Label: f.teamLabel(team), AgentSpec: own, Roles: roles, Factors: factors})
	}
}

// checkFactorial checks a design, each problem at its line: at least two
// agents with distinct safe names, each valid as a configuration is; known
// roles, none twice; a known fraction; at most MaxTeams teams, none
// labelled like a written configuration.
func (v *validator) checkFactorial(doc *yaml.Node, e *Experiment) {
	f := e.Factorial
	if f == nil {
		return
	}
	fn := child(doc, "factorial")
	at := func(key string) int { return line(child(fn, key), line(fn, doc.Line)) }
	before := len(v.problems)
	if f.Label != "" && !safeSegment.MatchString(f.Label) {
		v.add(at("label"), "factorial.label %q: letters, digits, '.', '_' and '-' only, starting with a letter or digit", f.Label)
	}
	v.checkDesignAgents(child(fn, "agents"), at("agents"), e)
	rn := child(fn, "roles")
	seen := map[string]bool{}
	for i, r := range f.Roles {
		ln := at("roles")
		if rn != nil && i < len(rn.Content) {
			ln = rn.Content[i].Line
		}
		switch {
		case !slices.Contains(DesignRoles, r):
			v.add(ln, "factorial.roles: unknown role %q (the roles are %s)", r, strings.Join(DesignRoles, ", "))
		case seen[r]:
			v.add(ln, "factorial.roles: role %q listed twice", r)
		}
		seen[r] = true
	}
	switch f.Fraction {
	case "", FractionFull:
	case FractionHalf:
		if len(f.Agents) != 2 || len(f.roles()) < 3 {
			v.add(at("fraction"), "factorial.fraction half needs exactly two agents and three roles (a 2^(3-1) design), got %d agent(s) and %d role(s)", len(f.Agents), len(f.roles()))
		}
	default:
		v.add(at("fraction"), "factorial.fraction must be %s or %s, got %q", FractionFull, FractionHalf, f.Fraction)
	}
	if len(v.problems) > before {
		return // labels of a bad design say nothing
	}
	if n := f.size(); n > MaxTeams {
		v.add(line(fn, doc.Line), "factorial: %d agents over %d roles make %d teams, more than the cap of %d (use fraction: half, fewer agents or fewer roles)", len(f.Agents), len(f.roles()), n, MaxTeams)
		return
	}
	for _, team := range f.Teams() {
		if l := f.teamLabel(team); slices.ContainsFunc(e.Configs, func(c HarnessModel) bool { return c.Label == l }) {
			v.add(line(fn, doc.Line), "factorial: team label %q is also a configuration's label under configs", l)
		}
	}
}

// checkDesignAgents checks a design's agents: names, and each agent as
// checkConfigs checks a configuration, at the agent's own lines.
func (v *validator) checkDesignAgents(an *yaml.Node, anLine int, e *Experiment) {
	f := e.Factorial
	if len(f.Agents) < 2 {
		v.add(anLine, "factorial.agents: a design needs at least two agents to assign, got %d", len(f.Agents))
	}
	names := map[string]int{}
	probe := &Experiment{File: e.File, dir: e.dir}
	for i, a := range f.Agents {
		ln := anLine
		var item *yaml.Node
		if an != nil && i < len(an.Content) {
			item = an.Content[i]
			ln = line(child(item, "name"), item.Line)
		}
		switch prev, dup := names[a.Name]; {
		case a.Name == "":
			v.add(ln, "factorial.agents[%d]: name is missing", i)
		case !agentName.MatchString(a.Name):
			v.add(ln, "factorial agent %q: a name is part of every team's label: letters, digits, '_' and '-' only, starting with a letter or digit", a.Name)
		case dup:
			v.add(ln, "factorial agent %q: name given twice (first at line %d)", a.Name, prev)
		default:
			names[a.Name] = ln
		}
		for key, p := range map[string]string{"binary": a.Binary, "scripted.script": scriptOf(a.Scripted)} {
			if missing := unsetVars(p); len(missing) > 0 {
				v.add(ln, "factorial agent %q: %s %q: environment variable %s is not set", a.Name, key, p, strings.Join(missing, ", "))
			}
		}
		probe.Configs = append(probe.Configs, HarnessModel{Label: fmt.Sprintf("agent%d", i), AgentSpec: a.AgentSpec})
	}
	// Each agent is checked as a configuration is, with the messages
	// naming the agent instead of a label.
	if len(probe.Configs) == 0 {
		return
	}
	sub := &validator{file: v.file, offline: v.offline}
	sub.checkConfigs(&yaml.Node{Kind: yaml.MappingNode, Line: anLine, Content: []*yaml.Node{{Kind: yaml.ScalarNode, Value: "configs"}, an}}, probe)
	for _, p := range sub.problems {
		for i, a := range f.Agents {
			p.Msg = strings.Replace(p.Msg, fmt.Sprintf("config %q", fmt.Sprintf("agent%d", i)), fmt.Sprintf("factorial agent %q", a.Name), 1)
		}
		v.problems = append(v.problems, p)
	}
}

func scriptOf(s *ScriptedSpec) string {
	if s == nil {
		return ""
	}
	return s.Script
}

// canonicalFactorial is the design as Canonical records it: its label,
// roles, fraction and agents' names, in order (what hoh report roles needs
// to know which agent is the baseline); the agents themselves are in the
// expanded configurations.
func (f *Factorial) canonical() *Factorial {
	if f == nil {
		return nil
	}
	c := &Factorial{Label: f.label(), Roles: f.roles(), Fraction: f.Fraction}
	for _, a := range f.Agents {
		c.Agents = append(c.Agents, FactorialAgent{Name: a.Name})
	}
	return c
}

// canonicalRoles is roles with what Canonical leaves out of a
// configuration left out of each role's agent too.
func canonicalRoles(r *RoleAgents) *RoleAgents {
	if r == nil {
		return nil
	}
	out := &RoleAgents{}
	for _, p := range [][2]**AgentSpec{{&r.Planner, &out.Planner}, {&r.Developer, &out.Developer}, {&r.QA, &out.QA}} {
		if *p[0] == nil {
			continue
		}
		a := **p[0]
		a.Binary = ""
		if a.Scripted != nil {
			a.Scripted = &ScriptedSpec{Script: a.Scripted.AsWritten()}
		}
		a.Provider.BaseURL = EndpointIdentity(HarnessModel{AgentSpec: a})
		*p[1] = &a
	}
	return out
}
