package attempt

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hoh-research/hoh/experiments/trial"
	"github.com/hoh-research/hoh/runrecord"
)

// script returns an attempt that fails with errs in turn, then succeeds.
func script(errs ...error) (func(context.Context) (*runrecord.Summary, error), *int) {
	calls := 0
	return func(context.Context) (*runrecord.Summary, error) {
		calls++
		if calls <= len(errs) {
			return nil, errs[calls-1]
		}
		return &runrecord.Summary{Status: runrecord.StatusCompleted}, nil
	}, &calls
}

func setup(t *testing.T) (string, Trial) {
	t.Helper()
	out := t.TempDir()
	tr := Trial{Key: "k1", Dir: "c/hoh@1/task/rep-1", Path: filepath.Join(out, "c", "hoh@1", "task", "rep-1")}
	if err := os.MkdirAll(tr.Path, 0o755); err != nil {
		t.Fatal(err)
	}
	return out, tr
}

func infra(evidence string) error { return &trial.InfraError{Stage: "developer", Evidence: evidence} }

// Infrastructure failures are logged and replaced; the result counts every
// logged replacement and clears an earlier run's failure marker.
func TestInfrastructureFailuresAreReplacedUntilAResult(t *testing.T) {
	out, tr := setup(t)
	runrecord.WriteJSON(runrecord.TrialLayout{Dir: tr.Path}.RunnerFailure(), runrecord.Failure{Key: tr.Key, Reason: "earlier run gave up"})
	run, calls := script(infra("provider returned 502"), infra("connection reset"))
	var logged []string
	v := Policy{Replacements: 3, Backoff: time.Millisecond}.Run(context.Background(), out, tr, run,
		func(f string, a ...any) { logged = append(logged, f) })
	if v.Summary == nil || v.Replacements != 2 || v.Failed != "" || *calls != 3 || len(logged) != 2 {
		t.Fatalf("verdict %+v after %d calls, %d log lines", v, *calls, len(logged))
	}
	reps, err := runrecord.ReadReplacements(runrecord.RunLayout{Dir: out}.Replacements())
	if err != nil || len(reps) != 2 || reps[0].Attempt != 1 || reps[1].Attempt != 2 ||
		reps[0].Dir != tr.Dir || !strings.Contains(reps[0].Reason, "502") {
		t.Fatalf("replacement log %+v %v", reps, err)
	}
	if _, err := os.Stat(runrecord.TrialLayout{Dir: tr.Path}.RunnerFailure()); !os.IsNotExist(err) {
		t.Errorf("a result must remove the failure marker: %v", err)
	}
}

// An agent's failure is a result of the runner giving up at once: no
// replacement, a failure marker with the reason.
func TestNonInfrastructureErrorIsNotReplaced(t *testing.T) {
	out, tr := setup(t)
	run, calls := script(errors.New("workspace digest changed"))
	v := Policy{Replacements: 3, Backoff: time.Millisecond}.Run(context.Background(), out, tr, run, t.Logf)
	if v.Summary != nil || v.Failed != "workspace digest changed" || *calls != 1 || CountReplacements(out, tr.Key) != 0 {
		t.Fatalf("verdict %+v after %d calls", v, *calls)
	}
	var f runrecord.Failure
	if err := runrecord.ReadJSON(runrecord.TrialLayout{Dir: tr.Path}.RunnerFailure(), &f); err != nil || f.Reason != v.Failed || f.Key != tr.Key {
		t.Fatalf("failure marker %+v %v", f, err)
	}
}

// A failure that persists past the limit is given up with how many
// replacements were made.
func TestPersistentInfrastructureFailureStopsAtTheLimit(t *testing.T) {
	out, tr := setup(t)
	run, calls := script(infra("a"), infra("b"), infra("c"))
	v := Policy{Replacements: 1, Backoff: time.Millisecond}.Run(context.Background(), out, tr, run, t.Logf)
	if v.Summary != nil || *calls != 2 || v.Replacements != 1 ||
		!strings.Contains(v.Failed, "infrastructure failure persisted after 1 replacement(s)") || CountReplacements(out, tr.Key) != 1 {
		t.Fatalf("verdict %+v after %d calls", v, *calls)
	}
}

// Interrupted during a back-off, the trial stays resumable: no marker.
func TestInterruptedDuringBackoffIsNotAFailure(t *testing.T) {
	out, tr := setup(t)
	ctx, cancel := context.WithCancel(context.Background())
	run, _ := script(infra("a"))
	v := Policy{Replacements: 3, Backoff: time.Hour}.Run(ctx, out, tr, run, func(string, ...any) { cancel() })
	if v.Interrupted == "" || v.Failed != "" || v.Summary != nil {
		t.Fatalf("verdict %+v", v)
	}
	if _, err := os.Stat(runrecord.TrialLayout{Dir: tr.Path}.RunnerFailure()); !os.IsNotExist(err) {
		t.Errorf("an interruption must not leave a failure marker: %v", err)
	}
}
