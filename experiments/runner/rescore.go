package runner

import (
	"context"
	"fmt"
	"reflect"
	"strings"

	"github.com/hoh-research/hoh/adapters/benchmark"
	"github.com/hoh-research/hoh/experiments/config"
	"github.com/hoh-research/hoh/experiments/plan"
	"github.com/hoh-research/hoh/experiments/runner/status"
	"github.com/hoh-research/hoh/experiments/trial"
	"github.com/hoh-research/hoh/runrecord"
)

// RescoreReport is what Rescore did to a run directory.
type RescoreReport struct {
	Trials  int      // finished trials rescored
	Changed []string // trials whose records changed, with their checkpoints
	Kept    []string // checkpoints with no stored evaluator output (records stand)
	Notes   []string // tasks changed since the run, trials not finished
}

// Rescore recomputes the records of every finished trial of the run
// directory e.Output from the evaluator outputs kept with its checkpoints
// (trial.Rescore), running nothing, then the run's scores.csv and
// trials.jsonl. Unchanged outputs leave every record as it was, byte for
// byte. bench nil: the config's benchmark. It takes the run's lock, so it
// never races a runner on the same directory.
func Rescore(_ context.Context, e *config.Experiment, bench benchmark.Benchmark) (*RescoreReport, error) {
	out := e.Output
	trials, err := status.ReadPlan(out)
	if err != nil {
		return nil, err
	}
	unlock, err := lockDir(out)
	if err != nil {
		return nil, err
	}
	defer unlock()
	if bench == nil {
		if bench, err = plan.OpenBenchmark(e, nil); err != nil {
			return nil, err
		}
	}
	all, err := bench.Tasks(context.Background())
	if err != nil {
		return nil, err
	}
	rs := &rescorer{e: e, bench: bench, tasks: map[string]benchmark.Task{}, byKey: map[string]plan.Trial{},
		run: runrecord.RunLayout{Dir: out}, rep: &RescoreReport{}, changedTask: map[string]bool{}}
	for _, t := range all {
		rs.tasks[t.ID] = t
	}
	for _, t := range trials {
		rs.byKey[t.Key] = t
	}
	lines, err := runrecord.ReadTrialLines(rs.run.Trials())
	if err != nil {
		return nil, err
	}
	var rows []runrecord.Row
	linesChanged := false
	for i := range lines {
		line := &lines[i]
		if line.Status == "" {
			rs.rep.Notes = append(rs.rep.Notes, fmt.Sprintf("%s: not finished (%s), nothing to rescore", line.Dir, line.State))
			continue
		}
		trows, changed, err := rs.rescoreTrial(line)
		if err != nil {
			return nil, err
		}
		linesChanged = linesChanged || changed
		rows = append(rows, trows...)
	}
	if cur, err := runrecord.ReadScores(rs.run.Scores()); err != nil || !reflect.DeepEqual(cur, rows) {
		if err := runrecord.WriteScores(rs.run.Scores(), rows); err != nil {
			return nil, err
		}
	}
	if linesChanged {
		if err := runrecord.WriteTrialLines(rs.run.Trials(), lines); err != nil {
			return nil, err
		}
	}
	return rs.rep, nil
}

// rescorer is Rescore's state: the run's plan and the benchmark's tasks,
// and the report so far.
type rescorer struct {
	e           *config.Experiment
	bench       benchmark.Benchmark
	tasks       map[string]benchmark.Task
	byKey       map[string]plan.Trial
	run         runrecord.RunLayout
	rep         *RescoreReport
	changedTask map[string]bool // tasks already noted as changed since the run
}

// rescoreTrial rescores a finished trial, updates its line of trials.jsonl
// (changed: it differs now) and returns its score rows.
func (rs *rescorer) rescoreTrial(line *runrecord.TrialLine) (rows []runrecord.Row, changed bool, err error) {
	pt, ok := rs.byKey[line.Key]
	if !ok {
		return nil, false, fmt.Errorf("%s: trial %s is not in plan.json", rs.run.Trials(), line.Key)
	}
	task, ok := rs.tasks[pt.Task.ID]
	if !ok {
		return nil, false, fmt.Errorf("trial %s: task %s is no longer in the benchmark", line.Key, pt.Task.ID)
	}
	if d, err := plan.TaskDigest(task); err == nil && d != pt.TaskDigest && !rs.changedTask[task.ID] {
		rs.changedTask[task.ID] = true
		rs.rep.Notes = append(rs.rep.Notes, fmt.Sprintf("task %s changed since the run (digest %s, now %s): scored with its current rubric", task.ID, pt.TaskDigest, d))
	}
	l := rs.run.Trial(line.Dir)
	var price *runrecord.Price
	if p, ok := rs.e.PriceOf(pt.Config); ok {
		price = &p
	}
	var res trial.Rescored
	if benchmark.MultiStep(rs.bench, task) {
		res, err = rescoreSteps(l, pt, rs.bench, task, price)
	} else {
		res, err = trial.RescoreRolePriced(l.Dir, rs.bench, task, price, rs.rolePrices(pt.Config, price))
	}
	if err != nil {
		return nil, false, err
	}
	rs.rep.Trials++
	if len(res.Changed) > 0 {
		rs.rep.Changed = append(rs.rep.Changed, fmt.Sprintf("%s: checkpoint(s) %s", line.Dir, ints(res.Changed)))
	}
	for _, k := range res.Kept {
		rs.rep.Kept = append(rs.rep.Kept, line.Dir+": "+k)
	}
	var s runrecord.Summary
	if err := runrecord.ReadJSON(l.Summary(), &s); err != nil {
		return nil, false, err
	}
	next := *line
	next.Status, next.Reason, next.State = s.Status, s.Reason, runrecord.StateDone
	if s.Status != runrecord.StatusCompleted {
		next.State = runrecord.StateFailed
	}
	if len(s.Checkpoints) > 0 {
		next.Final = s.Checkpoints[len(s.Checkpoints)-1].Metrics
	}
	if !reflect.DeepEqual(next, *line) {
		*line, changed = next, true
	}
	rows, err = runrecord.ReadScores(l.Scores())
	if err != nil {
		return nil, false, fmt.Errorf("%s: %w", l.Scores(), err)
	}
	return rows, changed, nil
}

func ints(xs []int) string {
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = fmt.Sprint(x)
	}
	return strings.Join(s, ", ")
}

// rolePrices are a role team's prices per role when it has no one price
// (config.Experiment.PriceOf), nil otherwise; a role without a price is
// left out, so its rows' cost is unknown.
func (rs *rescorer) rolePrices(label string, price *runrecord.Price) map[runrecord.Role]*runrecord.Price {
	c, ok := rs.e.Config(label)
	if price != nil || !ok || !c.HasTeam() {
		return nil
	}
	out := map[runrecord.Role]*runrecord.Price{}
	for _, role := range runrecord.Roles {
		if p, ok := rs.e.PriceOfRole(label, role); ok {
			out[role] = &p
		}
	}
	return out
}
