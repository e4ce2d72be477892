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
	OnRole          func(iteration int, role runrecord.Role, attempt int)
	Logf            func(format string, args ...any)
	Price           *runrecord.Price
	ContractRetries int
	Timeouts        Timeouts
	Limits          sandbox.Limits
	RunDir          string
}

// Route is how an attempt's CLIs reach their provider: the environment
// and secrets with the credential, hoh's relay and its log, and for a role
// team each role's own agent.
type Route struct {
	Env, Secrets []string
	ServedLog    string
	Relay        *served.Relay
	Team         map[runrecord.Role]RoleAgent
}

// Place is where an attempt runs: the task, the executor and, in task
// containers, the exchange, the kept checkpoints and the other roles'
// containers.
type Place struct {
	Bench           benchmark.Benchmark
	Task            benchmark.Task
	Exec            sandbox.Executor
	Exchange        *sandbox.Exchange
	Checkpoints     Checkpoints
	RoleEnvironment func(ctx context.Context, role runrecord.Role, after int) (sandbox.Executor, func(), error)
}

// Mode says what an attempt is: a benchmark trial (the zero Mode), a step
// of a multi-step task (WithoutScores) or a project loop (Project).
type Mode struct {
	WithoutScores bool
	Project       *ProjectMode
}

// ProjectMode is a project loop's: the user's directory and repository as
// the artifact, open-ended prompts, and no evaluation (a project has no
// benchmark evaluator).
type ProjectMode struct {
	Workspace, GitDir string
	Exclude           []string
	Loop              *LoopContext
}

// NewEnv is the one constructor of what an attempt runs with, for the
// runner and project mode alike: the Developer's CLI (every role's unless
// the route has a team) with its policy, place, route and mode.
func NewEnv(pol Policy, place Place, route Route, developer harness.Harness, mode Mode) Env {
	e := Env{
		OnRole: pol.OnRole, Logf: pol.Logf, Price: pol.Price, RunDir: pol.RunDir,
		ContractRetries: pol.ContractRetries, Timeouts: pol.Timeouts, Limits: pol.Limits,
		Env: route.Env, Secrets: route.Secrets, ServedLog: route.ServedLog, Relay: route.Relay, Team: route.Team,
		Harness: developer, Bench: place.Bench, Task: place.Task, Exec: place.Exec, Exchange: place.Exchange,
		Checkpoints: place.Checkpoints, RoleEnvironment: place.RoleEnvironment,
		WithoutScores: mode.WithoutScores,
	}
	if p := mode.Project; p != nil {
		e.Workspace, e.GitDir, e.Exclude, e.Loop, e.NoEvaluation = p.Workspace, p.GitDir, p.Exclude, p.Loop, true
	}
	return e
}
