package trial

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math/big"
	"os"
	"path/filepath"
	"sort"
	"time"

	"github.com/hoh-research/hoh/adapters/benchmark"
	"github.com/hoh-research/hoh/experiments/history"
	"github.com/hoh-research/hoh/runrecord"
)

// finish evaluates every checkpoint on a fresh copy, after the whole loop
// (paper A.5), and writes scores.csv and summary.json. Nothing here is ever
// returned to a role.
func (r *runner) finish(ctx context.Context) (*runrecord.Summary, error) {
	s := &runrecord.Summary{Spec: r.spec, Status: runrecord.StatusCompleted, Harness: r.env.Harness.Name(), Version: r.env.Harness.Version(), Team: r.env.team(),
		ByRole: map[runrecord.Role]runrecord.Usage{}, ByIteration: map[int]runrecord.Usage{}}
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
	ext, err := runrecord.ReadExtensions(r.l.Extensions())
	if err != nil {
		return nil, err
	}
	s.Extensions = ext
	var rows []runrecord.Row
	if r.env.Checkpoints != nil && r.env.evaluates() {
		r.env.Checkpoints.Release(ctx)
	}
	for t := 1; t <= r.spec.Arm.Checkpoint; t++ {
		dev := r.st.find(t, runrecord.RoleDeveloper)
		if dev == nil {
			continue // not reached: the trial stopped earlier
		}
		cp := runrecord.Checkpoint{Step: t, Commit: dev.Commit, Digest: dev.Digest, Tokens: r.cumulativeTokens(t)}
		if !r.env.evaluates() {
			s.Checkpoints = append(s.Checkpoints, cp)
			continue
		}
		leave := r.clock.enter(runrecord.PhaseEvaluate)
		ev, err := r.evaluate(ctx, t, dev.Commit)
		leave()
		if err != nil {
			return nil, err
		}
		cp.Metrics, cp.EvalError = ev.Metrics, ev.Error
		s.Checkpoints = append(s.Checkpoints, cp)
		rows = append(rows, r.scoreRows(t, cp)...)
	}
	if err := r.dropEvaluated(); err != nil {
		r.env.Logf("%s: removing the evaluation copy: %v", r.spec.Key, err)
	}
	s.Status, s.Reason = evaluationStatus(s.Checkpoints)
	if !r.env.WithoutScores {
		if err := runrecord.WriteScores(r.l.Scores(), rows); err != nil {
			return nil, err
		}
	}
	if r.env.Checkpoints != nil {
		// Every checkpoint is scored and sealed: its environment is no
		// longer needed (an extension of the trial adds new ones).
		if err := r.env.Checkpoints.Forget(ctx); err != nil {
			r.env.Logf("%s: removing the checkpoint environments: %v", r.spec.Key, err)
		}
	}
	s.Finished = time.Now().UTC()
	for _, st := range r.st.stages {
		s.Timings = s.Timings.Add(st.Timings)
	}
	s.Timings = s.Timings.Add(r.clock.take())
	if err := runrecord.WriteJSON(r.l.Summary(), s); err != nil {
		return nil, err
	}
	return s, nil
}

// evaluationStatus is a finished trial's status: evaluation_failed, naming
// the first checkpoint whose evaluation failed, else completed.
func evaluationStatus(cps []runrecord.Checkpoint) (runrecord.Status, string) {
	for _, cp := range cps {
		if cp.EvalError != "" {
			return runrecord.StatusEvaluationFailed, fmt.Sprintf("checkpoint %d: %s", cp.Step, cp.EvalError)
		}
	}
	return runrecord.StatusCompleted, ""
}

// ledgerUpTo is every invocation of the ledger on disk (usage.jsonl,
// rewritten after each committed stage) up to and including iteration t:
// the tokens cumulativeTokens counts, read the same way when a trial is
// rescored. ok false: the ledger cannot be read (cost unknown).
func (r *runner) ledgerUpTo(t int) ([]runrecord.Invocation, bool) {
	lines, err := runrecord.ReadLedger(r.l.Usage())
	if err != nil {
		return nil, false
	}
	var out []runrecord.Invocation
	for _, inv := range lines {
		if inv.Iteration <= t {
			out = append(out, inv.Invocation)
		}
	}
	return out, true
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

// sealedEvaluation is how hoh stores an evaluation: bound to the content
// digest of the tree it scored and sealed with a keyed MAC only hoh knows, so
// a file a role wrote (a forged pass_rate) or a stale result for another tree
// is never taken for a score; either is recomputed.
// The evaluation's fields stay at the top level: readers of
// runrecord.Evaluation (hoh view) read the file as before.
type sealedEvaluation struct {
	runrecord.Evaluation
	Commit string `json:"commit"`
	Digest string `json:"digest"`
	MAC    string `json:"mac"`
}

func sealMAC(key []byte, digest string, ev runrecord.Evaluation) (string, error) {
	b, err := json.Marshal(ev)
	if err != nil {
		return "", err
	}
	m := hmac.New(sha256.New, key)
	fmt.Fprintf(m, "hoh-evaluation\x00%s\x00", digest)
	m.Write(b)
	return hex.EncodeToString(m.Sum(nil)), nil
}

// evalKey is the trial's evaluation key, created on first use in hoh's
// private directory (0700, never given to a role as a working directory).
func (r *runner) evalKey() ([]byte, error) {
	p := evalKeyPath(r.l)
	if b, err := os.ReadFile(p); err == nil && len(b) == 64 {
		return hexKey(b)
	}
	if err := os.MkdirAll(r.l.Private(), 0o700); err != nil {
		return nil, err
	}
	key := make([]byte, 32)
	if _, err := rand.Read(key); err != nil {
		return nil, err
	}
	return key, runrecord.WriteFile(p, []byte(hex.EncodeToString(key)))
}

// exported is commit's tree in the trial's private directory (not a shared
// /tmp path another trial's agent could reach), for the runtime checks and
// the evaluations, which may write into it: the kept copy (evaluated),
// brought from the last export by git (history.Repo.Checkout), so whatever
// the last check or evaluator changed or left there is undone and
// unchanged files are not written again. If the kept copy cannot be brought
// up to date (an evaluator may have left files hoh cannot write), a fresh
// export of its own, which done removes. finish removes the kept copy.
func (r *runner) exported(commit, what string) (dir string, done func(), err error) {
	dir, idx := r.evaluated()
	err = os.MkdirAll(dir, 0o700)
	if err == nil {
		err = r.repo.Checkout(commit, dir, idx)
	}
	if err == nil {
		return dir, func() {}, nil
	}
	r.env.Logf("%s: %s: a fresh export (the kept copy: %v)", r.spec.Key, what, err)
	_ = r.dropEvaluated()
	if dir, err = os.MkdirTemp(r.l.Private(), "eval-*"); err != nil {
		return "", nil, err
	}
	done = func() { os.RemoveAll(dir) }
	if err := r.repo.Export(commit, dir); err != nil {
		done()
		return "", nil, err
	}
	return dir, done, nil
}

// evaluated is where commits are exported for the runtime checks and the
// evaluations, and the git index of that copy.
func (r *runner) evaluated() (dir, index string) {
	return filepath.Join(r.l.Private(), "evaluated"), filepath.Join(r.l.Private(), "evaluated.index")
}

func (r *runner) dropEvaluated() error {
	dir, idx := r.evaluated()
	if err := os.RemoveAll(dir); err != nil {
		return err
	}
	if err := os.Remove(idx); err != nil && !os.IsNotExist(err) {
		return err
	}
	return nil
}

func evalKeyPath(l runrecord.TrialLayout) string { return filepath.Join(l.Private(), "evaluation.key") }

// hexKey decodes the key file's 64 hex digits.
func hexKey(b []byte) ([]byte, error) {
	if len(b) != 64 {
		return nil, fmt.Errorf("want 64 hex digits, got %d bytes", len(b))
	}
	return hex.DecodeString(string(b))
}

func (r *runner) evaluate(ctx context.Context, t int, commit string) (runrecord.Evaluation, error) {
	var ev runrecord.Evaluation
	key, err := r.evalKey()
	if err != nil {
		return ev, fmt.Errorf("trial %s: evaluation key: %w", r.spec.Key, err)
	}
	tmp, done, err := r.exported(commit, fmt.Sprintf("checkpoint %d's evaluation", t))
	if err != nil {
		return ev, err
	}
	defer done()
	digest, err := history.Digest(tmp)
	if err != nil {
		return ev, err
	}
	p := r.l.CheckpointEvaluation(t)
	var cached sealedEvaluation
	if err := runrecord.ReadJSON(p, &cached); err == nil && cached.Digest == digest {
		if mac, err := sealMAC(key, digest, cached.Evaluation); err == nil && hmac.Equal([]byte(mac), []byte(cached.MAC)) {
			return cached.Evaluation, nil
		}
		r.env.Logf("%s: evaluation/cp-%d.json is not hoh's seal for this checkpoint; re-evaluating", r.spec.Key, t)
	}
	// The evaluator's own output files stay with the checkpoint's records.
	ectx := benchmark.WithOutputDir(ctx, verifierDir(r.l, t))
	if r.env.Checkpoints != nil {
		img, err := r.env.Checkpoints.Image(ctx, t)
		if err != nil {
			return ev, checkpointInfra(t, "environment", err)
		}
		if img != "" {
			ectx = benchmark.WithEnvironmentImage(ectx, img)
		} else {
			r.env.Logf("%s: checkpoint %d: its environment was not kept (a killed run's are removed on resume); verifying its workspace in the task's image", r.spec.Key, t)
		}
	}
	ev, err = r.env.Bench.Evaluate(ectx, r.env.Task, tmp)
	if err != nil {
		return ev, fmt.Errorf("trial %s: evaluate checkpoint %d: %w", r.spec.Key, t, err)
	}
	mac, err := sealMAC(key, digest, ev)
	if err != nil {
		return ev, err
	}
	return ev, runrecord.WriteJSON(p, sealedEvaluation{Evaluation: ev, Commit: commit, Digest: digest, MAC: mac})
}

// verifierDir is evaluation/cp-t-verifier: the evaluator's own output
// files for checkpoint t (benchmark.WithOutputDir).
func verifierDir(l runrecord.TrialLayout, t int) string {
	return l.CheckpointVerifier(t)
}

func (r *runner) scoreRows(t int, cp runrecord.Checkpoint) []runrecord.Row {
	var names []string
	for m := range cp.Metrics {
		names = append(names, m)
	}
	sort.Strings(names)
	var rows []runrecord.Row
	var cost *big.Rat
	if invs, ok := r.ledgerUpTo(t); ok {
		cost = r.env.cost(invs)
	}
	for _, m := range names {
		rows = append(rows, runrecord.Row{
			Benchmark: r.spec.Benchmark, Config: r.spec.Config, Condition: r.cond.ReportedAs(t),
			Checkpoint: t, Task: r.spec.Task, Family: r.env.Task.Family, Group: r.env.Task.Group,
			Category: r.env.Task.Category, Metric: m, Value: cp.Metrics[m],
			Tokens: float64(cp.Tokens), Rep: max(r.spec.Rep, 1), Source: r.spec.Key, CostUSD: cost,
		})
	}
	return rows
}
