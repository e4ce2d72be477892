package harbor

import (
	"context"

	"github.com/hoh-research/hoh/adapters/benchmark"
)

// ContainerImage is the image the task's agent container runs (built once
// per Benchmark) and the image's workspace directory, for per-trial
// environments (experiments/environment).
func (b *Benchmark) ContainerImage(ctx context.Context, t benchmark.Task) (image, workdir string, err error) {
	img, err := b.Image(ctx, t)
	if err != nil {
		return "", "", err
	}
	wd, err := b.workspacePath(ctx, img)
	if err != nil {
		return "", "", err
	}
	return img, wd, nil
}
