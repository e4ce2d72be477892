package trial

import (
	"context"

	"github.com/hoh-research/hoh/adapters/benchmark"
	"github.com/hoh-research/hoh/adapters/harness"
	"github.com/hoh-research/hoh/adapters/sandbox"
	"github.com/hoh-research/hoh/experiments/served"
	"github.com/hoh-research/hoh/runrecord"
)

// Policy is what every attempt runs with whatever its route and place:
// progress and logging, the model's price, retries, timeouts and limits.
type Policy struct {
	// OnRole, when set, is told each role invocation as it starts (the
	// progress display names the running roles).
	OnRole func(iteration int, role runrecord.Role, attempt int)
	// Logf receives progress lines; may be nil.
	Logf func(format string, args ...any)
	// Price, when the config prices the model, gives each score row the
	// exact cost_usd of its tokens; nil leaves the cost unknown.
	Price *runrecord.Price
	// ContractRetries is how often a reply that violates its role's output
	// contract is retried with the validation errors (default 2).
	ContractRetries int
	Timeouts        Timeouts
	// Limits bound each host role invocation (zero fields: defaults).
	Limits sandbox.Limits
	// MaxFileBytes bounds the apparent size of one artifact file (default
	// DefaultMaxFileBytes): a larger file a role leaves (a `truncate -s
	// 100G`) is removed before the stage is committed, with a recorded
	// violation, since git and every checkpoint export would write it in
	// full.
	MaxFileBytes int64
	// RunDir is the directory hidden from every host role invocation except
	// for the paths its contract shows (the run directory, so no other trial
	// is reachable); default the trial directory.
	RunDir string
}

// Route is how an attempt's CLIs reach their provider.
type Route struct {
	// Env and Secrets are passed to every invocation (the provider key).
	Env, Secrets []string
	// ServedLog is the relay's log of this attempt's model traffic
	// (experiments/served), when the CLIs talk through it: an invocation
	// in which the relay saw no successful model response is an
	// infrastructure failure, not a result (docs/no-model-turn.md).
	ServedLog string
	// Relay, when the CLIs talk through hoh's relay, is told each
	// invocation's attempt so its log names who was served what; replaced
	// and killed attempts are accounted with what it logged.
	Relay *served.Relay
	// Team, for a role team (docs/roles.md), is the agent each role runs
	// instead of Env.Harness, Env, Relay and Price (ForRole); Secrets then
	// hold every role's. nil: every role runs the route above.
	Team map[runrecord.Role]RoleAgent
	// Endpoints are the loopback addresses (host:port) a host role
	// invocation may connect to besides the relay's: its network namespace
	// reaches nothing else (a provider the CLIs talk to without the relay,
	// such as a test's scripted one).
	Endpoints []string
}

// Place is where an attempt runs: the task and the executor.
type Place struct {
	Bench benchmark.Benchmark
	Task  benchmark.Task
	Exec  sandbox.Executor
	// Exchange, for a trial in a task container, is the container's only
	// view of the trial directory (environment.Open): each invocation's
	// inputs, CLI state and, for the Developer, the workspace are placed
	// there, and taken out once it ends.
	Exchange *sandbox.Exchange
	// Checkpoints, when set, keeps the whole environment of each checkpoint
	// (a container commit) and the evaluation starts from it; nil scores
	// each checkpoint from its workspace alone.
	Checkpoints Checkpoints
	// RoleEnvironment, for a trial in task containers, gives an invocation
	// of the Planner or the QA Tester (role) a container of its own, with a
	// relay to that role's provider, started from the environment as the
	// Developer left checkpoint after (0: as the attempt started) and
	// removed by release once the invocation ends: what such a role leaves
	// in a container's filesystem (notes in /tmp, say) reaches no other
	// role. nil runs every role in Exec.
	RoleEnvironment func(ctx context.Context, role runrecord.Role, after int) (ex sandbox.Executor, release func(), err error)
}

// Mode says what an attempt is: a benchmark trial (the zero Mode), a step
// of a multi-step task (WithoutScores) or a project loop (Project).
type Mode struct {
	// WithoutScores leaves scores.csv out: a step of a multi-step task,
	// whose checkpoints' metrics its summary keeps and whose task's trial
	// writes the rows (experiments/runner).
	WithoutScores bool
	Project       *ProjectMode
}

// ProjectMode is a project loop's: the user's directory and repository as
// the artifact, open-ended prompts, and no evaluation (a project has no
// benchmark evaluator).
type ProjectMode struct {
	// Workspace and GitDir replace <dir>/workspace and <dir>/history.git:
	// the artifact is the user's directory with its own repository. Exclude
	// names its top-level entries that are not part of the artifact (.git,
	// the state directory). The caller must have committed A_0, tagged it
	// cp-0 and written trial.json before the first Run.
	Workspace, GitDir string
	Exclude           []string
	// Loop makes the role prompts open-ended: they name the loop number
	// and the budget left instead of a fixed number of iterations.
	Loop *LoopContext
}

// evaluates says whether checkpoints are scored: not in a project.
func (m Mode) evaluates() bool { return m.Project == nil }

// exclude is the artifact's excluded top-level entries (a project's).
func (m Mode) exclude() []string {
	if m.Project == nil {
		return nil
	}
	return m.Project.Exclude
}

// loop is a project loop's context, nil in a benchmark trial.
func (m Mode) loop() *LoopContext {
	if m.Project == nil {
		return nil
	}
	return m.Project.Loop
}

// NewEnv is the one constructor of what an attempt runs with, for the
// runner, project mode and tests alike: the Developer's CLI (every role's
// unless the route has a team) with its policy, place, route and mode.
func NewEnv(pol Policy, place Place, route Route, developer harness.Harness, mode Mode) Env {
	return Env{Policy: pol, Place: place, Route: route, Harness: developer, Mode: mode}
}
