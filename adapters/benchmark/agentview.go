package benchmark

import (
	"context"

	"github.com/hoh-research/hoh/adapters/sandbox"
)

// AgentView is implemented by host benchmarks whose tasks address fixed
// paths (GameCraft's /workspace/game, /workspace/assets, /workspace/tools):
// the mounts every agent invocation of task t sees in its namespace.
// workDir is the role's working directory (the artifact, a read-only copy
// of it, or the frozen candidate); writable says the role may change the
// artifact (the Developer); scratch is a folder of the stage, kept with its
// records, for what the agent writes at the task's top level (screenshots).
// Evaluator-only files never appear in it.
type AgentView interface {
	AgentMounts(t Task, workDir, scratch string, writable bool) ([]sandbox.Mount, error)
}

// RoleEnvironment is implemented by benchmarks that tell the Developer and
// the QA Tester what this machine lets them observe (GameCraft: whether
// screenshots and replays can be taken); the text goes into their prompts.
type RoleEnvironment interface {
	RoleEnvironment(ctx context.Context, t Task) string
}
