package runner

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/hoh-research/hoh/adapters/harness"
	"github.com/hoh-research/hoh/adapters/sandbox"
	"github.com/hoh-research/hoh/experiments/environment"
	"github.com/hoh-research/hoh/experiments/preflight"
	"github.com/hoh-research/hoh/experiments/served"
	"github.com/hoh-research/hoh/experiments/trial"
	"github.com/hoh-research/hoh/runrecord"
)

// preflight checks every configuration as its trials will run it: through
// hoh's relay, and for a container benchmark inside the task container of
// the configuration's first trial, with the harness built for it (the
// in-container config, the relay's in-container address), since a CLI that
// works on the host may still fail in the image.
func (r *run) preflight(ctx context.Context) error {
	dir := runrecord.RunLayout{Dir: r.out}.Preflight()
	var targets []preflight.Target
	var fails preflight.Error
	for _, rt := range r.preflightAgents() {
		tg := preflight.Target{Label: rt.cfg.Label, Harness: rt.agent.Harness, Provider: rt.cfg.Provider, Secrets: rt.agent.Secrets, Idle: r.exp.Timeouts.Idle,
			Notes: r.opts.Out}
		closeTarget, err := r.preflightTarget(ctx, dir, rt, &tg)
		defer closeTarget()
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			fails = append(fails, preflight.Failure{Label: rt.cfg.Label, Cause: err.Error()})
			continue
		}
		targets = append(targets, tg)
	}
	teams := ""
	if n := len(targets) + len(fails) - len(r.exp.Configs); n > 0 {
		teams = fmt.Sprintf(" and per role agent of a team (%d)", n)
	}
	fmt.Fprintf(r.opts.Out, "preflight: one trivial turn per configuration (%d)%s\n", len(r.exp.Configs), teams)
	err := preflight.Run(ctx, dir, targets)
	if pe, ok := err.(preflight.Error); ok || (err == nil && len(fails) > 0) {
		return append(fails, pe...)
	}
	return err
}

// preflightAgents are the agents the preflight gives a turn: each
// configuration's own and, in a role team, each role's own agent, labelled
// LABEL.ROLE (a role running the configuration's agent is checked by its
// turn).
func (r *run) preflightAgents() []*configRuntime {
	var out []*configRuntime
	for _, c := range r.exp.Configs {
		rt := r.configs[c.Label]
		out = append(out, rt)
		for _, role := range runrecord.Roles {
			if a := rt.team[role]; a != nil && a != rt.agent {
				cfg := a.Config
				cfg.Label = runrecord.RoleLockKey(c.Label, role)
				out = append(out, &configRuntime{cfg: cfg, agent: a, of: c.Label})
			}
		}
	}
	return out
}

// preflightTarget puts hoh's relay in front of tg's provider and, for a
// container benchmark, opens the task container of the configuration's
// first trial. The returned func releases both.
func (r *run) preflightTarget(ctx context.Context, dir string, rt *configRuntime, tg *preflight.Target) (func(), error) {
	var closers []func()
	release := func() {
		for i := len(closers) - 1; i >= 0; i-- {
			closers[i]()
		}
	}
	if !rt.agent.Served() { // an in-process harness (provider.Offline) talks to no provider
		r.confinePreflight(tg)
		return release, nil
	}
	work := filepath.Join(dir, ".env-"+rt.cfg.Label)
	os.RemoveAll(work)
	closers = append(closers, func() { os.RemoveAll(work) })
	log := filepath.Join(dir, rt.cfg.Label+"-"+served.File)
	os.Remove(log) // a previous run's preflight
	route, err := rt.agent.Route(log, nil, nil)
	if err != nil {
		return release, fmt.Errorf("hoh's relay: %w", err)
	}
	closers = append(closers, route.Close)
	tg.Env, tg.Secrets = route.Env, route.Secrets
	tg.Reach, tg.ServedLog = route.Upstream, route.ServedLog()
	tg.Settle = func() { route.Relay.Settle(5 * time.Second) }
	opts := environment.Options{Provider: route.Provider(rt.cfg.Provider), PidsLimit: r.exp.Containers.PidsLimit}
	if r.docker != nil {
		opts.Docker, opts.RelayBinary = r.docker.client, r.docker.relay
		var first *int
		for i := range r.plan.Trials {
			if r.plan.Trials[i].Config == rt.trialsLabel() {
				first = &i
				break
			}
		}
		if first == nil {
			return release, nil // no trial of this configuration: nothing to check in a container
		}
		env, err := environment.Open(ctx, r.plan.Bench, r.plan.Trials[*first].Task, work, opts)
		if err != nil {
			return release, fmt.Errorf("the task container of %s could not be started: %w", r.plan.Trials[*first].Task.ID, err)
		}
		closers = append(closers, func() { env.Close(context.WithoutCancel(ctx)) })
		// The container sees the exchange's scratch, not the trial directory.
		tg.Exec, tg.Dir = env.Exec, env.Exchange.Scratch
		opts.Provider = env.Provider
	}
	spec := rt.cfg.HarnessSpec()
	spec.Provider = opts.Provider
	spec.InContainer = r.docker != nil
	h, err := rt.agent.HarnessFor(spec)
	if err != nil {
		return release, err
	}
	tg.Harness, tg.Provider = h, opts.Provider
	r.confinePreflight(tg)
	return release, nil
}

// confinePreflight makes a host benchmark's preflight turn run in the view
// a role invocation gets (trial.RoleExecutor), with the run directory as
// the trials', so that a CLI the view hides fails the preflight, not 45
// trials.
func (r *run) confinePreflight(tg *preflight.Target) {
	if r.docker != nil || tg.Exec != nil {
		return
	}
	h, exec, out := tg.Harness, r.opts.Exec, r.out
	tg.Confine = func(workDir, stateDir string) sandbox.Executor {
		return trial.RoleExecutor(exec, h, out, trial.RoleView{Access: harness.AccessReadOnly, WorkDir: workDir, StateDir: stateDir}, nil)
	}
}
