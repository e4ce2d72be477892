package harbor

import (
	"context"
	"fmt"

	"github.com/hoh-research/hoh/adapters/benchmark"
	"github.com/hoh-research/hoh/adapters/sandbox/docker"
)

// DecorateSpec adds what the task's environment declares beyond one
// container to a task container's spec: the Compose sidecars (started on
// the environment's own network; main's compose environment added) and the
// egress allowlist of network_mode = "allowlist". The agent's environment
// (experiments/environment) and the verifier's both go through it.
func (b *Benchmark) DecorateSpec(ctx context.Context, t benchmark.Task, spec *docker.Spec) error {
	svcs, err := b.composeServices(ctx, t)
	if err != nil {
		return err
	}
	if svcs != nil {
		spec.Services = svcs
		env, err := ComposeMainEnv(ctx, t.Dir)
		if err != nil {
			return err
		}
		spec.Env = append(append([]string(nil), spec.Env...), env...)
	}
	l, err := LoadTask(t.Benchmark, t.Dir, "")
	if err != nil {
		return err
	}
	if hosts, ok := l.Allowlist(); ok {
		bin := b.RelayBinary
		if bin == "" && spec.Relay != nil {
			bin = spec.Relay.Binary
		}
		if bin == "" {
			if bin, err = docker.FindRelayBinary(); err != nil {
				return fmt.Errorf("task %s: network_mode = allowlist needs the egress proxy's relay: %w", t.ID, err)
			}
		}
		spec.AllowInternet = false
		spec.Egress = &docker.EgressSpec{Hosts: hosts, Binary: bin, Dial: b.EgressDial}
		if svcs != nil {
			for _, s := range svcs.List {
				spec.Egress.Direct = append(spec.Egress.Direct, s.Name)
			}
		}
	}
	return nil
}

// Allowlist returns the hosts of an environment-wide network_mode =
// "allowlist" (allowed_hosts alone implies it, as in Harbor).
func (l Loaded) Allowlist() ([]string, bool) {
	e := l.File.Environment
	if e.NetworkMode == "allowlist" || (e.NetworkMode == "" && len(e.AllowedHosts) > 0) {
		return e.AllowedHosts, true
	}
	return nil, false
}

// composeRefusals are the reasons a task's compose file cannot be run:
// the loader's error, attributes hoh does not honour, a bad depends_on.
func (l Loaded) composeRefusals() []Refusal {
	file := ComposeFile(l.Task.Dir)
	if file == "" {
		return nil
	}
	p, unsupported, err := LoadCompose(context.Background(), l.Task.Dir)
	if err != nil {
		return []Refusal{{file, "Compose environment", "the Compose loader rejects it: " + err.Error()}}
	}
	var out []Refusal
	for _, u := range unsupported {
		out = append(out, Refusal{file, "Compose attribute " + u, "hoh starts services from image or build with environment, command, entrypoint, working_dir, user, cpus, mem_limit, healthcheck and depends_on, on one network of the environment's own; this attribute would be dropped"})
	}
	if _, err := serviceOrder(p); err != nil {
		out = append(out, Refusal{file, "Compose depends_on", err.Error()})
	}
	return out
}

// composeImagesAvailable checks that the prebuilt images of the task's
// sidecars are present locally: hoh does not pull.
func (b *Benchmark) composeImagesAvailable(ctx context.Context, l Loaded) error {
	p, _, err := LoadCompose(ctx, l.Task.Dir)
	if err != nil || p == nil {
		return err
	}
	for _, name := range p.ServiceNames() {
		s := p.Services[name]
		if name == MainService || s.Build != nil {
			continue
		}
		if _, err := b.Docker.API.ImageInspect(ctx, s.Image); err != nil {
			return fmt.Errorf("%s: services.%s.image %q is not present locally (%v) and hoh does not pull images: load it (docker load / docker build -t %s), or give the service a build context", ComposeFile(l.Task.Dir), name, s.Image, err, s.Image)
		}
	}
	return nil
}
