package runner

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net/url"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/hoh-research/hoh/adapters/benchmark"
	"github.com/hoh-research/hoh/adapters/benchmark/registry"
	"github.com/hoh-research/hoh/adapters/harness"
	"github.com/hoh-research/hoh/adapters/sandbox/docker"
	"github.com/hoh-research/hoh/experiments/environment"
	"github.com/hoh-research/hoh/experiments/plan"
	"github.com/hoh-research/hoh/experiments/provider"
	"github.com/hoh-research/hoh/experiments/trial"
	"github.com/hoh-research/hoh/runrecord"
)

// containers is what a run of a container benchmark (Harbor, ProgramBench)
// holds once: one Docker client whose run label marks every container and
// image of the run, and one static relay binary for the model relay.
type containers struct {
	client     *docker.Client
	relay      string
	stopSignal func()
}

// connectDocker connects to Docker only when the benchmark needs it: a kind
// that uses Docker with the config's options, or a test's benchmark that is a
// ContainerBenchmark.
func (r *run) connectDocker(ctx context.Context, bench benchmark.Benchmark) error {
	if bench != nil {
		if _, ok := bench.(environment.ContainerBenchmark); !ok {
			return nil
		}
	} else if !registry.UsesDocker(registry.Spec{Kind: r.exp.Benchmark.Kind, Options: r.exp.Benchmark.Options, Resolve: r.exp.Resolve}) {
		return nil
	}
	c, err := docker.New(ctx, docker.Options{RunID: fmt.Sprintf("hoh-run-%d-%d", os.Getpid(), time.Now().UnixNano())})
	if err != nil {
		return fmt.Errorf("benchmark %s runs its tasks in containers: %w", r.exp.Benchmark.Kind, err)
	}
	r.docker = &containers{client: c, stopSignal: c.CleanupOnSignal(time.Minute)}
	return nil
}

// dockerClient is the run's Docker client, or nil.
func (r *run) dockerClient() *docker.Client {
	if r.docker == nil {
		return nil
	}
	return r.docker.client
}

// startContainers checks the providers can be relayed and finds the relay,
// only when the run has a Docker client.
func (r *run) startContainers(ctx context.Context) error {
	if r.docker == nil {
		return nil
	}
	// The relay forwards http; https providers go through the environment's
	// host-side TLS bridge. Anything else is refused before any trial starts.
	// An agent without an endpoint (provider.Offline) has nothing to relay.
	// A role team's roles each have their own endpoint, relayed to their
	// own containers.
	for _, rt := range r.configs {
		for _, a := range append([]*provider.Agent{rt.agent}, slices.Collect(maps.Values(rt.team))...) {
			if !a.Served() {
				continue
			}
			if u, err := url.Parse(a.Config.Provider.BaseURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") {
				return fmt.Errorf("config %s: provider base_url %q must be an http or https URL", rt.cfg.Label, a.Config.Provider.BaseURL)
			}
		}
	}
	if err := cleanupEarlierRuns(ctx, r.docker.client, r.out); err != nil {
		return err
	}
	bin, err := docker.FindRelayBinary() // built at install time, never during a run
	if err != nil {
		return err
	}
	r.docker.relay = bin
	fmt.Fprintf(r.opts.Out, "containers of this run are labelled %s=%s\n", docker.LabelRun, r.docker.client.RunID())
	return nil
}

// cleanupEarlierRuns removes the containers, images and relay temporary
// directories that earlier runs of out left behind when they were killed (their labels are in
// runrecord.RunLayout.DockerRuns), then notes this run's label. The caller holds out's
// lock, so none of those runs is alive.
func cleanupEarlierRuns(ctx context.Context, c *docker.Client, out string) error {
	path := runrecord.RunLayout{Dir: out}.DockerRuns()
	data, err := os.ReadFile(path)
	if err != nil && !os.IsNotExist(err) {
		return err
	}
	for _, id := range strings.Fields(string(data)) {
		if id != c.RunID() {
			if err := docker.CleanupRun(ctx, c.API, id, true); err != nil {
				return fmt.Errorf("remove what the killed run %s left in Docker: %w", id, err)
			}
			for _, d := range docker.RelayTempDirs(id) {
				os.RemoveAll(d)
			}
		}
	}
	return runrecord.WriteFile(path, []byte(c.RunID()+"\n"))
}

// closeContainers removes every container and image labelled with this
// run, even ones an interrupted attempt left behind.
func (r *run) closeContainers() error {
	d := r.docker
	if d == nil {
		return nil
	}
	r.docker = nil
	d.stopSignal()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	err := d.client.Cleanup(ctx)
	d.client.API.Close()
	if err != nil {
		return fmt.Errorf("removing the run's containers and images (label %s=%s): %w", docker.LabelRun, d.client.RunID(), err)
	}
	return nil
}

// dockerRun is the run label of this run's containers, or "".
func (r *run) dockerRun() string {
	if r.docker == nil {
		return ""
	}
	return r.docker.client.RunID()
}

// unit is what one attempt runs: a planned trial, or one step of a
// multi-step trial (its own trial directory, task and benchmark).
type unit struct {
	dir   string // the trial directory, absolute
	label string // relative to the run directory: names its checkpoint images
	spec  runrecord.TrialSpec
	task  benchmark.Task
	bench benchmark.Benchmark
	// image is where its environment starts when it kept no checkpoint of
	// its own ("" : the task's image); a step's is where it started.
	image string
	// handOn keeps its last checkpoint's environment when the others are
	// removed: the next step starts from it.
	handOn bool
	// developerTimeout, when set, is the Developer's instead of the
	// experiment's (a step's agent timeout); withoutScores: a step's rows
	// are its trial's (trial.Env.WithoutScores).
	developerTimeout time.Duration
	withoutScores    bool
}

func (r *run) unitOf(t plan.Trial) unit {
	return unit{dir: r.trialDir(t), label: t.Dir, spec: t.Spec(), task: t.Task, bench: r.plan.Bench}
}

// attempt runs one attempt of a trial: its steps in order when its task
// has several (attemptSteps), else the trial itself (attemptUnit).
func (r *run) attempt(ctx context.Context, t plan.Trial, rt *configRuntime, pol trialPolicy) (*runrecord.Summary, error) {
	steps, err := r.stepsOf(t)
	if err != nil {
		return nil, err
	}
	if len(steps) > 0 {
		return r.attemptSteps(ctx, t, rt, pol, steps)
	}
	return r.attemptUnit(ctx, r.unitOf(t), rt, pol)
}

// attemptUnit runs one attempt of u in a fresh environment: the host, or
// a task container whose start failure is an infrastructure failure. In
// both, the CLIs reach the provider through hoh's relay (experiments/served),
// which logs what was served to which attempt and whether the model
// answered: on the host directly, from a container through the container's
// model relay, whose host side forwards to it.
func (r *run) attemptUnit(ctx context.Context, u unit, rt *configRuntime, pol trialPolicy) (*runrecord.Summary, error) {
	opts := environment.Options{Provider: rt.cfg.Provider, PidsLimit: r.exp.Containers.PidsLimit, Image: u.image, HostExec: r.opts.Exec}
	_, keepEnvs := u.bench.(environment.EnvironmentVerifier)
	keepEnvs = keepEnvs && r.docker != nil
	if r.docker != nil {
		opts.Docker, opts.RelayBinary = r.docker.client, r.docker.relay
	}
	route, err := r.relay(u, rt, &opts)
	if err != nil {
		return nil, err
	}
	defer route.close()
	if keepEnvs {
		// A retried attempt continues from the whole environment an earlier
		// attempt of this run committed, not only from the workspace.
		img, err := environment.LatestCheckpointImage(ctx, r.docker.client, u.label)
		if err != nil {
			return nil, &trial.InfraError{Stage: "environment", Evidence: err.Error()}
		}
		if img != "" {
			opts.Image = img
		}
	}
	env, err := environment.Open(ctx, u.bench, u.task, u.dir, opts)
	if err != nil {
		if ctx.Err() != nil {
			return nil, err
		}
		return nil, &trial.InfraError{Stage: "environment", Evidence: err.Error()}
	}
	if env.Exchange != nil {
		// The container's view of the trial is scratch: gone with it.
		defer os.RemoveAll(runrecord.TrialLayout{Dir: u.dir}.AgentView())
	}
	defer env.Close(context.WithoutCancel(ctx))
	for _, n := range env.Notes {
		pol.Logf("environment: %s", n)
	}
	clis, err := attemptHarnesses(rt, env, route.team, opts.Provider)
	if err != nil {
		return nil, fmt.Errorf("config %s: %w", rt.cfg.Label, err)
	}
	var keep *environment.Keep
	if keepEnvs {
		keep = &environment.Keep{Trial: u.label, HandOn: u.handOn}
	}
	return trial.Run(ctx, env.TrialDir, u.spec, trialEnv(pol, u, route, env.Place(u.bench, u.task, keep), clis))
}

// relay starts hoh's relay of u's attempt when the provider has an
// endpoint (provider.Agent.Route): its log is u's served.jsonl, and the
// CLIs get a placeholder the relay swaps for the key. It returns the
// route (for a role team, the team's routes) and how to stop it.
func (r *run) relay(u unit, rt *configRuntime, opts *environment.Options) (routed, error) {
	if rt.team != nil {
		return r.teamRelays(u, rt, opts)
	}
	route, err := rt.agent.Route(runrecord.TrialLayout{Dir: u.dir}.Served(), nil, nil)
	if err != nil {
		return routed{}, &trial.InfraError{Stage: "served-token relay", Evidence: err.Error(), Local: true}
	}
	opts.Provider = route.Provider(opts.Provider)
	return routed{env: route.Env, secrets: route.Secrets, servedLog: route.ServedLog(), relay: route.Relay, close: route.Close}, nil
}

// attemptHarnesses are the CLIs an attempt runs, each built for the
// environment (environment.Env.CLI): a role team's own, else the
// configuration's, for its Developer (and Vanilla), reaching p.
func attemptHarnesses(rt *configRuntime, env *environment.Env, team *provider.Team, p harness.Provider) (attemptCLIs, error) {
	if team == nil {
		h, err := env.CLI(rt.agent.Harness, rt.cfg.HarnessSpec(), p, rt.agent.HarnessFor)
		return attemptCLIs{developer: h}, err
	}
	roles := make(map[runrecord.Role]harness.Harness, len(team.Seats))
	for role, seat := range team.Seats {
		spec := seat.Agent.Config.HarnessSpec()
		spec.Provider = seat.Provider
		h, err := env.CLI(seat.Harness, spec, seat.Provider, seat.Agent.HarnessFor)
		if err != nil {
			return attemptCLIs{}, fmt.Errorf("role %s: %w", role, err)
		}
		roles[role] = h
	}
	return attemptCLIs{developer: roles[runrecord.RoleDeveloper], roles: roles}, nil
}

// teamRelays is relay for a role team (provider.RouteTeam): every relay
// logs to the trial's one served.jsonl under each request's attempt. The
// Developer's route is the team's own (what Vanilla runs).
func (r *run) teamRelays(u unit, rt *configRuntime, opts *environment.Options) (routed, error) {
	team, err := provider.RouteTeam(rt.team, runrecord.TrialLayout{Dir: u.dir}.Served(), nil, nil)
	var relayErr *provider.RelayError
	if errors.As(err, &relayErr) {
		return routed{}, &trial.InfraError{Stage: "served-token relay of the " + relayErr.Role.Display(), Evidence: relayErr.Err.Error(), Local: true}
	}
	if err != nil {
		return routed{}, fmt.Errorf("config %s %w", rt.cfg.Label, err)
	}
	opts.RoleProviders = map[runrecord.Role]harness.Provider{}
	for role, seat := range team.Seats {
		opts.RoleProviders[role] = seat.Provider
	}
	dev := team.Seats[runrecord.RoleDeveloper]
	opts.Provider = dev.Provider
	return routed{env: dev.Route.Env, secrets: append([]string(nil), team.Secrets...), servedLog: team.ServedLog,
		relay: dev.Route.Relay, team: team, close: team.Close}, nil
}
