package trial

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"time"

	"github.com/hoh-research/hoh/adapters/benchmark"
	"github.com/hoh-research/hoh/adapters/harness"
	"github.com/hoh-research/hoh/analysis/results"
	"github.com/hoh-research/hoh/experiments/records"
)

// finish evaluates every checkpoint on a fresh copy, after the whole loop
// (paper A.5), and writes scores.csv and summary.json. Nothing here is ever
// returned to a role.
func (r *runner) finish(ctx context.Context) (*Summary, error) {
	s := &Summary{Spec: r.spec, Status: StatusCompleted, Harness: r.env.Harness.Name(), Version: r.env.Harness.Version(),
		ByRole: map[string]harness.Usage{}, ByIteration: map[int]harness.Usage{}}
	for _, inv := range r.st.invocations() {
		s.Usage = s.Usage.Add(inv.Usage)
		s.ByRole[inv.Role] = s.ByRole[inv.Role].Add(inv.Usage)
		s.ByIteration[inv.Iteration] = s.ByIteration[inv.Iteration].Add(inv.Usage)
	}
	for _, st := range r.st.stages {
		s.Violations = append(s.Violations, st.Violations...)
		if st.RoleFailure != "" {
			s.RoleFailures = append(s.RoleFailures, fmt.Sprintf("iteration %d %s: %s", st.Iteration, st.Role, st.RoleFailure))
		}
	}
	ext, err := readExtensions(r.l)
	if err != nil {
		return nil, err
	}
	s.Extensions = ext
	var rows []results.Row
	for t := 1; t <= r.arm.Steps; t++ {
		dev := r.st.find(t, "developer")
		if dev == nil {
			continue // not reached: the trial stopped earlier
		}
		cp := Checkpoint{Step: t, Commit: dev.Commit, Digest: dev.Digest, Tokens: r.cumulativeTokens(t)}
		if r.env.NoEvaluation {
			s.Checkpoints = append(s.Checkpoints, cp)
			continue
		}
		ev, err := r.evaluate(ctx, t, dev.Commit)
		if err != nil {
			return nil, err
		}
		cp.Metrics, cp.EvalError = ev.Metrics, ev.Error
		if ev.Error != "" && s.Status == StatusCompleted {
			s.Status, s.Reason = StatusEvaluationFailed, fmt.Sprintf("checkpoint %d: %s", t, ev.Error)
		}
		s.Checkpoints = append(s.Checkpoints, cp)
		rows = append(rows, r.scoreRows(t, cp)...)
	}
	var buf bytes.Buffer
	if err := results.Write(&buf, rows); err != nil {
		return nil, err
	}
	if err := records.WriteFile(r.l.Scores(), buf.Bytes()); err != nil {
		return nil, err
	}
	s.Finished = time.Now().UTC()
	if err := records.WriteJSON(r.l.Summary(), s); err != nil {
		return nil, err
	}
	return s, nil
}

// cumulativeTokens counts input + output tokens of every invocation up to and
// including iteration t (planning, development and QA), as in Eq. 11.
func (r *runner) cumulativeTokens(t int) int64 {
	var n int64
	for _, inv := range r.st.invocations() {
		if inv.Iteration <= t {
			n += inv.Usage.Input + inv.Usage.Output
		}
	}
	return n
}

func (r *runner) evaluate(ctx context.Context, t int, commit string) (benchmark.Evaluation, error) {
	p := filepath.Join(r.l.Evaluation(), fmt.Sprintf("cp-%d.json", t))
	var ev benchmark.Evaluation
	if err := records.ReadJSON(p, &ev); err == nil {
		return ev, nil
	} else if !os.IsNotExist(err) {
		return ev, err
	}
	// A fresh copy outside the run directory, removed afterwards.
	tmp, err := os.MkdirTemp("", "hoh-eval-*")
	if err != nil {
		return ev, err
	}
	defer os.RemoveAll(tmp)
	if err := r.repo.Export(commit, tmp); err != nil {
		return ev, err
	}
	ev, err = r.env.Bench.Evaluate(ctx, r.env.Task, tmp)
	if err != nil {
		return ev, fmt.Errorf("trial %s: evaluate checkpoint %d: %w", r.spec.Key, t, err)
	}
	return ev, records.WriteJSON(p, ev)
}

func (r *runner) scoreRows(t int, cp Checkpoint) []results.Row {
	var names []string
	for m := range cp.Metrics {
		names = append(names, m)
	}
	sort.Strings(names)
	var rows []results.Row
	for _, m := range names {
		rows = append(rows, results.Row{
			Benchmark: r.spec.Benchmark, Config: r.spec.Config, Condition: r.arm.Condition.ReportedAs(t),
			Checkpoint: t, Task: r.spec.Task, Family: r.env.Task.Family, Group: r.env.Task.Group,
			Category: r.env.Task.Category, Metric: m, Value: cp.Metrics[m],
			Tokens: float64(cp.Tokens), Rep: max(r.spec.Rep, 1), Source: r.spec.Key,
		})
	}
	return rows
}
