// Package trial runs one trial: one task under one harness-model
// configuration and one condition (Vanilla, Vanilla Continuation, HoH@T or an
// ablation), following Algorithm 1 of the paper. Every role stage is committed
// (workspace commit + a line in stages.jsonl) before the next starts, so a
// killed trial resumes from its last committed stage. Checkpoints are
// evaluated only after the loop has ended, and scores go to the records only.
package trial

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/hoh-research/hoh/adapters/harness"
	"github.com/hoh-research/hoh/adapters/sandbox"
	"github.com/hoh-research/hoh/experiments/conditions"
	"github.com/hoh-research/hoh/experiments/history"
	"github.com/hoh-research/hoh/internal/agentpath"
	"github.com/hoh-research/hoh/runrecord"
)

// Timeouts per role; Idle bounds the time a CLI may go without output,
// FirstRequest the time until its first model request (default
// DefaultFirstRequest; only with a Relay).
type Timeouts struct {
	Planner      time.Duration `json:"planner"`
	Developer    time.Duration `json:"developer"`
	QA           time.Duration `json:"qa"`
	Idle         time.Duration `json:"idle"`
	FirstRequest time.Duration `json:"first_request,omitempty"`
}

// DefaultFirstRequest is generous: a CLI starts in seconds, also on a
// busy machine; one that has not asked the model after this never will.
const DefaultFirstRequest = 5 * time.Minute

// Env is what a trial runs with, built by NewEnv: its policy, place,
// route, the Developer's CLI (every role's unless the route has a team)
// and its mode.
type Env struct {
	Policy
	Place
	Route
	Harness harness.Harness
	Mode
}

// Checkpoints keeps the agents' whole environment (files installed outside
// the workspace included) at each checkpoint, for the evaluation.
type Checkpoints interface {
	// Save keeps the environment as checkpoint t's developer left it.
	Save(ctx context.Context, t int) error
	// Release ends the agents' environment: no process an agent started
	// runs on while the checkpoints are verified.
	Release(ctx context.Context)
	// Image is checkpoint t's kept environment, "" when there is none (a
	// killed run's were removed on resume): the checkpoint is then scored
	// from its workspace in the task's image.
	Image(ctx context.Context, t int) (string, error)
	// Forget removes every kept environment of the trial.
	Forget(ctx context.Context) error
}

// LoopContext is what open-ended (project) prompts carry besides the loop
// number.
type LoopContext struct {
	// Budget describes what is left (loops, tokens, time) before loop t.
	Budget func(t int) string
	// PlannerIssues is the bounded issue table section for the Planner of
	// loop t (open and reopened issues, verified ones to preserve).
	PlannerIssues func(t int) (string, error)
	// PlannerFiles are files PlannerIssues names (the whole issue table),
	// shown read-only in the Planner's view: its contract's only way into
	// a hidden run directory (Env.RunDir).
	PlannerFiles []string
	// QAIssues is the QA Tester's bounded list of known issues to re-check
	// (with their claim ids, so that its records match them).
	QAIssues func(t int) (string, error)
}

// InfraError is an infrastructure failure of an invocation (transport,
// provider 5xx, auth, container): the stage was not committed and the
// attempt should be replaced, not counted as a result (paper B.2).
type InfraError struct {
	Stage    string
	Evidence string
	// Local: the fault is the machine's (full disk, read-only or failing
	// file system), not the provider's.
	Local bool
	// Cause is the fault's class (served.Cause*, CauseLocal, ...): trials
	// that all fail with one cause stop their configuration.
	Cause string
	// StopsConfig: every trial of the configuration would meet the fault
	// (a CLI that cannot run or exits before asking the model), so the
	// configuration stops at once instead of being replaced.
	StopsConfig bool
}

// Causes of infrastructure failures besides the relay's (served.Cause*).
const (
	CauseLocal       = "local-fault"           // full disk, failing file system
	CauseEnvironment = "environment"           // the task or role container
	CauseTransport   = "provider-or-transport" // the CLI reported it, the relay saw answers
	CauseUnreachable = "provider-unreachable"  // the CLI could not connect
	// CauseStartup: hoh ended the CLI (the first-request deadline, its
	// idle or wall timeout) before it sent its first model request.
	CauseStartup = "no-first-request"
)

// checkpointInfra is an infrastructure failure of checkpoint t's kept
// environment (what: the operation).
func checkpointInfra(t int, what string, err error) *InfraError {
	return &InfraError{Stage: fmt.Sprintf("checkpoint %d %s", t, what), Evidence: err.Error()}
}

// CauseOf is err's cause class ("" when it is no infrastructure failure).
func CauseOf(err error) string {
	var ie *InfraError
	if !errors.As(err, &ie) {
		return ""
	}
	if ie.Cause == "" && ie.Local {
		return CauseLocal
	}
	return ie.Cause
}

// StopsConfig reports whether err stops its configuration at once.
func StopsConfig(err error) bool {
	var ie *InfraError
	return errors.As(err, &ie) && ie.StopsConfig
}

func (e *InfraError) Error() string {
	return fmt.Sprintf("infrastructure failure in %s: %s", e.Stage, e.Evidence)
}

// IsInfra reports whether err is an infrastructure failure.
func IsInfra(err error) bool {
	var ie *InfraError
	return errors.As(err, &ie)
}

// Run executes (or resumes) the trial in dir and returns its summary. A
// returned *InfraError means the last stage must be replaced: call Run again
// (after a back-off) and it resumes from the last committed stage.
func Run(ctx context.Context, dir string, spec runrecord.TrialSpec, env Env) (*runrecord.Summary, error) {
	s, err := run(ctx, dir, spec, env)
	// Nothing hoh keeps in the trial directory leads out of it, whatever
	// a role left (a link in the workspace or a stage's files).
	if abs, aerr := filepath.Abs(dir); aerr == nil {
		if _, cerr := agentpath.ContainLinks(abs); cerr != nil && err == nil && !os.IsNotExist(cerr) {
			err = fmt.Errorf("trial %s: replace links leaving the trial directory: %w", spec.Key, cerr)
			s = nil
		}
	}
	if err != nil {
		// The attempts of the stage that did not commit spent tokens too.
		if abs, aerr := filepath.Abs(dir); aerr == nil {
			if _, serr := os.Stat(runrecord.TrialLayout{Dir: abs}.Spec()); serr == nil {
				// Best effort: the disk may be the fault; a resume repeats both.
				_ = accountAbandoned(runrecord.TrialLayout{Dir: abs})
				_ = removeAttemptStates(runrecord.TrialLayout{Dir: abs})
			}
		}
		return nil, asLocal("trial "+spec.Key, err)
	}
	return s, nil
}

func run(ctx context.Context, dir string, spec runrecord.TrialSpec, env Env) (*runrecord.Summary, error) {
	clock := newPhaseClock(runrecord.PhaseSetup)
	cond, err := conditions.Of(spec.Arm)
	if err != nil {
		return nil, fmt.Errorf("trial %s: %w", spec.Key, err)
	}
	if env.ContractRetries == 0 {
		env.ContractRetries = 2
	}
	if env.Logf == nil {
		env.Logf = func(string, ...any) {}
	}
	// Role prompts and working directories carry these paths, and CLIs run
	// in other directories: everything below is absolute.
	if dir, err = filepath.Abs(dir); err != nil {
		return nil, err
	}
	l := runrecord.TrialLayout{Dir: dir}
	if err := clearInterrupted(l, spec, env); err != nil {
		return nil, err
	}
	if err := prepareTrial(ctx, l, spec, env); err != nil {
		return nil, fmt.Errorf("trial %s: %w", spec.Key, err)
	}
	repo, err := openHistory(l, spec, env)
	if err != nil {
		return nil, err
	}
	st, err := loadState(l)
	if err != nil {
		return nil, fmt.Errorf("trial %s: %w", spec.Key, err)
	}
	r := &runner{l: l, spec: spec, env: env, cond: cond, repo: repo, st: st, ws: repo.Work, clock: clock}
	if err := r.recoverWorkspace(); err != nil {
		return nil, err
	}
	if err := r.restore(); err != nil {
		return nil, err
	}
	// A killed run left attempts without a ledger line: they are accounted
	// (as killed, with what the relay saw served) before any new one runs.
	if err := accountAbandoned(l); err != nil {
		return nil, fmt.Errorf("trial %s: account the attempts of an interrupted run: %w", spec.Key, err)
	}
	clock.switchTo(runrecord.PhaseHoh)
	if err := r.loop(ctx); err != nil {
		return nil, err
	}
	return r.finish(ctx)
}

// clearInterrupted ends what an interrupted run left behind before anything
// is touched: role processes still writing into the workspace, and on a
// resume its attempts' CLI state and unscrubbed logs.
func clearInterrupted(l runrecord.TrialLayout, spec runrecord.TrialSpec, env Env) error {
	if killed, err := (sandbox.Leftovers{Path: l.Processes()}).End(); err != nil {
		return fmt.Errorf("trial %s: end processes left by an interrupted run: %w", spec.Key, err)
	} else if len(killed) > 0 {
		env.Logf("%s: ended %d role process(es) an interrupted run left: %v", spec.Key, len(killed), killed)
	}
	if env.Project != nil {
		if _, err := os.Stat(l.Spec()); err != nil {
			return fmt.Errorf("trial %s: project trial not initialised: %w", spec.Key, err)
		}
	}
	if _, err := os.Stat(l.Spec()); err != nil {
		return nil
	}
	// A resume: an attempt killed with the run never had its state deleted
	// nor its logs scrubbed; do that before anything else.
	if err := removeAttemptStates(l); err != nil {
		return fmt.Errorf("trial %s: delete the CLI state of interrupted attempts: %w", spec.Key, err)
	}
	if len(env.Secrets) > 0 {
		if err := harness.ScrubSecrets(l.Dir, env.Secrets); err != nil {
			return fmt.Errorf("trial %s: scrub the logs of interrupted attempts: %w", spec.Key, err)
		}
	}
	return nil
}

// openHistory opens the trial's history: hoh's own repository, whose locks
// a git killed with the run left are removed, or a project's (ProjectMode.GitDir).
func openHistory(l runrecord.TrialLayout, spec runrecord.TrialSpec, env Env) (*history.Repo, error) {
	ws, gitDir := l.Workspace(), l.GitDir()
	if p := env.Project; p != nil {
		ws, gitDir = p.Workspace, p.GitDir
	}
	repo, err := history.Open(gitDir, ws)
	if err != nil {
		return nil, err
	}
	repo.Exclude = env.exclude()
	if env.Project == nil {
		if removed, err := repo.RemoveStaleLocks(); err != nil {
			return nil, fmt.Errorf("trial %s: %w", spec.Key, err)
		} else if len(removed) > 0 {
			env.Logf("%s: removed stale git lock(s) %v left by a killed run", spec.Key, removed)
		}
	}
	return repo, nil
}

// extension checks that spec only raises the step count of the trial old
// (same series, same everything else) and returns the record of it.
func extension(dir string, old, spec runrecord.TrialSpec) (runrecord.Extension, error) {
	a, errA := conditions.Of(old.Arm)
	b, errB := conditions.Of(spec.Arm)
	o, n := old, spec
	o.Arm, n.Arm = runrecord.Arm{}, runrecord.Arm{}
	if errA != nil || errB != nil || o != n || a.Series() != b.Series() {
		return runrecord.Extension{}, fmt.Errorf("%s holds a different trial (%+v)", dir, old)
	}
	from, to := old.Arm.Checkpoint, spec.Arm.Checkpoint
	if to < from {
		return runrecord.Extension{}, fmt.Errorf("%s ran %s; lowering it to %s is refused (its checkpoints 1..%d exist and are never discarded)",
			dir, old.Arm, spec.Arm, from)
	}
	return runrecord.Extension{FromArm: old.Arm, ToArm: spec.Arm, From: from, To: to, Time: time.Now().UTC()}, nil
}

// prepareTrial writes the trial spec and A_0 the first time. A spec that raises
// the step count of the trial in dir extends it: its existing stages stay
// and the loop continues after them, recorded in extensions.jsonl.
func prepareTrial(ctx context.Context, l runrecord.TrialLayout, spec runrecord.TrialSpec, env Env) error {
	var old runrecord.TrialSpec
	if err := runrecord.ReadJSON(l.Spec(), &old); err == nil {
		if old == spec {
			return nil
		}
		ext, err := extension(l.Dir, old, spec)
		if err != nil {
			return err
		}
		prev, err := runrecord.ReadExtensions(l.Extensions())
		if err != nil {
			return err
		}
		// Killed between the two writes before: the extension is recorded.
		if n := len(prev); n == 0 || prev[n-1].ToArm != spec.Arm || prev[n-1].FromArm != old.Arm {
			if err := runrecord.Append(l.Extensions(), ext); err != nil {
				return err
			}
		}
		// The summary was the old arm's; it is rewritten when the trial ends.
		if err := os.Remove(l.Summary()); err != nil && !os.IsNotExist(err) {
			return err
		}
		return runrecord.WriteJSON(l.Spec(), spec)
	} else if !os.IsNotExist(err) {
		return err
	}
	ws := l.Workspace()
	if err := sandbox.EmptyDir(ws); err != nil {
		return err
	}
	if err := sandbox.EmptyDir(l.GitDir()); err != nil {
		return err
	}
	if err := env.Bench.InitialWorkspace(ctx, env.Task, ws); err != nil {
		return fmt.Errorf("initial workspace: %w", err)
	}
	repo, err := history.Open(l.GitDir(), ws)
	if err != nil {
		return err
	}
	kept, err := repo.Record("A_0: initial workspace")
	if err != nil {
		return err
	}
	if len(kept.Refused) > 0 {
		env.Logf("%s: the initial workspace holds what git cannot record, left out of A_0: %s", spec.Key, strings.Join(kept.Refused, "; "))
	}
	if err := repo.Tag("cp-0", kept.Commit); err != nil {
		return err
	}
	// The spec is written last: its presence means A_0 is committed.
	return runrecord.WriteJSON(l.Spec(), spec)
}
