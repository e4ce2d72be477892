// Package export writes a run's records in formats other tools read: ATIF
// trajectories (Harbor RFC 0001), one document per trial.
package export

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math/big"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/hoh-research/hoh/adapters/harness/atif"
	"github.com/hoh-research/hoh/adapters/harness/catalogue"
	"github.com/hoh-research/hoh/adapters/harness/cliproc"
	"github.com/hoh-research/hoh/runrecord"
)

// Options are what an export needs besides the records.
type Options struct {
	// Secrets are replaced in every document written.
	Secrets []string
	// Cost, when set, prices an invocation's usage for a configuration
	// exactly: nil means the price is unknown (no cost is written).
	Cost func(config string, u runrecord.Usage) *big.Rat
	// prices (PriceByConfig) look each trial's model up in a table.
	prices runrecord.Prices
}

// PriceByConfig is the Options pricing with a table, each trial's model
// looked up by the provider and model its run's lock names.
func PriceByConfig(ps runrecord.Prices) Options { return Options{prices: ps} }

// runMeta is what the run's lock says about a configuration.
type runMeta struct {
	hohVersion string
	harness    map[string]string // label -> kind@version
	model      map[string]string // label -> model
	provider   map[string]string // label -> provider name
	notice     string
	secrets    []string // values of the provider key variables, as set here
}

func readRunMeta(runDir string) runMeta {
	m := runMeta{harness: map[string]string{}, model: map[string]string{}, provider: map[string]string{}}
	lock, err := runrecord.ReadLock(runDir)
	if err != nil {
		return m
	}
	m.hohVersion, m.notice = lock.HohVersion, lock.Notice
	for k, v := range lock.Harnesses {
		m.harness[k] = v
	}
	var cfg struct {
		Configs []struct {
			Label    string `json:"label"`
			Provider struct {
				Name   string `json:"name"`
				Model  string `json:"model"`
				KeyEnv string `json:"key_env"`
			} `json:"provider"`
		} `json:"configs"`
	}
	if json.Unmarshal(lock.Config, &cfg) == nil {
		for _, c := range cfg.Configs {
			m.model[c.Label] = c.Provider.Model
			m.provider[c.Label] = c.Provider.Name
			if v := os.Getenv(c.Provider.KeyEnv); c.Provider.KeyEnv != "" && v != "" {
				m.secrets = append(m.secrets, v)
			}
		}
	}
	return m
}

// TrialDirs lists the trial directories under root (a run, a project, or
// one trial), in lexical order.
func TrialDirs(root string) ([]string, error) {
	if isTrial(root) {
		return []string{root}, nil
	}
	var out []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "history.git" || d.Name() == "workspace" || strings.HasPrefix(d.Name(), "iter-") || d.Name() == runrecord.ReportDir) {
			return filepath.SkipDir
		}
		// A multi-step trial's steps are parts of its document.
		if d.IsDir() && isTrial(p) {
			out = append(out, p)
			return filepath.SkipDir
		}
		return nil
	})
	sort.Strings(out)
	return out, err
}

// isTrial: dir holds a trial's trial.json, or a multi-step trial's
// steps.json (its steps hold their own trial.json).
func isTrial(dir string) bool {
	for _, f := range []string{runrecord.TrialSpecFile, runrecord.StepsFile} {
		if _, err := os.Stat(filepath.Join(dir, f)); err == nil {
			return true
		}
	}
	return false
}

// trialSpec is a trial's spec: trial.json, or for a multi-step trial its
// summary's (a multi-step trial still running has none yet).
func trialSpec(l runrecord.TrialLayout) (runrecord.TrialSpec, error) {
	spec, err := runrecord.ReadTrialSpec(l.Spec())
	if err == nil || !errors.Is(err, fs.ErrNotExist) || len(l.Steps()) == 0 {
		return spec, err
	}
	var s runrecord.Summary
	if err := runrecord.ReadJSON(l.Summary(), &s); err != nil {
		return spec, fmt.Errorf("multi-step trial %s: no summary yet (%w)", l.Dir, err)
	}
	return s.Spec, nil
}

// runDirOf finds the run directory of a trial: the nearest ancestor with a
// lock.json ("" when there is none, as for a project's trial).
func runDirOf(trialDir string) string {
	for d := filepath.Dir(trialDir); ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, runrecord.LockFile)); err == nil {
			return d
		}
		if filepath.Dir(d) == d {
			return ""
		}
	}
}

// Trial builds the ATIF document of one trial directory: a root trajectory
// whose steps are hoh's dispatches (one per committed invocation of the
// token ledger, in order) and whose embedded subagent trajectories are the
// invocations, each built from its CLI's event stream. Token totals are the
// ledger's.
func Trial(trialDir string, opt Options) (atif.Trajectory, error) {
	l := runrecord.TrialLayout{Dir: trialDir}
	spec, err := trialSpec(l)
	if err != nil {
		return atif.Trajectory{}, err
	}
	meta := runMeta{harness: map[string]string{}, model: map[string]string{}, provider: map[string]string{}}
	if rd := runDirOf(trialDir); rd != "" {
		meta = readRunMeta(rd)
	}
	cost := opt.Cost
	if opt.prices != nil {
		p, ok := opt.prices.Lookup(meta.provider[spec.Config], meta.model[spec.Config])
		cost = func(string, runrecord.Usage) *big.Rat { return nil }
		if ok {
			cost = func(_ string, u runrecord.Usage) *big.Rat { return p.Cost(u) }
		}
	}
	root := rootTrajectory(spec, meta)
	d := &dispatches{root: &root, spec: spec, cost: cost, totalCost: new(big.Rat), costKnown: cost != nil}
	d.kind, d.version, _ = strings.Cut(meta.harness[spec.Config], "@")
	d.model = meta.model[spec.Config]
	var sum runrecord.Summary
	if runrecord.ReadJSON(l.Summary(), &sum) == nil && len(sum.Team) > 0 {
		d.team, d.costKnown = sum.Team, true
	}
	// A multi-step trial's invocations are its steps', in step order.
	for _, u := range l.Units() {
		step := ""
		if u.Dir != l.Dir {
			step, _ = filepath.Rel(trialDir, u.Dir)
		}
		if err := d.addUnit(u, step); err != nil {
			return atif.Trajectory{}, err
		}
	}
	root.FinalMetrics = atif.UsageFinal(d.total, len(root.Steps))
	if d.costKnown && d.dispatched > 0 {
		f, _ := d.totalCost.Float64()
		root.FinalMetrics.TotalCostUSD = &f
		root.FinalMetrics.Extra["total_cost_usd_exact"] = runrecord.FormatUSD(d.totalCost)
	}
	return root, nil
}

// rootTrajectory is a trial's root trajectory before its dispatches: hoh
// as the agent, the trial's identity, and the task as its first step.
func rootTrajectory(spec runrecord.TrialSpec, meta runMeta) atif.Trajectory {
	root := atif.Trajectory{
		SchemaVersion: atif.SchemaVersion, SessionID: spec.Key, TrajectoryID: spec.Key,
		Agent: atif.Agent{Name: "hoh", Version: orUnknown(meta.hohVersion), ModelName: meta.model[spec.Config],
			Extra: map[string]any{"harness": meta.harness[spec.Config], "config": spec.Config}},
		Notes: "Exported by hoh from the trial's records. Each role invocation (Planner, Developer, QA Tester, " +
			"or a Vanilla pass) is an embedded subagent trajectory built from its CLI's own event stream; " +
			"the root's steps are hoh's dispatches (no model call), and its final_metrics are the trial's token ledger, subagents included.",
		Extra: map[string]any{"benchmark": spec.Benchmark, "task": spec.Task, "config": spec.Config,
			"arm": spec.Arm, "rep": spec.Rep, "trial_key": spec.Key},
	}
	if meta.notice != "" {
		root.Extra["notice"] = meta.notice
	}
	root.Steps = append(root.Steps, atif.Step{StepID: 1, Source: "user",
		Message: fmt.Sprintf("Task %s of %s under %s with %s.", spec.Task, spec.Benchmark, spec.Arm, spec.Config)})
	return root
}

// dispatches adds a trial's invocations to its root trajectory and totals
// their usage and, while every one is priced, their cost.
type dispatches struct {
	root                 *atif.Trajectory
	spec                 runrecord.TrialSpec
	kind, version, model string // the configuration's harness and model
	cost                 func(config string, u runrecord.Usage) *big.Rat
	// team, for a role team (summary.json), names each role's CLI and
	// model; its invocations' costs are the ledger's, priced per role.
	team runrecord.Team

	total      runrecord.Usage
	totalCost  *big.Rat
	costKnown  bool
	dispatched int
}

// addUnit adds the invocations of one unit's token ledger (the trial, or
// a multi-step trial's step named step): a dispatch step each, and its
// subagent trajectory.
func (d *dispatches) addUnit(u runrecord.TrialLayout, step string) error {
	ledger, err := runrecord.ReadLedger(u.Usage())
	if err != nil {
		return err
	}
	for _, inv := range ledger {
		d.total = d.total.Add(inv.Usage)
		d.dispatched++
		ikind, iversion, imodel := d.kind, d.version, d.model
		if m, ok := d.team[inv.Role]; ok {
			ikind, iversion, imodel = m.Harness, m.Version, m.Model
		}
		if ikind == "" {
			ikind = kindFromCommand(filepath.Join(u.Dir, inv.Dir))
		}
		sub, err := invocationTrajectory(u.Dir, step, inv.Invocation, ikind, iversion, imodel)
		if err != nil {
			return err
		}
		if d.cost != nil || d.team != nil {
			if usd := d.invocationCost(inv.Invocation); usd != nil {
				f, _ := usd.Float64()
				sub.FinalMetrics.TotalCostUSD = &f
				sub.FinalMetrics.Extra["total_cost_usd_exact"] = runrecord.FormatUSD(usd)
				d.totalCost.Add(d.totalCost, usd)
			} else {
				d.costKnown = false
			}
		}
		d.root.Steps = append(d.root.Steps, dispatchStep(len(d.root.Steps)+1, step, filepath.Join(u.Dir, inv.Dir), inv.Invocation, sub.TrajectoryID))
		d.root.SubagentTrajectories = append(d.root.SubagentTrajectories, sub)
	}
	return nil
}

// invocationCost is an invocation's dollars: the ledger's, priced per role
// when the run ran it, for a role team (its roles' models have no one
// price); else the configuration's price of its usage; nil: unknown.
func (d *dispatches) invocationCost(inv runrecord.Invocation) *big.Rat {
	if d.team != nil {
		if usd, err := runrecord.ParseUSD(inv.CostUSD); err == nil && inv.CostUSD != "" {
			return usd
		}
		if d.cost == nil {
			return nil
		}
	}
	return d.cost(d.spec.Config, inv.Usage)
}

// dispatchStep is the root's step for one invocation: hoh's dispatch (no
// model call) whose observation is the invocation's final message and a
// reference to its trajectory; step names a multi-step trial's step.
func dispatchStep(id int, step, attemptDir string, inv runrecord.Invocation, trajectoryID string) atif.Step {
	zero := 0
	msg := fmt.Sprintf("%s, iteration %d, attempt %d: %s", inv.Role.Display(), inv.Iteration, inv.Attempt, inv.Outcome)
	extra := invocationExtra(inv)
	if step != "" {
		msg = step + ": " + msg
		extra["step"] = step
	}
	return atif.Step{
		StepID: id, Source: "agent", LLMCallCount: &zero, Message: msg,
		Observation: &atif.Observation{Results: []atif.ObservationResult{{
			Content:               atif.Text(finalMessage(attemptDir)),
			SubagentTrajectoryRef: []atif.SubagentRef{{TrajectoryID: trajectoryID, SessionID: inv.Session}},
		}}},
		Extra: extra,
	}
}

func invocationExtra(inv runrecord.Invocation) map[string]any {
	x := map[string]any{"iteration": inv.Iteration, "role": inv.Role, "attempt": inv.Attempt,
		"outcome": string(inv.Outcome), "duration_ns": int64(inv.Duration), "dir": inv.Dir}
	if inv.Evidence != "" {
		x["evidence"] = inv.Evidence
	}
	return x
}

func orUnknown(s string) string {
	if s == "" {
		return "unknown"
	}
	return s
}

// invocationTrajectory is one invocation as an ATIF trajectory: its prompt,
// then its CLI's steps; its final metrics are the ledger's usage.
//
// unitDir is the trial's or its step's directory; step, that directory
// relative to the trial (multi-step trials), prefixes the trajectory's id.
func invocationTrajectory(unitDir, step string, inv runrecord.Invocation, kind, version, model string) (atif.Trajectory, error) {
	a := runrecord.AttemptLayout{Dir: filepath.Join(unitDir, inv.Dir)}
	prompt, _ := os.ReadFile(a.Prompt())
	steps := []atif.Step{{Source: "user", Message: string(prompt)}}
	raw, err := readEvents(a)
	if err != nil {
		return atif.Trajectory{}, err
	}
	cli, _ := catalogue.Lookup(kind) // the CLI's own reader of its events
	conv := cli.ATIF
	if conv == nil && len(raw) > 0 {
		steps = append(steps, atif.Step{Source: "system",
			Message: fmt.Sprintf("hoh cannot read the events of harness %q as ATIF steps; its raw log is %s", kind, filepath.Join(inv.Dir, "logs", runrecord.StdoutLog))})
	} else if conv != nil {
		steps = append(steps, conv(raw, inv.Usage)...)
	}
	for i := range steps {
		steps[i].StepID = i + 1
	}
	t := atif.Trajectory{
		SchemaVersion: atif.SchemaVersion, SessionID: inv.Session, TrajectoryID: filepath.Join(step, inv.Dir),
		Agent:        atif.Agent{Name: orUnknown(kind), Version: orUnknown(version), ModelName: model},
		Steps:        steps,
		FinalMetrics: atif.UsageFinal(inv.Usage, len(steps)),
		Extra:        invocationExtra(inv),
	}
	return t, nil
}

// readEvents reads an attempt's recorded events: events.json (the parsed
// stream), else stdout.jsonl; none is no events.
func readEvents(a runrecord.AttemptLayout) ([]json.RawMessage, error) {
	var raw []json.RawMessage
	data, err := os.ReadFile(filepath.Join(a.Logs(), runrecord.EventsLog))
	if err == nil {
		if err := json.Unmarshal(data, &raw); err != nil {
			return nil, fmt.Errorf("%s: %w", filepath.Join(a.Logs(), runrecord.EventsLog), err)
		}
		return raw, nil
	}
	if !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	data, err = os.ReadFile(filepath.Join(a.Logs(), runrecord.StdoutLog))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return cliproc.JSONLines(strings.Split(string(data), "\n")), nil
}

func finalMessage(attemptDir string) string {
	var r struct {
		FinalMessage string `json:"final_message"`
	}
	_ = runrecord.ReadJSON(runrecord.AttemptLayout{Dir: attemptDir}.Result(), &r)
	return r.FinalMessage
}

// kindFromCommand names the CLI of an attempt from its recorded argv.
func kindFromCommand(attemptDir string) string {
	var c struct {
		Argv []string `json:"argv"`
	}
	if runrecord.ReadJSON(filepath.Join(attemptDir, "logs", runrecord.CommandLog), &c) != nil {
		return ""
	}
	for _, a := range c.Argv {
		if cli, ok := catalogue.Lookup(filepath.Base(a)); ok && cli.ATIF != nil {
			return cli.Kind
		}
	}
	return ""
}

// Write writes doc as JSON to path with every secret replaced.
func Write(path string, doc atif.Trajectory, secrets []string) error {
	data, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		return err
	}
	data = []byte(cliproc.Redact(string(data), secrets))
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return runrecord.WriteFile(path, append(data, '\n'))
}

// TrialFile is where a trial's document goes: out/<trial dir relative to
// base> when out is set, else the trial directory itself.
func TrialFile(trialDir, base, out string) string {
	if out == "" {
		return filepath.Join(trialDir, atif.FileName)
	}
	rel, err := filepath.Rel(base, trialDir)
	if err != nil || strings.HasPrefix(rel, "..") {
		rel = filepath.Base(trialDir)
	}
	return filepath.Join(out, rel, atif.FileName)
}

// Tree exports every trial under root (a run, a project or one trial) and
// returns the files written. A trial without a committed ledger line is
// exported with what it has; a trial that cannot be read is an error naming
// it.
func Tree(root, out string, opt Options) ([]string, error) {
	dirs, err := TrialDirs(root)
	if err != nil {
		return nil, err
	}
	if len(dirs) == 0 {
		return nil, fmt.Errorf("%s: no trial directories (trial.json) found", root)
	}
	var written []string
	for _, d := range dirs {
		doc, err := Trial(d, opt)
		if err != nil {
			return written, fmt.Errorf("trial %s: %w", d, err)
		}
		p := TrialFile(d, root, out)
		secrets := opt.Secrets
		if rd := runDirOf(d); rd != "" {
			secrets = append(append([]string(nil), secrets...), readRunMeta(rd).secrets...)
		}
		if err := Write(p, doc, secrets); err != nil {
			return written, fmt.Errorf("trial %s: %w", d, err)
		}
		written = append(written, p)
	}
	return written, nil
}
