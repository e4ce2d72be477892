package trial

import (
	"bytes"
	"crypto/hmac"
	"encoding/json"
	"errors"
	"fmt"
	"os"

	"github.com/hoh-research/hoh/adapters/benchmark"
	"github.com/hoh-research/hoh/experiments/conditions"
	"github.com/hoh-research/hoh/runrecord"
)

// Rescored is what Rescore did to one trial.
type Rescored struct {
	// Changed lists the checkpoints whose evaluation changed.
	Changed []int
	// Kept lists the checkpoints with no stored evaluator output (their
	// recorded evaluation stands), each with the reason.
	Kept []string
	// Status and Reason are the trial's status afterwards.
	Status runrecord.Status
	Reason string
}

// Rescore recomputes a finished trial's checkpoint evaluations from the
// evaluator outputs kept in evaluation/cp-t-verifier/ (benchmark.Rescorer),
// running nothing, and rewrites evaluation/cp-t.json (sealed again),
// summary.json and scores.csv. A file whose content would not change is not
// rewritten, so rescoring unchanged outputs leaves every record byte for
// byte as it was. An unfinished trial (no summary.json) is an error.
func Rescore(dir string, bench benchmark.Benchmark, task benchmark.Task) (Rescored, error) {
	return RescorePriced(dir, bench, task, nil)
}

// RescorePriced is Rescore with the configuration's price (nil: none), so
// the rescored rows keep their cost_usd.
func RescorePriced(dir string, bench benchmark.Benchmark, task benchmark.Task, price *runrecord.Price) (Rescored, error) {
	return RescoreRolePriced(dir, bench, task, price, nil)
}

// RescoreRolePriced is RescorePriced for a role team: roles, when not nil,
// price each role's invocations (a role without a price leaves the rows'
// cost unknown) instead of price.
func RescoreRolePriced(dir string, bench benchmark.Benchmark, task benchmark.Task, price *runrecord.Price, roles map[runrecord.Role]*runrecord.Price) (Rescored, error) {
	var res Rescored
	rs, ok := bench.(benchmark.Rescorer)
	if !ok {
		return res, fmt.Errorf("benchmark %s keeps no evaluator outputs to rescore from", bench.Name())
	}
	l := runrecord.TrialLayout{Dir: dir}
	spec, err := runrecord.ReadTrialSpec(l.Spec())
	if err != nil {
		return res, err
	}
	cond, err := conditions.Of(spec.Arm)
	if err != nil {
		return res, fmt.Errorf("%s: %w", l.Spec(), err)
	}
	var s runrecord.Summary
	if err := runrecord.ReadJSON(l.Summary(), &s); err != nil {
		return res, fmt.Errorf("trial %s is not finished: %w", spec.Key, err)
	}
	// Re-scoring runs no agent: the route only carries each role's price.
	var route Route
	if roles != nil {
		route.Team = map[runrecord.Role]RoleAgent{}
		for role, p := range roles {
			route.Team[role] = RoleAgent{Price: p}
		}
	}
	r := &runner{l: l, spec: spec, cond: cond, env: NewEnv(Policy{Price: price}, Place{Bench: bench, Task: task}, route, nil, Mode{})}
	key, err := os.ReadFile(evalKeyPath(l))
	if err != nil {
		return res, fmt.Errorf("trial %s: its evaluation key: %w", spec.Key, err)
	}
	if key, err = hexKey(key); err != nil {
		return res, fmt.Errorf("trial %s: its evaluation key: %w", spec.Key, err)
	}
	var rows []runrecord.Row
	for i := range s.Checkpoints {
		cp := &s.Checkpoints[i]
		p := l.CheckpointEvaluation(cp.Step)
		var sealed sealedEvaluation
		if err := runrecord.ReadJSON(p, &sealed); err != nil {
			return res, fmt.Errorf("trial %s: %w", spec.Key, err)
		}
		// Only hoh's own record is rescored: a file without its seal is not a
		// result to start from (hoh run evaluates such a checkpoint again).
		if mac, err := sealMAC(key, sealed.Digest, sealed.Evaluation); err != nil || !hmac.Equal([]byte(mac), []byte(sealed.MAC)) {
			return res, fmt.Errorf("trial %s: %s does not carry hoh's seal; rerun the trial to evaluate checkpoint %d again", spec.Key, p, cp.Step)
		}
		ev, err := rs.Rescore(task, verifierDir(l, cp.Step), sealed.Evaluation)
		switch {
		case errors.Is(err, benchmark.ErrNoEvaluatorOutput):
			res.Kept = append(res.Kept, fmt.Sprintf("checkpoint %d: %v", cp.Step, err))
			ev = sealed.Evaluation
		case err != nil:
			return res, fmt.Errorf("trial %s: rescore checkpoint %d: %w", spec.Key, cp.Step, err)
		}
		if !sameJSON(ev, sealed.Evaluation) {
			mac, err := sealMAC(key, sealed.Digest, ev)
			if err != nil {
				return res, err
			}
			sealed.Evaluation, sealed.MAC = ev, mac
			if err := runrecord.WriteJSON(p, sealed); err != nil {
				return res, err
			}
			res.Changed = append(res.Changed, cp.Step)
		}
		cp.Metrics, cp.EvalError = ev.Metrics, ev.Error
		rows = append(rows, r.scoreRows(cp.Step, *cp)...)
	}
	s.Status, s.Reason = evaluationStatus(s.Checkpoints)
	res.Status, res.Reason = s.Status, s.Reason
	if err := writeIfChanged(l.Summary(), func(p string) error { return runrecord.WriteJSON(p, s) }); err != nil {
		return res, err
	}
	return res, writeIfChanged(l.Scores(), func(p string) error { return runrecord.WriteScores(p, rows) })
}

// writeIfChanged writes path through write into a scratch file beside it
// and moves it into place only when its bytes differ.
func writeIfChanged(path string, write func(string) error) error {
	tmp := path + ".rescore"
	defer os.Remove(tmp)
	if err := write(tmp); err != nil {
		return err
	}
	next, err := os.ReadFile(tmp)
	if err != nil {
		return err
	}
	if cur, err := os.ReadFile(path); err == nil && bytes.Equal(cur, next) {
		return nil
	}
	return os.Rename(tmp, path)
}

func sameJSON(a, b any) bool {
	x, err1 := json.Marshal(a)
	y, err2 := json.Marshal(b)
	return err1 == nil && err2 == nil && bytes.Equal(x, y)
}
