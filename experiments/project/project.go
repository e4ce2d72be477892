// Package project is HoH's multi-day project mode (paper section 5): the
// Planner -> Developer -> QA loop run on a user's own specification and
// repository for as many loops as the budget allows, with a durable issue
// table derived from the evidence bundles, per-loop dynamics (Figure 1),
// reports, exports and rollback.
//
// A loop is an HoH iteration of experiments/trial without a benchmark
// evaluator: the project directory is the trial's workspace and its own git
// repository holds the stage commits ("hoh loop N: role"), tag cp-N on the
// Developer's commit and loop-N on the loop's last commit.
//
// # Layout
//
// Everything hoh keeps lives in the state directory <project>/.git/hoh:
// inside the project, never part of the artifact (git does not track its own
// directory, and hoh never digests .git or copies it into a role's view), and
// out of reach of a Developer's `git add -f` or `git clean -x`. Plain files
// only:
//
//	.git/hoh/hoh-project.yaml   the project config (Config)
//	.git/hoh/identity.json      the harness and model the project runs with (Identity)
//	.git/hoh/runs.jsonl         one line per run event (Event): start (with the limits), stop and its reason,
//	                            replaced (an infrastructure failure), error, forced-change, rollback
//	.git/hoh/lock               held (flock) by the running `hoh project run`
//	.git/hoh/STOP               a stop file: the run stops before its next loop and removes it
//	.git/hoh/trial/             the trial directory of experiments/trial: trial.json, stages.jsonl
//	                            (the resume point), usage.jsonl, iter-NN/<role>/... (prompts,
//	                            plans, QA report.json and evidence.json, runtime checks, CLI logs)
//	.git/hoh/issues.jsonl       the issue table, one Issue per line with its history (derived)
//	.git/hoh/issues.csv         the same as CSV (IssueColumns), issues.md as Markdown (derived)
//	.git/hoh/dynamics.csv       one row per loop (DynamicsColumns): new, closed, reopened,
//	                            unresolved issues, tokens per role, diff size, QA and build status (derived)
//	.git/hoh/reports/           `hoh project report` output (report.md)
//	.git/hoh/rollbacks/N/       state moved aside by rollback number N (nothing is deleted)
//	.git/hoh/github.json        issue id -> GitHub issue number, after `hoh project issues --push-github`
//	.git/hoh/diffstat-cache.json  diff sizes by commit pair (a cache; rebuilt if lost)
//	.git/hoh/provider.jsonl     the scripted test-double provider's log, when the config uses it
//	.git/hoh/provider-<role>.jsonl  the same for a role team's role with an agent of its own
//
// Derived files are recomputed from the trial records after every loop and
// at the start of every run, so a kill between a stage commit and their
// update loses nothing.
package project

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/hoh-research/hoh/adapters/harness/catalogue"
	"github.com/hoh-research/hoh/experiments/config"
	"github.com/hoh-research/hoh/experiments/history"
	"github.com/hoh-research/hoh/runrecord"
)

// StateDirName is the state directory, relative to the project.
const StateDirName = runrecord.ProjectStateDir

// Check is one public runtime check the QA Tester is shown (a build, a smoke
// run); a check named "build" (or, without one, all checks) gives the
// dynamics' build status.
type Check struct {
	Name    string        `yaml:"name" json:"name"`
	Command string        `yaml:"command" json:"command"` // run with sh -c in a copy of the artifact
	Timeout time.Duration `yaml:"timeout,omitempty" json:"timeout,omitempty"`
}

// Config is hoh-project.yaml.
type Config struct {
	Name string `yaml:"name" json:"name"`
	// Spec is the specification S, relative to the project directory or
	// absolute; it is read at every run.
	Spec     string              `yaml:"spec" json:"spec"`
	Harness  config.HarnessModel `yaml:"harness" json:"harness"`
	Timeouts config.Timeouts     `yaml:"timeouts" json:"timeouts"`
	// ContractRetries per role call; left out: config.DefaultRetries, as
	// in an experiment; 0 (or -1, as earlier configs wrote it): none.
	ContractRetries int     `yaml:"contract_retries,omitempty" json:"contract_retries,omitempty"`
	Checks          []Check `yaml:"checks,omitempty" json:"checks,omitempty"`
	// Infrastructure failures (transport, provider 5xx, auth, local
	// faults) of an invocation are replaced up to this many times in a row,
	// after Backoff doubled per attempt (left out: config.DefaultRetries,
	// 0: none); then the run stops and the next run resumes at the same
	// stage.
	InfraRetries int           `yaml:"infrastructure_retries,omitempty" json:"infrastructure_retries,omitempty"`
	InfraBackoff time.Duration `yaml:"infrastructure_backoff,omitempty" json:"infrastructure_backoff,omitempty"`
	// PlannerIssues is how many unresolved (and how many verified) issues
	// the Planner sees by name; the rest are counted (default 20).
	PlannerIssues int `yaml:"planner_issues,omitempty" json:"planner_issues,omitempty"`

	file string
}

// Resolve makes a path of the config absolute (relative to the project).
func (c *Config) resolve(project, p string) string {
	if p == "" || filepath.IsAbs(p) {
		return p
	}
	return filepath.Join(project, p)
}

func (c *Config) infraRetries() int { return max(c.InfraRetries, 0) }

func (c *Config) infraBackoff() time.Duration { return max(c.InfraBackoff, 0) }

// contractRetries is ContractRetries as trial.Env counts them (0 there is
// its default, -1 none).
func (c *Config) contractRetries() int {
	if c.ContractRetries <= 0 {
		return -1
	}
	return c.ContractRetries
}

func (c *Config) plannerIssues() int {
	if c.PlannerIssues <= 0 {
		return 20
	}
	return c.PlannerIssues
}

// Identity is what a project may not silently change between runs.
type Identity struct {
	Harness  string `json:"harness"`
	Model    string `json:"model"`
	Provider string `json:"provider"`
	API      string `json:"api"`
	Version  string `json:"harness_version,omitempty"`
	// Team is the agent of each role a role team gives its own (none:
	// every role runs the project's).
	Team map[runrecord.Role]Identity `json:"team,omitempty"`
}

func identityOf(c *Config, version string) Identity {
	h := c.Harness
	return Identity{Harness: h.Harness, Model: h.Provider.Model, Provider: h.Provider.Name, API: h.Provider.API, Version: version}
}

func (a Identity) diff(b Identity) []string {
	var d []string
	add := func(what, x, y string) {
		if x != y {
			d = append(d, fmt.Sprintf("%s %q -> %q", what, x, y))
		}
	}
	add("harness", a.Harness, b.Harness)
	add("model", a.Model, b.Model)
	add("provider", a.Provider, b.Provider)
	add("api", a.API, b.API)
	add("harness version", a.Version, b.Version)
	for _, role := range runrecord.Roles {
		x, inA := a.Team[role]
		y, inB := b.Team[role]
		if !inA && !inB {
			continue // a zero Identity has no team: no recursion past one level
		}
		for _, c := range x.diff(y) {
			d = append(d, string(role)+" "+c)
		}
	}
	return d
}

// Event is one line of runs.jsonl.
type Event struct {
	Time    time.Time  `json:"time"`
	Kind    string     `json:"kind"` // start, stop, forced-change, rollback, error
	Loop    int        `json:"loop,omitempty"`
	Reason  string     `json:"reason,omitempty"`
	Options *RunLimits `json:"limits,omitempty"`
	Changes []string   `json:"changes,omitempty"`
}

// LoadConfig reads <project>/.git/hoh/hoh-project.yaml.
func LoadConfig(project string) (*Config, error) {
	l := runrecord.ProjectLayout{Project: project}
	data, err := os.ReadFile(l.Config())
	if errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("%s is not an hoh project (no %s; run hoh project init)", project, l.Config())
	}
	if err != nil {
		return nil, err
	}
	// Defaults first: a key left out keeps its default, a written 0 is 0.
	c := Config{ContractRetries: config.DefaultRetries.Contract, InfraRetries: config.DefaultRetries.Infrastructure,
		InfraBackoff: config.DefaultRetries.Backoff}
	dec := yaml.NewDecoder(strings.NewReader(string(data)))
	dec.KnownFields(true)
	if err := dec.Decode(&c); err != nil {
		return nil, fmt.Errorf("%s: %w", l.Config(), err)
	}
	c.file = l.Config()
	var probs []string
	if c.Spec == "" {
		probs = append(probs, "spec: required")
	}
	if c.Harness.Harness == "" {
		probs = append(probs, "harness.harness: required ("+strings.Join(catalogue.Kinds(), ", ")+")")
	}
	if c.Harness.IsScripted() && (c.Harness.Scripted == nil || c.Harness.Scripted.Script == "") {
		probs = append(probs, "harness.scripted.script: required with the scripted provider")
	}
	for _, role := range runrecord.Roles {
		// hoh project init checked the roles file (config.LoadRoles); a
		// hand-edited config gets the essentials checked.
		if a := c.Harness.Roles.Agent(role); a != nil {
			if a.Harness == "" {
				probs = append(probs, fmt.Sprintf("harness.roles.%s.harness: required", role))
			}
			if a.Provider.Name == config.ScriptedProvider && (a.Scripted == nil || a.Scripted.Script == "") {
				probs = append(probs, fmt.Sprintf("harness.roles.%s.scripted.script: required with the scripted provider", role))
			}
		}
	}
	for i, ch := range c.Checks {
		if ch.Name == "" || ch.Command == "" {
			probs = append(probs, fmt.Sprintf("checks[%d]: needs name and command", i))
		}
	}
	if len(probs) > 0 {
		return nil, fmt.Errorf("%s: %s", l.Config(), strings.Join(probs, "; "))
	}
	return &c, nil
}

// InitOptions are the arguments of `hoh project init`.
type InitOptions struct {
	Project string
	Spec    string // path of SPEC.md; copied into the project when outside it
	Config  Config // Harness, Timeouts, Checks ... (Spec and Name are filled in)
}

// Init makes dir an hoh project: creates it and its git repository if
// needed, writes the config, ignores the state directory, commits A_0 (the
// directory as it is, tag cp-0) and the trial spec. Init refuses a project
// that already has a config.
func Init(o InitOptions) (*Config, error) {
	project, err := filepath.Abs(o.Project)
	if err != nil {
		return nil, err
	}
	l := runrecord.ProjectLayout{Project: project}
	if _, err := os.Stat(l.Config()); err == nil {
		return nil, fmt.Errorf("%s is already an hoh project (%s)", project, l.Config())
	}
	if err := os.MkdirAll(project, 0o755); err != nil {
		return nil, err
	}
	c := o.Config
	if c.Name == "" {
		c.Name = filepath.Base(project)
	}
	spec, err := filepath.Abs(o.Spec)
	if err != nil {
		return nil, err
	}
	data, err := os.ReadFile(spec)
	if err != nil {
		return nil, fmt.Errorf("specification: %w", err)
	}
	if rel, err := filepath.Rel(project, spec); err == nil && !strings.HasPrefix(rel, "..") {
		c.Spec = rel
	} else {
		// The specification becomes part of the project, so that the
		// artifact's history records the S it was built from.
		c.Spec = "SPEC.md"
		if err := runrecord.WriteFile(filepath.Join(project, c.Spec), data); err != nil {
			return nil, err
		}
	}
	if c.Harness.Label == "" {
		c.Harness.Label = c.Harness.Harness + "-" + c.Harness.Provider.Model
	}
	out, err := yaml.Marshal(&c)
	if err != nil {
		return nil, err
	}
	header := "# hoh project config (hoh project init). Paths are relative to the project directory.\n"
	if err := runrecord.WriteFile(l.Config(), append([]byte(header), out...)); err != nil {
		return nil, err
	}
	if _, err := LoadConfig(project); err != nil {
		os.Remove(l.Config())
		return nil, err
	}
	repo, err := history.Open(l.GitDir(), project)
	if err != nil {
		return nil, err
	}
	repo.Exclude = exclude
	commit, err := repo.Commit("hoh loop 0: initial project (A_0)")
	if err != nil {
		return nil, err
	}
	if err := repo.Tag("cp-0", commit); err != nil {
		return nil, err
	}
	if err := repo.Tag("loop-0", commit); err != nil {
		return nil, err
	}
	if err := runrecord.WriteJSON(l.TrialFiles().Spec(), trialSpec(&c, 1)); err != nil {
		return nil, err
	}
	return &c, writeDerived(l, &c)
}

// exclude: the names of the project directory that are not the artifact.
var exclude = []string{".git"}

// trialSpec is the trial.json of a project whose loop count is t: the arm
// hoh@t grows by one per loop (trial.Run compares the spec, so it is
// rewritten before each loop).
func trialSpec(c *Config, t int) runrecord.TrialSpec {
	return runrecord.TrialSpec{Key: "project/" + c.Name, Benchmark: "project", Task: c.Name, Config: c.Harness.Label,
		Arm: runrecord.Arm{Condition: runrecord.HoH, Checkpoint: t}, Rep: 1}
}

func readIdentity(l runrecord.ProjectLayout) (*Identity, error) {
	var id Identity
	if err := runrecord.ReadJSON(l.Identity(), &id); err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, nil
		}
		return nil, err
	}
	return &id, nil
}

func appendEvent(l runrecord.ProjectLayout, e Event) error {
	e.Time = time.Now().UTC()
	return runrecord.Append(l.Runs(), e)
}

// ReadEvents reads runs.jsonl.
func ReadEvents(project string) ([]Event, error) {
	var evs []Event
	_, err := runrecord.ReadLines(runrecord.ProjectLayout{Project: project}.Runs(), func(b []byte) error {
		var e Event
		if err := json.Unmarshal(b, &e); err != nil {
			return err
		}
		evs = append(evs, e)
		return nil
	})
	return evs, err
}
