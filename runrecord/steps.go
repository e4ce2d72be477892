package runrecord

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// A trial of a multi-step task (Harbor's [[steps]]) holds, besides its
// summary.json and scores.csv, one trial directory per step that started
// (steps/NN-<name>/, each a whole TrialLayout with its own trial.json,
// stages, ledger and evaluations, but no scores.csv) and steps.json.
const (
	StepsDir         = "steps"
	StepsFile        = "steps.json"
	StepStartFailure = "start-failure.json"
)

// Step is the trial directory of step i (from 0) named name.
func (l TrialLayout) Step(i int, name string) TrialLayout {
	return TrialLayout{filepath.Join(l.Dir, StepsDir, fmt.Sprintf("%02d-%s", i+1, name))}
}

// StepsRecord is steps.json: one StepRecord per step of the task.
func (l TrialLayout) StepsRecord() string { return filepath.Join(l.Dir, StepsFile) }

// StartFailure is start-failure.json of a step's directory (Failure): the
// step's start (a setup script, a health check) failed before its agent
// ran.
func (l TrialLayout) StartFailure() string { return filepath.Join(l.Dir, StepStartFailure) }

// Steps lists the directories of the steps a multi-step trial has started
// (steps/NN-<name>), in order; none for any other trial.
func (l TrialLayout) Steps() []TrialLayout {
	ents, _ := os.ReadDir(filepath.Join(l.Dir, StepsDir))
	type numbered struct {
		n   int
		dir string
	}
	var steps []numbered
	for _, e := range ents {
		if n, ok := stepNumber(e.Name()); ok && e.IsDir() {
			steps = append(steps, numbered{n, filepath.Join(l.Dir, StepsDir, e.Name())})
		}
	}
	sort.Slice(steps, func(i, j int) bool { return steps[i].n < steps[j].n })
	out := make([]TrialLayout, len(steps))
	for i, s := range steps {
		out[i] = TrialLayout{s.dir}
	}
	return out
}

// stepNumber is N of a step directory's name NN-<name>.
func stepNumber(base string) (int, bool) {
	num, name, ok := strings.Cut(base, "-")
	n, err := strconv.Atoi(num)
	return n, ok && err == nil && n > 0 && name != ""
}

// MultiStep reports whether l is a multi-step trial that has started: it
// has steps.json or a step directory, and no trial.json of its own.
func (l TrialLayout) MultiStep() bool {
	if _, err := os.Stat(l.Spec()); err == nil {
		return false
	}
	if _, err := os.Stat(l.StepsRecord()); err == nil {
		return true
	}
	return len(l.Steps()) > 0
}

// StepName is the name of a step directory (steps/NN-<name>), "" for any
// other directory.
func StepName(l TrialLayout) string {
	base := filepath.Base(l.Dir)
	if _, ok := stepNumber(base); !ok || filepath.Base(filepath.Dir(l.Dir)) != StepsDir {
		return ""
	}
	_, name, _ := strings.Cut(base, "-")
	return name
}

// StepRecord is one step of a multi-step trial, in steps.json. The runner
// writes steps.json as each step starts (the steps not finished yet
// Pending) and once more when the sequence has ended (none pending).
type StepRecord struct {
	Name string `json:"name"`
	// Dir is the step's trial directory relative to the trial's; "" when
	// the step did not start.
	Dir string `json:"dir,omitempty"`
	// StartFailure: the step's start failed before its agent ran.
	StartFailure string `json:"start_failure,omitempty"`
	// Checkpoint is the step's last checkpoint, the artifact it handed on;
	// Metrics and EvalError are its evaluation by the step's verifier.
	Checkpoint int                `json:"checkpoint,omitempty"`
	Metrics    map[string]float64 `json:"metrics,omitempty"`
	EvalError  string             `json:"evaluation_error,omitempty"`
	// Stopped says why the steps after this one did not run (its
	// min_reward gate, or no reward).
	Stopped string `json:"stopped,omitempty"`
	// NotRun: an earlier step stopped the sequence.
	NotRun bool `json:"not_run,omitempty"`
	// Pending: the trial is running and the step has not finished (Dir
	// set: it is the one running).
	Pending bool `json:"pending,omitempty"`
}

// ReadSteps reads steps.json; a trial that has none yet gives nil.
func ReadSteps(l TrialLayout) ([]StepRecord, error) {
	var recs []StepRecord
	if err := ReadJSON(l.StepsRecord(), &recs); err != nil && !os.IsNotExist(err) {
		return nil, err
	}
	return recs, nil
}

// Units are the directories that hold a trial's invocations (each with
// its trial.json, ledgers and served log): a multi-step trial's steps, or
// the trial itself. A reader of a trial's usage reads them all.
func (l TrialLayout) Units() []TrialLayout {
	if steps := l.Steps(); len(steps) > 0 {
		return steps
	}
	return []TrialLayout{l}
}

// LedgerTotal is the usage a trial's token ledgers (usage.jsonl) record,
// a multi-step trial's steps' included: every committed invocation, what
// its summary and scores count. Every reader of a trial's tokens goes
// through it (or Spent), so no reader misses a step.
func LedgerTotal(l TrialLayout) (Usage, error) {
	var total Usage
	for _, u := range l.Units() {
		v, err := LedgerUsage(u.Usage())
		if err != nil {
			return total, err
		}
		total = total.Add(v)
	}
	return total, nil
}

// Ledgers are the paths of a trial's token ledgers that exist (its own,
// or its steps'), each beside its trial.json.
func (l TrialLayout) Ledgers() []string {
	var out []string
	for _, u := range l.Units() {
		if _, err := os.Stat(u.Usage()); err == nil {
			out = append(out, u.Usage())
		}
	}
	return out
}

// Spent is what a trial has cost so far, a multi-step trial's steps'
// included: per trial directory its ledger and its replaced and killed
// attempts, or what hoh's relay logged as served when that is more (a
// kill between a response and its ledger line). Budgets count it.
func Spent(l TrialLayout) Usage {
	var total Usage
	for _, u := range l.Units() {
		ledger, _ := LedgerUsage(u.Usage())
		replaced, _ := LedgerUsage(u.ReplacedUsage())
		_, relayed, _ := ReadServed(u.Served())
		own := ledger.Add(replaced)
		if relayed.Total > own.Total {
			own = relayed
		}
		total = total.Add(own)
	}
	return total
}

// Activity is where a running trial is, as its directory shows it: the
// last role stage that started (a multi-step trial's in its current step).
type Activity struct {
	// Step (from 1) of Steps (0: not known yet), named StepName, for a
	// multi-step trial.
	Step, Steps int
	StepName    string
	Iteration   int
	Role        Role
	Attempt     int
	// Committed: that stage has committed, nothing newer has started (the
	// next stage, the checkpoints' evaluation or the next step is starting).
	Committed bool
}

// ReadActivity reads where the trial in l is.
func ReadActivity(l TrialLayout) Activity {
	var a Activity
	if steps := l.Steps(); len(steps) > 0 {
		cur := steps[len(steps)-1]
		a = readStageActivity(cur)
		a.Step, a.StepName = len(steps), StepName(cur)
		if recs, err := ReadSteps(l); err == nil {
			a.Steps = len(recs)
		}
		return a
	}
	return readStageActivity(l)
}

func readStageActivity(l TrialLayout) Activity {
	var a Activity
	its := l.Iterations()
	if len(its) == 0 {
		return a
	}
	a.Iteration = its[len(its)-1]
	for _, role := range Roles {
		if _, err := os.Stat(l.Stage(a.Iteration, role)); err == nil {
			a.Role = role // the last role whose stage exists
		}
	}
	if a.Role == "" {
		return a
	}
	a.Attempt = len(l.StageFiles(a.Iteration, a.Role).Attempts())
	stages, _ := ReadStages(l.Stages())
	for _, s := range stages {
		if s.Iteration == a.Iteration && s.Role == a.Role {
			a.Committed = true
		}
	}
	return a
}

// String says it in words: "step 2/3 two: iteration 1 developer (attempt
// 2)".
func (a Activity) String() string {
	var parts []string
	if a.Step > 0 {
		s := fmt.Sprintf("step %d", a.Step)
		if a.Steps > 0 {
			s += fmt.Sprintf("/%d", a.Steps)
		}
		if a.StepName != "" {
			s += " " + a.StepName
		}
		parts = append(parts, s+":")
	}
	switch {
	case a.Role == "" && a.Iteration == 0:
		parts = append(parts, "starting")
	case a.Role == "":
		parts = append(parts, fmt.Sprintf("iteration %d starting", a.Iteration))
	default:
		s := fmt.Sprintf("iteration %d %s", a.Iteration, a.Role)
		if a.Attempt > 1 {
			s += fmt.Sprintf(" (attempt %d)", a.Attempt)
		}
		if a.Committed {
			s += " done"
		}
		parts = append(parts, s)
	}
	return strings.Join(parts, " ")
}

// SpentByRole is Spent split by role (a role team prices each role's
// tokens at its own model): per unit and role, what hoh's relay served
// that role's attempts, or where that is less, its ledger plus its
// replaced and killed attempts. Served traffic outside any attempt (none
// is expected) is left out.
func SpentByRole(l TrialLayout) map[Role]Usage {
	out := map[Role]Usage{}
	for _, u := range l.Units() {
		own := map[Role]Usage{}
		for _, p := range []string{u.Usage(), u.ReplacedUsage()} {
			lines, _, _ := readLedger(p)
			for _, x := range lines {
				own[x.Role] = own[x.Role].Add(x.Usage)
			}
		}
		relayed := map[Role]Usage{}
		served, _, _ := ReadServed(u.Served())
		for _, s := range served {
			if parts := strings.Split(s.Attempt, "/"); len(parts) == 3 {
				relayed[Role(parts[1])] = relayed[Role(parts[1])].Add(s.Usage)
			}
		}
		for _, role := range Roles {
			spent := own[role]
			if relayed[role].Total > spent.Total {
				spent = relayed[role]
			}
			if spent != (Usage{}) {
				out[role] = out[role].Add(spent)
			}
		}
	}
	return out
}
