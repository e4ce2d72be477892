package harbor

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/hoh-research/hoh/adapters/benchmark"
	"github.com/hoh-research/hoh/adapters/sandbox"
	"github.com/hoh-research/hoh/adapters/sandbox/docker"
	"github.com/hoh-research/hoh/internal/fstree"
	"github.com/hoh-research/hoh/runrecord"
)

// ArtifactsDir is Harbor's convention directory: whatever the agent leaves
// there is an artifact without being declared.
const ArtifactsDir = "/logs/artifacts"

// artifactPaths are the container paths a separate verifier receives: the
// task's declared artifacts (strings, or tables with a source) and
// ArtifactsDir, sorted, without duplicates.
func artifactPaths(f TaskFile) []string {
	seen := map[string]bool{ArtifactsDir: true}
	out := []string{ArtifactsDir}
	for _, a := range f.Artifacts {
		var p string
		switch x := a.(type) {
		case string:
			p = x
		case map[string]any:
			p, _ = x["source"].(string)
		}
		if p == "" || seen[path.Clean(p)] {
			continue
		}
		seen[path.Clean(p)] = true
		out = append(out, path.Clean(p))
	}
	sort.Strings(out)
	return out
}

// verifierEnvConfig is the separate verifier's environment:
// [verifier.environment], else the task's [environment] (Harbor reuses it
// with tests/ as the build context).
func verifierEnvConfig(f TaskFile) EnvironmentConfig {
	if f.Verifier.Environment != nil {
		return *f.Verifier.Environment
	}
	e := f.Environment
	e.DockerImage = "" // the verifier is built from tests/, not the agent's image
	return e
}

// verifierImage is the separate verifier's image: its environment's
// docker_image (pulled when absent), else tests/Dockerfile built with tests/ as
// the context, once per Benchmark (labelled), within its build timeout.
func (b *Benchmark) verifierImage(ctx context.Context, t benchmark.Task, f TaskFile) (string, error) {
	e := verifierEnvConfig(f)
	if e.DockerImage != "" {
		if err := b.ensureImage(ctx, "task "+t.ID+": verifier.environment.docker_image", e.DockerImage, ""); err != nil {
			return "", &docker.InfraError{Stage: "verifier image", Err: err}
		}
		return e.DockerImage, nil
	}
	limit := DefaultBuildTimeout
	if e.BuildTimeoutSec != nil && *e.BuildTimeoutSec > 0 {
		limit = seconds(float64(*e.BuildTimeoutSec))
	}
	return b.buildOnce(ctx, t.Dir+"#verifier"+f.step, verifierContext(t.Dir, f), "", limit, fmt.Sprintf("task %s: verifier image from tests/Dockerfile", t.ID), "build_timeout_sec")
}

// verifierSpec is the separate verifier's container: its own image and
// environment's limits and network, no workspace.
func (b *Benchmark) verifierSpec(ctx context.Context, t benchmark.Task, f TaskFile) (docker.Spec, error) {
	img, err := b.verifierImage(ctx, t, f)
	if err != nil {
		return docker.Spec{}, err
	}
	e := verifierEnvConfig(f)
	spec := docker.Spec{
		Image: img, CPUs: DefaultCPUs, MemoryMB: DefaultMemoryMB, StorageMB: DefaultStorageMB,
		AllowInternet: true, Labels: map[string]string{"hoh.task": t.ID, "hoh.role": "verifier"},
	}
	if e.CPUs != nil {
		spec.CPUs = float64(*e.CPUs)
	}
	if e.MemoryMB != nil {
		spec.MemoryMB = int64(*e.MemoryMB)
	}
	if e.StorageMB != nil {
		spec.StorageMB = int64(*e.StorageMB)
	}
	if e.GPUs != nil {
		spec.GPUs = int(*e.GPUs)
	}
	if err := b.applyNetwork(t, f.NetworkFor(VerifierPhase), &spec); err != nil {
		return docker.Spec{}, err
	}
	return spec, nil
}

// stageArtifacts copies each artifact path out of the agent's environment
// into stage (mirroring container paths): from the checkpoint's committed
// image envImage, or, without one, from the checkpoint's workspace dir when
// the artifact lies under the workspace path wp. It returns the paths staged
// and those the agent's environment did not have.
func (b *Benchmark) stageArtifacts(ctx context.Context, envImage, dir, wp, stage string, paths []string) (staged, missing []string, err error) {
	for _, p := range paths {
		dst := filepath.Join(stage, filepath.FromSlash(path.Dir(p)))
		if envImage != "" {
			err := b.Docker.CopyFromImage(ctx, envImage, p, dst)
			if errors.Is(err, os.ErrNotExist) {
				missing = append(missing, p)
				continue
			}
			if err != nil {
				return nil, nil, err
			}
			staged = append(staged, p)
			continue
		}
		rel, rerr := filepath.Rel(path.Clean(wp), p)
		if rerr != nil || rel == ".." || strings.HasPrefix(rel, "../") {
			missing = append(missing, p)
			continue
		}
		src := filepath.Join(dir, rel)
		if _, err := os.Lstat(src); err != nil {
			missing = append(missing, p)
			continue
		}
		if err := copyTree(src, filepath.Join(dst, filepath.Base(p))); err != nil {
			return nil, nil, err
		}
		staged = append(staged, p)
	}
	return staged, missing, nil
}

// copyTree copies a file or directory (symlinks kept as links) by the one
// tree-copy policy; directories and files readable in the verifier.
func copyTree(src, dst string) error {
	return fstree.Copy(src, dst, fstree.Options{DirBits: 0o755, FileBits: 0o600})
}

// giveArtifacts copies the staged artifacts into the verifier's container at
// their own paths.
func giveArtifacts(ctx context.Context, env *docker.Environment, stage string, staged []string) error {
	for _, p := range staged {
		if err := env.CopyIn(ctx, filepath.Join(stage, filepath.FromSlash(p)), path.Dir(p)); err != nil {
			return err
		}
	}
	return nil
}

// evaluateSeparate runs a separate-mode verifier: a container of its own
// image with its own environment's limits and network, given only the
// declared artifacts and /logs/artifacts of the agent's environment as
// committed at this checkpoint. Without a committed environment (a killed
// run's are removed on resume) only artifacts under the workspace can be
// given, from the checkpoint's workspace; the others are named as missing.
func (b *Benchmark) evaluateSeparate(ctx context.Context, t benchmark.Task, dir string, f TaskFile, venv []string) (runrecord.Evaluation, error) {
	ev := runrecord.Evaluation{Metrics: map[string]float64{"reward": 0}, Details: map[string]any{}}
	spec, err := b.verifierSpec(ctx, t, f)
	if err != nil {
		return ev, err
	}
	_, wp, err := b.ContainerImage(ctx, t)
	if err != nil {
		return ev, err
	}
	envImage := benchmark.EnvironmentImage(ctx)
	from := "the checkpoint's workspace"
	if envImage != "" {
		from = "the agent's environment committed at this checkpoint"
	}
	ev.Details["environment"] = "separate verifier environment with the declared artifacts of " + from
	stage, err := os.MkdirTemp("", "hoh-artifacts-")
	if err != nil {
		return ev, err
	}
	defer os.RemoveAll(stage)
	staged, missing, err := b.stageArtifacts(ctx, envImage, dir, wp, stage, artifactPaths(f))
	if err != nil {
		return ev, err
	}
	ev.Details["artifacts"] = staged
	var declaredMissing []string
	for _, m := range missing {
		if m != ArtifactsDir { // the convention folder is optional
			declaredMissing = append(declaredMissing, m)
		}
	}
	if len(declaredMissing) > 0 {
		ev.Details["artifacts_missing"] = declaredMissing
	}
	env, err := b.Docker.Start(ctx, spec)
	if err != nil {
		return ev, err
	}
	defer env.Close(context.WithoutCancel(ctx))
	var setup strings.Builder
	ex, err := env.ExecutorAs("0").Run(ctx, sandbox.Command{
		Args:   []string{"/bin/sh", "-c", `mkdir -p "$1" && chmod 777 "$1"`, "setup", verifierLogsDir},
		Stdout: &setup, Stderr: &setup, WallTimeout: time.Minute,
	})
	if err != nil {
		return ev, err
	}
	if ex.Code != 0 {
		return ev, &docker.InfraError{Stage: "verifier setup", Err: fmt.Errorf("preparing %s: exit %d: %s", verifierLogsDir, ex.Code, strings.TrimSpace(setup.String()))}
	}
	if err := giveArtifacts(ctx, env, stage, staged); err != nil {
		return ev, err
	}
	cwd, err := b.Docker.ImageWorkdir(ctx, spec.Image, "/")
	if err != nil {
		return ev, err
	}
	return b.verify(ctx, t, f, env, cwd, venv, ev)
}
