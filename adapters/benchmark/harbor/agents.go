package harbor

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/hoh-research/hoh/adapters/benchmark"
	"github.com/hoh-research/hoh/adapters/sandbox"
	"github.com/hoh-research/hoh/adapters/sandbox/docker"
	"github.com/hoh-research/hoh/runrecord"
)

// Agent works on a task inside its running container.
type Agent interface {
	Name() string
	Run(ctx context.Context, env *docker.Environment, t benchmark.Task) (sandbox.Exit, error)
}

// Oracle runs the task's solution/solve.sh in the agent container, to check
// that a dataset's pipeline can score high.
type Oracle struct{}

func (Oracle) Name() string { return "oracle" }

func (Oracle) Run(ctx context.Context, env *docker.Environment, t benchmark.Task) (sandbox.Exit, error) {
	f, err := taskFile(t)
	if err != nil {
		return sandbox.Exit{Code: -1}, err
	}
	// [solution.env] from the host, on top of the container's environment.
	senv, err := resolveEnv("solution.env", f.Solution.Env, os.LookupEnv)
	if err != nil {
		return sandbox.Exit{Code: -1}, fmt.Errorf("task %s: %w", t.ID, err)
	}
	if err := env.CopyIn(ctx, filepath.Join(t.Dir, "solution"), "/"); err != nil {
		return sandbox.Exit{Code: -1}, err
	}
	var out bytes.Buffer
	return env.Executor().Run(ctx, sandbox.Command{
		Args: []string{"sh", "-c", "if command -v bash >/dev/null; then exec bash /solution/solve.sh; else exec sh /solution/solve.sh; fi"},
		Dir:  env.WorkspacePath(), Env: senv,
		Stdout: &out, Stderr: &out, WallTimeout: t.Limits.AgentTimeout,
	})
}

// Nop does nothing, to check that a dataset's pipeline can score low.
type Nop struct{}

func (Nop) Name() string { return "nop" }

func (Nop) Run(context.Context, *docker.Environment, benchmark.Task) (sandbox.Exit, error) {
	return sandbox.Exit{}, nil
}

// Command runs a fixed shell command as the agent (tests, smoke runs).
type Command struct{ Script string }

func (Command) Name() string { return "command" }

func (c Command) Run(ctx context.Context, env *docker.Environment, t benchmark.Task) (sandbox.Exit, error) {
	var out bytes.Buffer
	return env.Executor().Run(ctx, sandbox.Command{
		Args: []string{"sh", "-c", c.Script}, Dir: env.WorkspacePath(),
		Stdout: &out, Stderr: &out, WallTimeout: t.Limits.AgentTimeout,
	})
}

// Trial is one agent run plus its evaluation.
type Trial struct {
	Task       string                `json:"task"`
	Agent      string                `json:"agent"`
	Exit       sandbox.Exit          `json:"exit"`
	Failure    *docker.Failure       `json:"failure,omitempty"`
	Evaluation *runrecord.Evaluation `json:"evaluation,omitempty"`
	Notes      []string              `json:"notes,omitempty"`
}

// RunTrial runs agent on t with workDir as the workspace (filled with A_0
// when empty), then evaluates the frozen workspace in a fresh container. An
// infrastructure failure leaves the trial unevaluated (to be retried); an
// agent failure (OOM, timeout) is evaluated as the artifact stands.
func (b *Benchmark) RunTrial(ctx context.Context, t benchmark.Task, agent Agent, workDir string) (Trial, error) {
	tr := Trial{Task: t.ID, Agent: agent.Name()}
	if err := b.InitialWorkspace(ctx, t, workDir); err != nil {
		tr.Failure = docker.Classify(-1, false, "", err)
		return tr, nil
	}
	env, err := b.StartEnvironment(ctx, t, workDir, nil)
	if err != nil {
		tr.Failure = docker.Classify(-1, false, "", err)
		return tr, nil
	}
	tr.Notes = append(tr.Notes, env.Notes...)
	ex, err := agent.Run(ctx, env, t)
	env.Close(context.WithoutCancel(ctx))
	tr.Exit = ex
	if f := docker.Classify(ex.Code, ex.OOM, ex.Detail, err); f != nil {
		tr.Failure = f
		if f.Kind == docker.Infrastructure {
			return tr, nil
		}
	} else if ex.TimedOut || ex.Idle {
		tr.Failure = &docker.Failure{Kind: docker.Agent, Evidence: ex.Detail}
	}
	ectx, cancel := context.WithTimeout(ctx, t.Limits.VerifierTimeout+2*time.Minute)
	defer cancel()
	ev, err := b.Evaluate(ectx, t, workDir)
	if err != nil {
		tr.Failure = &docker.Failure{Kind: docker.Infrastructure, Evidence: fmt.Sprintf("evaluation: %v", err)}
		return tr, nil
	}
	tr.Evaluation = &ev
	return tr, nil
}
