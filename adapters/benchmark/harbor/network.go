package harbor

import (
	"context"
	"fmt"

	"github.com/hoh-research/hoh/adapters/benchmark"
	"github.com/hoh-research/hoh/adapters/sandbox/docker"
)

// Phase is the part of a trial a container serves.
type Phase string

const (
	AgentPhase    Phase = "agent"
	VerifierPhase Phase = "verifier"
)

// NetworkPolicy is one phase's network: open, closed, or open to the
// allowlisted hosts only (through hoh's egress proxy).
type NetworkPolicy struct {
	Open      bool
	Allowlist bool
	Hosts     []string
}

// declaredPolicy reads one network_mode / allowed_hosts pair (and the
// legacy allow_internet); ok is false when the table declares nothing.
func declaredPolicy(mode string, hosts []string, allowInternet *bool) (p NetworkPolicy, ok bool) {
	switch {
	case mode == "public":
		return NetworkPolicy{Open: true}, true
	case mode == "no-network":
		return NetworkPolicy{}, true
	case mode == "allowlist" || (mode == "" && len(hosts) > 0):
		return NetworkPolicy{Allowlist: true, Hosts: hosts}, true
	case allowInternet != nil:
		return NetworkPolicy{Open: *allowInternet}, true
	}
	return NetworkPolicy{}, false
}

// environmentPolicy is the [environment] baseline (open by default).
func environmentPolicy(e EnvironmentConfig) NetworkPolicy {
	if p, ok := declaredPolicy(e.NetworkMode, e.AllowedHosts, e.AllowInternet); ok {
		return p
	}
	return NetworkPolicy{Open: true}
}

// NetworkFor is a phase's network as Harbor resolves it: the phase's own
// network_mode, else (for a separate verifier) its environment's, else the
// task environment's.
func (f TaskFile) NetworkFor(phase Phase) NetworkPolicy {
	switch phase {
	case AgentPhase:
		if p, ok := declaredPolicy(f.Agent.NetworkMode, f.Agent.AllowedHosts, nil); ok {
			return p
		}
	case VerifierPhase:
		if p, ok := declaredPolicy(f.Verifier.NetworkMode, f.Verifier.AllowedHosts, nil); ok {
			return p
		}
		if separateVerifier(f.Verifier) {
			return environmentPolicy(verifierEnvConfig(f))
		}
	}
	return environmentPolicy(f.Environment)
}

// applyNetwork gives spec the phase's network: open, none, or none plus the
// egress proxy admitting the listed hosts (the sidecars reached directly).
func (b *Benchmark) applyNetwork(t benchmark.Task, p NetworkPolicy, spec *docker.Spec) error {
	spec.AllowInternet = p.Open
	spec.Egress = nil
	if !p.Allowlist {
		return nil
	}
	bin := b.RelayBinary
	if bin == "" && spec.Relay != nil {
		bin = spec.Relay.Binary
	}
	if bin == "" {
		var err error
		if bin, err = docker.FindRelayBinary(); err != nil {
			return fmt.Errorf("task %s: network_mode = allowlist needs the egress proxy's relay: %w", t.ID, err)
		}
	}
	spec.Egress = &docker.EgressSpec{Hosts: p.Hosts, Binary: bin, Dial: b.EgressDial}
	if spec.Services != nil {
		for _, s := range spec.Services.List {
			spec.Egress.Direct = append(spec.Egress.Direct, s.Name)
		}
	}
	return nil
}

// DecorateSpec adds what the task's environment declares beyond one
// container to the agent's container spec: the Compose sidecars (started on
// the environment's own network; main's compose environment added) and the
// agent phase's network policy. The agent's environment
// (experiments/environment) and RunTrial go through it; the shared-mode
// verifier goes through decorate with VerifierPhase.
func (b *Benchmark) DecorateSpec(ctx context.Context, t benchmark.Task, spec *docker.Spec) error {
	f, err := taskFile(t)
	if err != nil {
		return err
	}
	return b.decorate(ctx, t, f, spec, AgentPhase)
}

// decorate is DecorateSpec for phase by the task.toml f (a step's view).
func (b *Benchmark) decorate(ctx context.Context, t benchmark.Task, f TaskFile, spec *docker.Spec, phase Phase) error {
	svcs, err := b.composeServices(ctx, t)
	if err != nil {
		return err
	}
	if svcs != nil {
		spec.Services = svcs
		env, err := composeMainEnv(ctx, t.Dir)
		if err != nil {
			return err
		}
		spec.Env = append(append([]string(nil), spec.Env...), env...)
	}
	return b.applyNetwork(t, f.NetworkFor(phase), spec)
}
