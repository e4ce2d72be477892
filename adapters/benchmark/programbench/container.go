package programbench

import (
	"context"
	"fmt"

	"github.com/hoh-research/hoh/adapters/benchmark"
)

// ContainerImage is the agent's image for per-trial environments
// (experiments/environment): Options.AgentImage, working in /workspace.
// ProgramBench's agent container has no network (Limits.AllowInternet is
// false for every instance).
func (b *Benchmark) ContainerImage(_ context.Context, t benchmark.Task) (image, workdir string, err error) {
	if _, err := b.lookup(t); err != nil {
		return "", "", err
	}
	if b.Opts.AgentImage == "" {
		return "", "", fmt.Errorf("programbench: task %s: no agent image configured (Options.AgentImage: a local image with the tools the agent may use)", t.ID)
	}
	return b.Opts.AgentImage, WorkspacePath, nil
}
