package runrecord

import (
	"encoding/json"
	"fmt"
	"hash/fnv"
	"os"
)

// Lock pins what a run directory was started with (lock.json; written by
// experiments/plan).
type Lock struct {
	Experiment   string `json:"experiment"`
	ConfigDigest string `json:"config_digest"`
	// Config is what ConfigDigest covers, so a refusal can say what changed.
	Config json.RawMessage `json:"config,omitempty"`
	// Endpoints are the base URLs by label; a changed host or port alone
	// does not block a resume.
	Endpoints   map[string]string `json:"endpoints,omitempty"`
	TaskDigests map[string]string `json:"task_digests"`
	Harnesses   map[string]string `json:"harness_versions"`  // label -> kind@version
	Arms        map[string]Arm    `json:"arms,omitempty"`    // label/series -> arm run, e.g. hoh@3
	Scripts     map[string]string `json:"scripts,omitempty"` // label -> script digest
	HohVersion  string            `json:"hoh_version"`
	Keys        []string          `json:"plan_keys"` // every trial of the full plan
	Shard       string            `json:"shard,omitempty"`
	// ShardBy says how the trials were dealt to the shards: ShardByCost,
	// or "" for a lock from before deals (every trial by its key's hash).
	ShardBy string `json:"shard_by,omitempty"`
	// ShardOf is the deal of a sharded run, trial key -> shard k of the
	// lock's N, so a resume keeps its trials whatever the plan became.
	ShardOf map[string]int `json:"shard_of,omitempty"`
	Shards  []string       `json:"merged_shards,omitempty"`
	Notice  string         `json:"notice,omitempty"`
}

// ShardByCost names the deal by estimated cost (experiments/plan.Deal).
const ShardByCost = "cost"

// ShardCount is N of the lock's shard k/N, 0 when the run is not sharded.
func (l Lock) ShardCount() int {
	var k, n int
	if _, err := fmt.Sscanf(l.Shard, "%d/%d", &k, &n); err != nil {
		return 0
	}
	return n
}

// ShardOf is the shard (1..n) of the trial with key among n shards: the
// lock's deal when it dealt n shards by cost and holds the key, else the
// key's hash, which is how every trial was sharded before deals, so a legacy
// run, or a trial added to a dealt one, keeps the shard it had.
func ShardOf(l Lock, key string, n int) int {
	if n <= 1 {
		return 1
	}
	if l.ShardBy == ShardByCost && l.ShardCount() == n {
		if k, ok := l.ShardOf[key]; ok && k >= 1 && k <= n {
			return k
		}
	}
	h := fnv.New32a()
	h.Write([]byte(key))
	return int(h.Sum32()%uint32(n)) + 1
}

// ReadLock reads a run directory's lock.json.
func ReadLock(runDir string) (Lock, error) {
	var l Lock
	err := ReadJSON(RunLayout{Dir: runDir}.Lock(), &l)
	return l, err
}

// PlannedTrial is one entry of plan.json as a reader needs it. The writer,
// plan.Trial, also records the task's limits and folder, which only the
// runner uses.
type PlannedTrial struct {
	Key        string      `json:"key"`
	Dir        string      `json:"dir"` // relative to the run directory
	Config     string      `json:"config"`
	Arm        Arm         `json:"arm"`
	Arms       []Arm       `json:"arms,omitempty"` // see ServedArms
	Task       PlannedTask `json:"task"`
	TaskDigest string      `json:"task_digest"`
	Rep        int         `json:"rep"`
}

// PlannedTask names the task of a planned trial and its reporting columns.
type PlannedTask struct {
	Benchmark string `json:"benchmark"`
	ID        string `json:"id"`
	Name      string `json:"name,omitempty"`
	Family    string `json:"family,omitempty"`
	Group     string `json:"group,omitempty"`
	Category  string `json:"category,omitempty"`
}

// Spec is the TrialSpec of a planned trial.
func (t PlannedTrial) Spec() TrialSpec {
	return TrialSpec{Key: t.Key, Benchmark: t.Task.Benchmark, Task: t.Task.ID, Config: t.Config, Arm: t.Arm, Rep: t.Rep}
}

// ReadPlan reads a run directory's plan.json.
func ReadPlan(runDir string) ([]PlannedTrial, error) {
	var ts []PlannedTrial
	return ts, ReadPlanInto(runDir, &ts)
}

// ServedArms is every arm the config named that a trial run as arm serves,
// in the config's order: a vanilla-continuation@3 trial serves vanilla
// (its pass 1) and vanilla-continuation@3, a hoh@3 trial hoh@2 and hoh@3
// when both are named. arms is the plan's record of them; a plan written
// before it was kept serves its own arm only.
func ServedArms(arm Arm, arms []Arm) []Arm {
	if len(arms) == 0 {
		return []Arm{arm}
	}
	return arms
}

// ReadPlanInto decodes a run directory's plan.json into v (the runner reads
// its own, fuller, trial type); a directory without one is not a run
// directory.
func ReadPlanInto(runDir string, v any) error {
	err := ReadJSON(RunLayout{Dir: runDir}.Plan(), v)
	if os.IsNotExist(err) {
		return fmt.Errorf("%s is not a run directory (no %s)", runDir, PlanFile)
	}
	return err
}

// TrialProgress is a planned trial's state as the files of its directory
// show it.
type TrialProgress struct {
	State  State
	Status Status
	Reason string
	Usage  Usage
}

// SummaryState is the state of a trial that wrote its summary: done when
// completed, failed otherwise.
func SummaryState(s *Summary) State {
	if s.Status != StatusCompleted {
		return StateFailed
	}
	return StateDone
}

// BudgetReasons maps the key of every trial the runner did not start for
// lack of budget (trials.jsonl) to its reason.
func BudgetReasons(run RunLayout) map[string]string {
	budget := map[string]string{}
	lines, _ := ReadTrialLines(run.Trials())
	for _, l := range lines {
		if l.State == StateBudget {
			budget[l.Key] = l.Reason
		}
	}
	return budget
}

// ReadTrialProgress reads the state of the trial in l: finished (summary),
// given up by the runner (runner-failure.json), running (trial.json, or a
// multi-step trial's first step), not run for budget (budget, from
// BudgetReasons), or remaining. Usage is the summary's, else the ledgers'
// so far (LedgerTotal: a multi-step trial's steps').
func ReadTrialProgress(l TrialLayout, budgetReason string, budgeted bool) TrialProgress {
	st := TrialProgress{State: StateRemaining}
	var s Summary
	if err := ReadJSON(l.Summary(), &s); err == nil {
		return TrialProgress{State: SummaryState(&s), Status: s.Status, Reason: s.Reason, Usage: s.Usage}
	} else if !os.IsNotExist(err) {
		st.State, st.Reason = StateFailed, err.Error()
		return st
	}
	var f Failure
	if err := ReadJSON(l.RunnerFailure(), &f); err == nil {
		st.State, st.Reason = StateFailed, f.Reason
	} else if _, err := os.Stat(l.Spec()); err == nil || l.MultiStep() {
		st.State = StateRunning
	} else if budgeted {
		st.State, st.Reason = StateBudget, budgetReason
	}
	u, err := LedgerTotal(l)
	if err != nil && st.State != StateFailed {
		st.State, st.Reason = StateFailed, err.Error()
	}
	st.Usage = u
	return st
}

// PlannedTrialProgress is a planned trial with its state.
type PlannedTrialProgress struct {
	Trial PlannedTrial
	TrialProgress
}

// RunProgress is what a run directory's files say of its plan.
type RunProgress struct {
	Dir    string
	Lock   Lock
	Trials []PlannedTrialProgress
}

// ReadRunProgress reads the lock and the state of every planned trial of a
// run directory.
func ReadRunProgress(runDir string) (*RunProgress, error) {
	ts, err := ReadPlan(runDir)
	if err != nil {
		return nil, err
	}
	lock, err := ReadLock(runDir)
	if err != nil {
		return nil, err
	}
	run := RunLayout{Dir: runDir}
	budget := BudgetReasons(run)
	rp := &RunProgress{Dir: runDir, Lock: lock}
	for _, t := range ts {
		reason, ok := budget[t.Key]
		rp.Trials = append(rp.Trials, PlannedTrialProgress{t, ReadTrialProgress(run.Trial(t.Dir), reason, ok)})
	}
	return rp, nil
}
