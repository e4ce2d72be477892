package roles

import (
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"sort"

	"github.com/hoh-research/hoh/analysis/results"
	"github.com/hoh-research/hoh/runrecord"
)

// Selection picks the rows a report attributes: one metric at one arm.
type Selection struct {
	Benchmark string
	Metric    string
	Arm       runrecord.Arm
	// Skipped are the configurations FromRuns found without a team.
	Skipped []string
}

// lockConfig is what a run's lock says of a factorial design: its agents'
// order and each configuration's factors.
type lockConfig struct {
	Factorial *struct {
		Agents []struct {
			Name string `json:"name"`
		} `json:"agents"`
	} `json:"factorial"`
	Configs []struct {
		Label   string            `json:"label"`
		Factors map[string]string `json:"factors"`
		Roles   json.RawMessage   `json:"roles"`
	} `json:"configs"`
}

// readLockConfig reads what run dir's lock says of its design and its
// configurations' teams (nothing, for a lock that kept no config).
func readLockConfig(dir string) (lockConfig, error) {
	var cfg lockConfig
	lock, err := runrecord.ReadLock(dir)
	if err != nil {
		return cfg, fmt.Errorf("%s: %w", dir, err)
	}
	if len(lock.Config) > 0 {
		if err := json.Unmarshal(lock.Config, &cfg); err != nil {
			return cfg, fmt.Errorf("%s: the lock's config: %w", dir, err)
		}
	}
	return cfg, nil
}

// TeamsOf spells out, for each role-team configuration of run dir (one
// with roles: or a factorial design's factors), the teams its trials'
// summaries say played it, each once, in the order first seen. A run
// without a role team reads no summary.
func TeamsOf(dir string) (map[string][]string, error) {
	cfg, err := readLockConfig(dir)
	if err != nil {
		return nil, err
	}
	team := map[string]bool{}
	for _, c := range cfg.Configs {
		if len(c.Factors) > 0 || (len(c.Roles) > 0 && string(c.Roles) != "null") {
			team[c.Label] = true
		}
	}
	if len(team) == 0 {
		return nil, nil
	}
	plan, err := runrecord.ReadPlan(dir)
	if err != nil {
		return nil, err
	}
	out := map[string][]string{}
	run := runrecord.RunLayout{Dir: dir}
	for _, p := range plan {
		if !team[p.Config] {
			continue
		}
		var s runrecord.Summary
		if err := runrecord.ReadJSON(run.Trial(p.Dir).Summary(), &s); err != nil {
			if os.IsNotExist(err) {
				continue // not run yet
			}
			return nil, err
		}
		if line := s.Team.String(); line != "" && !slices.Contains(out[p.Config], line) {
			out[p.Config] = append(out[p.Config], line)
		}
	}
	return out, nil
}

// FromRuns reads the trials of run directories: each trial's score of the
// selection (the benchmark's primary metric and the hoh arm with the most
// steps when not given) and its priced cost from the run's score rows,
// its team from its summary (Summary.Team, else the configuration's
// factors in the run's lock). Agents is the design's order of agents when
// a lock names it.
func FromRuns(dirs []string, sel Selection) (trials []Trial, agents []string, _ Selection, _ error) {
	set, err := results.LoadWith(results.Options{}, dirs...)
	if err != nil {
		return nil, nil, sel, err
	}
	if sel, err = choose(set, sel); err != nil {
		return nil, nil, sel, err
	}
	teams := map[string]map[string]string{} // trial key -> team
	for _, dir := range dirs {
		a, err := readTeams(dir, teams)
		if err != nil {
			return nil, nil, sel, err
		}
		if agents == nil {
			agents = a
		}
	}
	for r := range set.All() {
		if r.Benchmark != sel.Benchmark || r.Metric != sel.Metric || r.Arm() != sel.Arm {
			continue
		}
		team := teams[r.Source]
		if team == nil {
			// A configuration of the run that is no team of the design
			// (a written configs: entry beside it) is not attributed.
			if !slices.Contains(sel.Skipped, r.Config) {
				sel.Skipped = append(sel.Skipped, r.Config)
			}
			continue
		}
		trials = append(trials, Trial{Config: r.Config, Team: team, Task: r.Task, Rep: r.Rep, Score: r.Value, Cost: r.CostUSD})
	}
	if len(trials) == 0 {
		return nil, nil, sel, fmt.Errorf("roles: no %s %s rows at %s of a role team (a trial's team is in its summary or its configuration's factors in the run's lock)", sel.Benchmark, sel.Metric, sel.Arm)
	}
	sort.Strings(sel.Skipped)
	return trials, agents, sel, nil
}

// choose fills the selection's defaults from the rows.
func choose(set *results.Set, sel Selection) (Selection, error) {
	benches := map[string]bool{}
	last := 0
	for r := range set.All() {
		benches[r.Benchmark] = true
		if r.Condition == runrecord.HoH && (sel.Benchmark == "" || r.Benchmark == sel.Benchmark) {
			last = max(last, r.Checkpoint)
		}
	}
	if sel.Benchmark == "" {
		if len(benches) != 1 {
			return sel, fmt.Errorf("roles: the records hold %d benchmarks: name one", len(benches))
		}
		for b := range benches {
			sel.Benchmark = b
		}
	}
	if sel.Metric == "" {
		rep, _ := runrecord.ReportingOf(sel.Benchmark)
		if sel.Metric = rep.PrimaryMetric; sel.Metric == "" {
			return sel, fmt.Errorf("roles: hoh does not know benchmark %s's primary metric: name one", sel.Benchmark)
		}
	}
	if sel.Arm == (runrecord.Arm{}) {
		if last == 0 {
			return sel, fmt.Errorf("roles: the records have no hoh arm: name one")
		}
		sel.Arm = runrecord.Arm{Condition: runrecord.HoH, Checkpoint: last}
	}
	return sel, nil
}

// readTeams adds each trial's team of run dir to teams, by trial key, and
// returns the design's agent order from the lock.
func readTeams(dir string, teams map[string]map[string]string) ([]string, error) {
	cfg, err := readLockConfig(dir)
	if err != nil {
		return nil, fmt.Errorf("roles: %w", err)
	}
	factors := map[string]map[string]string{}
	for _, c := range cfg.Configs {
		factors[c.Label] = c.Factors
	}
	plan, err := runrecord.ReadPlan(dir)
	if err != nil {
		return nil, err
	}
	run := runrecord.RunLayout{Dir: dir}
	for _, p := range plan {
		var s runrecord.Summary
		if err := runrecord.ReadJSON(run.Trial(p.Dir).Summary(), &s); err != nil && !os.IsNotExist(err) {
			return nil, err
		}
		team := map[string]string{}
		for role, m := range s.Team {
			if m.Agent != "" {
				team[string(role)] = m.Agent
			}
		}
		if len(team) == 0 {
			team = factors[p.Config]
		}
		if len(team) > 0 {
			teams[p.Key] = team
		}
	}
	var agents []string
	if cfg.Factorial != nil {
		for _, a := range cfg.Factorial.Agents {
			agents = append(agents, a.Name)
		}
	}
	return agents, nil
}
