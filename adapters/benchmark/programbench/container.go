package programbench

import (
	"context"
	"fmt"
	"strings"

	"github.com/hoh-research/hoh/adapters/benchmark"
)

// ContainerImage is the agent's image for per-trial environments
// (experiments/environment): upstream's per-instance :task_cleanroom image
// when it is present locally, else Options.AgentImage, working in
// /workspace. ProgramBench's agent container has no network
// (Limits.AllowInternet is false for every instance).
func (b *Benchmark) ContainerImage(ctx context.Context, t benchmark.Task) (image, workdir string, err error) {
	if _, err := b.lookup(t); err != nil {
		return "", "", err
	}
	if ref := b.Opts.Images.local(ctx, t.ID, cleanroomTag); ref != "" {
		return ref, WorkspacePath, nil
	}
	if b.Opts.AgentImage == "" {
		return "", "", fmt.Errorf("programbench: task %s: no agent image configured (Options.AgentImage: a local image with the tools the agent may use)", t.ID)
	}
	return b.Opts.AgentImage, WorkspacePath, nil
}

// Tags of upstream's per-instance images: the agent's clean-room image and
// the evaluation image with the original build toolchain.
const (
	cleanroomTag = "task_cleanroom"
	TaskTag      = "task"
)

// InstanceImages finds upstream's per-instance images on this host.
type InstanceImages struct {
	// Repo is the image namespace, upstream's "programbench"; empty: per-
	// instance images are not used.
	Repo string
	// Exists reports whether a local image has the reference; nil: none has.
	Exists func(ctx context.Context, ref string) bool
}

// upstreamImage is upstream's name of an instance's image:
// <repo>/<instance with "__" written "_1776_">:<tag>.
func upstreamImage(repo, instance, tag string) string {
	return repo + "/" + strings.ReplaceAll(instance, "__", "_1776_") + ":" + tag
}

// local is the instance's image with the tag when present locally, else "".
func (im InstanceImages) local(ctx context.Context, instance, tag string) string {
	if im.Repo == "" || im.Exists == nil {
		return ""
	}
	if ref := upstreamImage(im.Repo, instance, tag); im.Exists(ctx, ref) {
		return ref
	}
	return ""
}
