package harbor

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/docker/docker/api/types/container"

	"github.com/hoh-research/hoh/adapters/benchmark"
	"github.com/hoh-research/hoh/adapters/harness"
	"github.com/hoh-research/hoh/adapters/sandbox/docker"
)

// ContainerImage is the image the task's agent container runs (built once
// per Benchmark) and the image's workspace directory, for per-trial
// environments (experiments/environment).
func (b *Benchmark) ContainerImage(ctx context.Context, t benchmark.Task) (image, workdir string, err error) {
	img, err := b.Image(ctx, t)
	if err != nil {
		return "", "", err
	}
	wd, err := b.workspacePath(ctx, t, img)
	if err != nil {
		return "", "", err
	}
	return img, wd, nil
}

// taskFile is the task's task.toml as Harbor reads it.
func taskFile(t benchmark.Task) (TaskFile, error) {
	l, err := LoadTask(t.Benchmark, t.Dir, "")
	return l.File, err
}

// buildTimeout is environment.build_timeout_sec, else Harbor's 600 s.
func buildTimeout(f TaskFile) time.Duration {
	if n := f.Environment.BuildTimeoutSec; n != nil && *n > 0 {
		return seconds(float64(*n))
	}
	return DefaultBuildTimeout
}

// resolveEnv resolves a task.toml env table (${VAR} and ${VAR:-default}
// from the host) into sorted KEY=VALUE pairs; errors name the table and
// key, never a value.
func resolveEnv(table string, m map[string]string, lookup func(string) (string, bool)) ([]string, error) {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	out := make([]string, 0, len(keys))
	for _, k := range keys {
		v, err := resolveEnvTemplate(m[k], lookup)
		if err != nil {
			return nil, fmt.Errorf("[%s] %s: %w", table, k, err)
		}
		out = append(out, k+"="+v)
	}
	return out, nil
}

// healthConfig is [environment.healthcheck] as a Docker HEALTHCHECK (zero
// fields inherit Docker's defaults).
func healthConfig(h *Healthcheck) *container.HealthConfig {
	if h == nil || h.Command == "" {
		return nil
	}
	d := func(n *Num) time.Duration {
		if n == nil {
			return 0
		}
		return seconds(float64(*n))
	}
	hc := &container.HealthConfig{
		Test:     []string{"CMD-SHELL", h.Command},
		Interval: d(h.IntervalSec), Timeout: d(h.TimeoutSec),
		StartPeriod: d(h.StartPeriodSec), StartInterval: d(h.StartIntervalSec),
	}
	if h.Retries != nil {
		hc.Retries = int(*h.Retries)
	}
	return hc
}

// ContainerSpec is the task container as the task declares it: its image
// started through the image's ENTRYPOINT, the task's limits and network,
// [environment.env] resolved from the host on top of the image's ENV,
// environment.workdir, agent.user and the healthcheck Start waits for.
// Callers add mounts, the relay and PATH.
func (b *Benchmark) ContainerSpec(ctx context.Context, t benchmark.Task) (docker.Spec, error) {
	f, err := taskFile(t)
	if err != nil {
		return docker.Spec{}, err
	}
	return b.containerSpec(ctx, t, f)
}

// containerSpec is ContainerSpec by the task.toml f (a step's view).
func (b *Benchmark) containerSpec(ctx context.Context, t benchmark.Task, f TaskFile) (docker.Spec, error) {
	img, err := b.Image(ctx, t)
	if err != nil {
		return docker.Spec{}, err
	}
	env, err := resolveEnv("environment.env", f.Environment.Env, os.LookupEnv)
	if err != nil {
		return docker.Spec{}, fmt.Errorf("task %s: %s: %w", t.ID, filepath.Join(t.Dir, "task.toml"), err)
	}
	l := t.Limits
	return docker.Spec{
		Image: img, CPUs: l.CPUs, MemoryMB: l.MemoryMB, StorageMB: l.StorageMB, GPUs: l.GPUs,
		AllowInternet: l.AllowInternet, Env: env, KeepEntrypoint: true,
		Workdir: f.Environment.Workdir, User: f.Agent.User, Healthcheck: healthConfig(f.Environment.Healthcheck),
		Labels: map[string]string{"hoh.task": t.ID},
	}, nil
}

// VerifiesCommittedEnvironment marks Harbor's shared-mode verifier: it runs
// in the agent's environment as committed at each checkpoint.
func (b *Benchmark) VerifiesCommittedEnvironment() {}

// EnvResolvable checks at plan time that [environment.env] and
// [verifier.env] resolve from the host (lookup), so a missing variable
// refuses the task before any agent runs instead of failing its
// evaluation. The error names the file, table, key and variable.
func (l Loaded) EnvResolvable(lookup func(string) (string, bool)) error {
	f := l.File
	for _, tbl := range []struct {
		name string
		m    map[string]string
	}{{"environment.env", f.Environment.Env}, {"verifier.env", f.Verifier.Env}} {
		if _, err := resolveEnv(tbl.name, tbl.m, lookup); err != nil {
			return fmt.Errorf("%s: %w", filepath.Join(l.Task.Dir, "task.toml"), err)
		}
	}
	return l.stepsEnvResolvable(lookup)
}

// hostValues are the values [environment.env] and [verifier.env] take from
// the host's environment (what ${VAR} expands to): the secrets to keep out
// of the verifier's kept output. Literal values are the task's own text.
func hostValues(f TaskFile) []string {
	var out []string
	for _, m := range []map[string]string{f.Environment.Env, f.Verifier.Env} {
		for _, tmpl := range m {
			for _, sub := range envTemplate.FindAllStringSubmatch(tmpl, -1) {
				if v, ok := os.LookupEnv(sub[1]); ok && v != "" {
					out = append(out, v)
				}
			}
		}
	}
	return out
}

// redact replaces each secret of four or more bytes in s (shorter ones
// would hide ordinary text).
func redact(s string, secrets []string) string {
	for _, v := range secrets {
		if len(v) >= 4 {
			s = strings.ReplaceAll(s, v, harness.Redacted)
		}
	}
	return s
}
