package runrecord

// The records of a multi-day project (hoh project; experiments/project
// writes them, the viewer reads them). They live in the project's state
// directory, inside its .git so that they are never part of the artifact:
//
//	<project>/.git/hoh/
//	├── hoh-project.yaml   the project config (ProjectConfig is what readers use)
//	├── identity.json      harness, model and version the project runs with
//	├── runs.jsonl         one event per run start, stop, rollback, forced change
//	├── lock               flock of the running hoh project run
//	├── STOP               asks a running project to stop after its loop
//	├── trial/             the project's trial directory (TrialLayout): loop t is iteration t
//	├── provider.jsonl     requests to the scripted test-double provider
//	├── provider-<role>.jsonl  the same for a role with an agent of its own (a role team)
//	├── diffstat-cache.json  per-loop diff sizes, a cache of dynamics.csv
//	├── issues.jsonl       the issue table, one Issue per line
//	├── issues.csv, issues.md   the same table for people
//	├── dynamics.csv       one LoopDynamics per loop
//	├── reports/report.md  the latest hoh project report
//	├── report/            hoh view's report (analysis/viewer)
//	├── rollbacks/         what a rollback set aside
//	└── github.json        where the issue table was pushed

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"time"
)

// ProjectStateDir is the state directory, relative to the project.
const ProjectStateDir = ".git/hoh"

// ProjectLayout names the files of a project.
type ProjectLayout struct{ Project string }

func (l ProjectLayout) State() string       { return filepath.Join(l.Project, ProjectStateDir) }
func (l ProjectLayout) Config() string      { return filepath.Join(l.State(), "hoh-project.yaml") }
func (l ProjectLayout) Identity() string    { return filepath.Join(l.State(), "identity.json") }
func (l ProjectLayout) Runs() string        { return filepath.Join(l.State(), "runs.jsonl") }
func (l ProjectLayout) Lock() string        { return filepath.Join(l.State(), "lock") }
func (l ProjectLayout) StopFile() string    { return filepath.Join(l.State(), "STOP") }
func (l ProjectLayout) Trial() string       { return filepath.Join(l.State(), "trial") }
func (l ProjectLayout) IssuesJSONL() string { return filepath.Join(l.State(), "issues.jsonl") }
func (l ProjectLayout) IssuesCSV() string   { return filepath.Join(l.State(), "issues.csv") }
func (l ProjectLayout) IssuesMD() string    { return filepath.Join(l.State(), "issues.md") }
func (l ProjectLayout) Dynamics() string    { return filepath.Join(l.State(), "dynamics.csv") }
func (l ProjectLayout) Reports() string     { return filepath.Join(l.State(), "reports") }
func (l ProjectLayout) Rollbacks() string   { return filepath.Join(l.State(), "rollbacks") }
func (l ProjectLayout) GitHub() string      { return filepath.Join(l.State(), "github.json") }
func (l ProjectLayout) GitDir() string      { return filepath.Join(l.Project, ".git") }

// TrialFiles is the layout of the project's trial directory (loop t is
// iteration t).
func (l ProjectLayout) TrialFiles() TrialLayout { return TrialLayout{l.Trial()} }

// ProviderLog is the request log of the scripted test-double provider.
func (l ProjectLayout) ProviderLog() string { return filepath.Join(l.State(), "provider.jsonl") }

// RoleProviderLog is ProviderLog of a role team's role that has an agent
// of its own: each scripted provider keeps its own log, so a log shows
// which role's model it served.
func (l ProjectLayout) RoleProviderLog(role Role) string {
	return filepath.Join(l.State(), "provider-"+string(role)+".jsonl")
}

// DiffstatCache caches the per-loop diff sizes of dynamics.csv.
func (l ProjectLayout) DiffstatCache() string { return filepath.Join(l.State(), "diffstat-cache.json") }

// Report is reports/report.md, the latest hoh project report.
func (l ProjectLayout) Report() string { return filepath.Join(l.Reports(), "report.md") }

// ProjectConfig is what a reader of hoh-project.yaml needs of it (the
// writer, experiments/project.Config, holds more). The tags are those of
// the writer's YAML, so a YAML decoder fills it.
type ProjectConfig struct {
	Name    string `yaml:"name"`
	Spec    string `yaml:"spec"`
	Harness struct {
		ProjectAgent `yaml:",inline"`
		// Roles, for a role team (hoh project init --roles), are the roles
		// with an agent of their own.
		Roles map[string]ProjectAgent `yaml:"roles"`
	} `yaml:"harness"`
}

// ProjectAgent is one agent of hoh-project.yaml as a reader sees it.
type ProjectAgent struct {
	Harness  string `yaml:"harness"`
	Version  string `yaml:"version"`
	Provider struct {
		Name  string `yaml:"name"`
		API   string `yaml:"api"`
		Model string `yaml:"model"`
	} `yaml:"provider"`
}

// Team is who plays each role of a role team (a role without an agent of
// its own plays the entry's); nil for a one-agent project.
func (c ProjectConfig) Team() Team {
	if len(c.Harness.Roles) == 0 {
		return nil
	}
	team := Team{}
	for _, role := range Roles {
		a, ok := c.Harness.Roles[string(role)]
		if !ok {
			a = c.Harness.ProjectAgent
		}
		team[role] = TeamMember{Harness: a.Harness, Version: a.Version, API: a.Provider.API, Model: a.Provider.Model}
	}
	return team
}

// ScriptedProvider is the provider name of the scripted test double (its
// records are plumbing checks, never results).
const ScriptedProvider = "scripted"

// IsScripted reports whether any of the project's models is the scripted
// test double.
func (c ProjectConfig) IsScripted() bool {
	if c.Harness.Provider.Name == ScriptedProvider {
		return true
	}
	for _, a := range c.Harness.Roles {
		if a.Provider.Name == ScriptedProvider {
			return true
		}
	}
	return false
}

// Issue states.
const (
	IssueOpen     = "open"
	IssueClosed   = "closed"
	IssueReopened = "reopened"
)

// Transition is one change of an issue's state.
type Transition struct {
	Loop     int    `json:"loop"`
	From     string `json:"from,omitempty"` // "" when the issue was opened
	To       string `json:"to"`
	ClaimID  string `json:"claim_id"`
	Evidence string `json:"evidence"` // evidence bundle, relative to the state directory
}

// Issue is one row of the issue table. Everything in it is derived from the
// evidence bundles; see BuildIssues for the rule.
type Issue struct {
	ID       string   `json:"id"`
	State    string   `json:"state"`
	Claim    string   `json:"claim"` // text of the gap that opened it
	Key      string   `json:"normalised_claim"`
	ClaimIDs []string `json:"claim_ids"`
	Opened   int      `json:"loop_opened"`
	// PreviouslyVerified lists loops in which the claim was verified before
	// it was ever a gap (a regression of behaviour that was never an issue).
	PreviouslyVerified []int        `json:"previously_verified,omitempty"`
	GapLoops           []int        `json:"gap_loops"`
	VerifiedLoops      []int        `json:"verified_loops"`
	ClosedLoops        []int        `json:"closed_loops"`
	ReopenedLoops      []int        `json:"reopened_loops"`
	Recommended        string       `json:"recommended_update,omitempty"` // from the latest gap record
	PlayerImpact       string       `json:"player_impact,omitempty"`
	History            []Transition `json:"history"`
}

// LastLoop is the last loop whose evidence mentioned the issue.
func (i Issue) LastLoop() int {
	n := i.Opened
	for _, ls := range [][]int{i.GapLoops, i.VerifiedLoops} {
		if len(ls) > 0 {
			n = max(n, ls[len(ls)-1])
		}
	}
	return n
}

// Unresolved reports whether the issue is open or reopened.
func (i Issue) Unresolved() bool { return i.State != IssueClosed }

// LoopIssues counts what loop t did to the table.
type LoopIssues struct {
	Loop       int `json:"loop"`
	New        int `json:"new"`
	Closed     int `json:"closed"`
	Reopened   int `json:"reopened"`
	Unresolved int `json:"unresolved"` // open or reopened at the end of the loop
	Total      int `json:"total"`      // issues recorded so far
}

// IssuesJSONL writes one issue per line, history included.
func IssuesJSONL(issues []Issue) []byte {
	var buf bytes.Buffer
	for _, is := range issues {
		line, _ := json.Marshal(is)
		buf.Write(line)
		buf.WriteByte('\n')
	}
	return buf.Bytes()
}

// ReadIssues reads the issue table (issues.jsonl).
func ReadIssues(path string) ([]Issue, error) { return readJSONLines[Issue](path) }

// LoopDynamics is one row of dynamics.csv.
type LoopDynamics struct {
	LoopIssues
	PlannerTokens   int64     `json:"planner_tokens"`
	DeveloperTokens int64     `json:"developer_tokens"`
	QATokens        int64     `json:"qa_tokens"`
	Tokens          int64     `json:"cumulative_tokens"`
	FilesChanged    int       `json:"files_changed"`
	LinesAdded      int       `json:"lines_added"`
	LinesDeleted    int       `json:"lines_deleted"`
	QAStatus        string    `json:"qa_status"`
	BuildStatus     string    `json:"build_status"`
	Finished        time.Time `json:"finished"`
	// FailedRoles names the roles of the loop that failed after their
	// contract retries ("planner+qa"); the loop went on (trial.FailurePolicy).
	FailedRoles string `json:"failed_roles,omitempty"`
}

// DynamicsColumns is the header of dynamics.csv.
var DynamicsColumns = []string{"loop", "new", "closed", "reopened", "unresolved", "total_issues",
	"planner_tokens", "developer_tokens", "qa_tokens", "cumulative_tokens",
	"files_changed", "lines_added", "lines_deleted", "qa_status", "build_status", "finished", "failed_roles"}

// DynamicsCSV renders dynamics rows.
func DynamicsCSV(rows []LoopDynamics) []byte {
	var buf bytes.Buffer
	w := csv.NewWriter(&buf)
	_ = w.Write(DynamicsColumns)
	i := strconv.Itoa
	i64 := func(v int64) string { return strconv.FormatInt(v, 10) }
	for _, d := range rows {
		fin := ""
		if !d.Finished.IsZero() {
			fin = d.Finished.UTC().Format(time.RFC3339)
		}
		_ = w.Write([]string{i(d.Loop), i(d.New), i(d.Closed), i(d.Reopened), i(d.Unresolved), i(d.Total),
			i64(d.PlannerTokens), i64(d.DeveloperTokens), i64(d.QATokens), i64(d.Tokens),
			i(d.FilesChanged), i(d.LinesAdded), i(d.LinesDeleted), d.QAStatus, d.BuildStatus, fin, d.FailedRoles})
	}
	w.Flush()
	return buf.Bytes()
}

// ReadDynamics reads a dynamics.csv.
func ReadDynamics(path string) ([]LoopDynamics, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	recs, err := csv.NewReader(bytes.NewReader(data)).ReadAll()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if len(recs) == 0 || len(recs[0]) != len(DynamicsColumns) {
		return nil, fmt.Errorf("%s: header is not %v", path, DynamicsColumns)
	}
	var out []LoopDynamics
	for n, r := range recs[1:] {
		var d LoopDynamics
		ints := []*int{&d.Loop, &d.New, &d.Closed, &d.Reopened, &d.Unresolved, &d.Total}
		for k, p := range ints {
			v, err := strconv.Atoi(r[k])
			if err != nil {
				return nil, fmt.Errorf("%s line %d: %s: %w", path, n+2, DynamicsColumns[k], err)
			}
			*p = v
		}
		i64s := []*int64{&d.PlannerTokens, &d.DeveloperTokens, &d.QATokens, &d.Tokens}
		for k, p := range i64s {
			v, err := strconv.ParseInt(r[6+k], 10, 64)
			if err != nil {
				return nil, fmt.Errorf("%s line %d: %s: %w", path, n+2, DynamicsColumns[6+k], err)
			}
			*p = v
		}
		for k, p := range []*int{&d.FilesChanged, &d.LinesAdded, &d.LinesDeleted} {
			v, err := strconv.Atoi(r[10+k])
			if err != nil {
				return nil, fmt.Errorf("%s line %d: %s: %w", path, n+2, DynamicsColumns[10+k], err)
			}
			*p = v
		}
		d.QAStatus, d.BuildStatus, d.FailedRoles = r[13], r[14], r[16]
		if r[15] != "" {
			if d.Finished, err = time.Parse(time.RFC3339, r[15]); err != nil {
				return nil, fmt.Errorf("%s line %d: finished: %w", path, n+2, err)
			}
		}
		out = append(out, d)
	}
	return out, nil
}
