// Package environment gives one trial attempt the place where all its role
// invocations run: the host for host tasks (builtin, GameCraft), or one task
// container for container tasks (Harbor, ProgramBench).
//
// How the runner uses it, once per trial attempt (a retried attempt after an
// infrastructure failure opens a fresh environment):
//
//	env, err := environment.Open(ctx, bench, task, trialDir, opts)
//	// err: infrastructure failure; retry the attempt later
//	defer env.Close(context.WithoutCancel(ctx))
//	h := <harness built with env.Provider> // BaseURL as seen by the agent
//	trial.Run(ctx, env.TrialDir, spec, trial.NewEnv(pol, trial.Place{..., Exec: env.Exec, Exchange: env.Exchange}, route, h, trial.Mode{}))
//
// trial.Run must get env.TrialDir (absolute) and env.Exchange: the
// container never sees the trial directory, only the exchange
// (agent-view/inputs read-only, agent-view/scratch read-write), each at its
// own path; before each role invocation the trial places there that role's
// inputs, its CLI state and, for the Developer, the workspace, so the paths
// it hands a harness are valid in there too. Evaluation does not use this
// environment: benchmarks score in their own fresh containers.
package environment

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strings"
	"time"

	"github.com/hoh-research/hoh/adapters/benchmark"
	"github.com/hoh-research/hoh/adapters/harness"
	"github.com/hoh-research/hoh/adapters/harness/cliinstall"
	"github.com/hoh-research/hoh/adapters/sandbox"
	"github.com/hoh-research/hoh/adapters/sandbox/docker"
	"github.com/hoh-research/hoh/runrecord"
)

// ContainerBenchmark is a benchmark whose agents work inside a task
// container: it names the image and the image's workspace directory.
type ContainerBenchmark interface {
	ContainerImage(ctx context.Context, t benchmark.Task) (image, workdir string, err error)
}

// SpecDecorator is a ContainerBenchmark whose task environments are more
// than one container: it adds sidecar services, an egress allowlist and the
// like to the task container's spec (Harbor's DecorateSpec).
type SpecDecorator interface {
	DecorateSpec(ctx context.Context, t benchmark.Task, spec *docker.Spec) error
}

// ContainerSpecer is a container benchmark whose tasks declare how their
// container starts (entrypoint, environment, workdir, user, healthcheck):
// Open adds the mounts, the relay and PATH to that spec.
type ContainerSpecer interface {
	ContainerSpec(ctx context.Context, t benchmark.Task) (docker.Spec, error)
}

// ToolGiver is a container benchmark whose tasks give the agents tools
// besides their CLI's own: MCP servers and skills (Harbor's
// environment.mcp_servers and skills_dir). Open puts them in Env.Tools, and
// the runner hands them to the harness (harness.Spec.Tools), which gives
// each role its share (harness.TaskTools.MCPFor, SkillsFor).
type ToolGiver interface {
	AgentTools(t benchmark.Task) (harness.TaskTools, error)
}

// EnvironmentVerifier is a container benchmark whose verifier runs in the
// agents' environment as committed at each checkpoint
// (benchmark.WithEnvironmentImage), so the runner commits it.
type EnvironmentVerifier interface {
	VerifiesCommittedEnvironment()
}

// Options configure Open. Only Provider is used for host tasks.
type Options struct {
	// Provider is the configured model endpoint, as reachable from the host.
	Provider harness.Provider
	// Docker is the engine client for container tasks.
	Docker *docker.Client
	// RelayBinary is a static cmd/hoh-relay (docker.BuildRelayBinary); needed
	// when Provider.BaseURL is set.
	RelayBinary string
	// HarnessDir holds the npm-installed CLIs, mounted read-only; default
	// $HOH_TOOLS, else <repo>/.tools/harnesses.
	HarnessDir string
	// Node is the host node binary mounted with its libraries; default
	// "node" on PATH.
	Node string
	// RelayPort is the in-container loopback port of the model relay
	// (default 18080).
	RelayPort int
	// PidsLimit caps the container's processes; 0 keeps docker.DefaultPids.
	PidsLimit int64
	// Image, when set, replaces the task's image (a committed checkpoint
	// of an earlier attempt, to continue from its whole state).
	Image string
	// RoleProviders, for a role team, are the roles' own endpoints as the
	// host reaches them: RoleContainers relays a role's container to its
	// role's, so no role reaches another's provider. A role not in it
	// gets Provider.
	RoleProviders map[runrecord.Role]harness.Provider
	// HostExec runs the commands of a task on the host; nil: sandbox.Local
	// (tests give one that records or fakes them).
	HostExec sandbox.Executor
}

// Kind says where an environment runs commands.
type Kind string

const (
	Local  Kind = "local"
	Docker Kind = "docker"
)

// Env is the execution environment of one trial attempt.
type Env struct {
	Kind Kind
	// Exec runs every role invocation of the trial.
	Exec sandbox.Executor
	// Provider is Options.Provider with BaseURL rewritten to the address the
	// agent sees (the relay inside a container); build the harness with it.
	Provider harness.Provider
	// TrialDir is the absolute trial directory (on the host; a container
	// sees only Exchange, at the same paths).
	TrialDir string
	// Exchange is, for a container, the only part of the trial directory
	// the container sees (trial.Env.Exchange).
	Exchange *sandbox.Exchange
	// Container is the task container (nil for Local).
	Container *docker.Environment
	// Notes are limits that could not be applied, and similar facts.
	Notes []string
	// Tools are what the task gives the agents (ToolGiver); servers they
	// name run in this environment (stdio commands, sidecars).
	Tools harness.TaskTools

	bridge *tlsBridge // host-side TLS termination for an https provider
	opts   Options    // what it was opened with: its role containers' too
}

// Close removes the container (and stops its relay). Safe to call twice.
func (e *Env) Close(ctx context.Context) error {
	if e == nil {
		return nil
	}
	if e.bridge != nil {
		e.bridge.Close()
		e.bridge = nil
	}
	if e.Container == nil {
		return nil
	}
	c := e.Container
	e.Container = nil
	return c.Close(ctx)
}

// Open creates trialDir if needed and returns the trial's environment: the
// host for benchmarks that are not a ContainerBenchmark, else a task
// container with the task's limits (CPUs, memory, storage, GPUs, network
// mode none unless allow_internet), the trial's exchange (never the trial
// directory) mounted at its own paths, the harness CLIs and node mounted
// read-only at their own paths, and a model relay from 127.0.0.1:RelayPort
// inside to the provider.
func Open(ctx context.Context, bench benchmark.Benchmark, task benchmark.Task, trialDir string, opts Options) (*Env, error) {
	abs, err := filepath.Abs(trialDir)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(abs, 0o755); err != nil {
		return nil, fmt.Errorf("environment: %w", err)
	}
	cb, ok := bench.(ContainerBenchmark)
	if !ok {
		exec := opts.HostExec
		if exec == nil {
			exec = sandbox.Local{}
		}
		return &Env{Kind: Local, Exec: exec, Provider: opts.Provider, TrialDir: abs, opts: opts}, nil
	}
	if opts.Docker == nil {
		return nil, fmt.Errorf("environment: task %s/%s runs in a container but no Docker client is configured", task.Benchmark, task.ID)
	}
	img, workdir, err := cb.ContainerImage(ctx, task)
	if err != nil {
		return nil, err
	}
	mounts, pathDirs, err := harnessMounts(opts)
	if err != nil {
		return nil, fmt.Errorf("environment: task %s: %w", task.ID, err)
	}
	exchange, own, err := openExchange(abs)
	if err != nil {
		return nil, err
	}
	// They must not hide the CLI mounts, nor these them.
	for _, m := range mounts {
		for _, o := range own {
			if within(m.Container, o.Container) || within(o.Container, m.Container) {
				return nil, fmt.Errorf("environment: trial directory %s overlaps the mounted %s", abs, m.Container)
			}
		}
	}
	mounts = append(mounts, own...)
	relay, bridge, err := modelRelay(opts)
	if err != nil {
		return nil, err
	}
	c, spec, err := startContainer(ctx, bench, task, img, abs, opts, mounts, pathDirs, relay)
	if err != nil {
		if bridge != nil {
			bridge.Close()
		}
		return nil, err
	}
	env := &Env{Kind: Docker, Exec: c.Executor(), Provider: opts.Provider, TrialDir: abs, Exchange: exchange, Container: c, Notes: c.Notes, bridge: bridge, opts: opts}
	if err := env.prepare(ctx, bench, task, workdir, spec, mounts, relay != nil); err != nil {
		env.Close(context.WithoutCancel(ctx))
		return nil, err
	}
	return env, nil
}

// openExchange lays out the trial's exchange and returns the mounts that
// show it. The container sees the trial's exchange only (each invocation's
// inputs read-only; its CLI state and, while the Developer works, the
// workspace read-write), never the trial directory: no role reaches
// another iteration's records, withheld evidence, the history
// repository, evaluation outputs or hoh's private directory, the
// Planner and the QA Tester not even the workspace, and nothing there
// is mounted for hoh to trust.
func openExchange(abs string) (*sandbox.Exchange, []docker.Mount, error) {
	tl := runrecord.TrialLayout{Dir: abs}
	exchange := &sandbox.Exchange{Inputs: tl.AgentViewInputs(), Scratch: tl.AgentViewScratch(),
		Current: filepath.Join(tl.AgentViewLink(), "current"), Idle: filepath.Join(tl.AgentViewLink(), "idle")}
	for _, d := range []string{tl.Workspace(), exchange.Inputs, exchange.Scratch, exchange.Idle} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return nil, nil, fmt.Errorf("environment: %w", err)
		}
	}
	if err := sandbox.PointLink(exchange.Current, exchange.Idle); err != nil {
		return nil, nil, fmt.Errorf("environment: %w", err)
	}
	own := []docker.Mount{{Host: exchange.Inputs, Container: exchange.Inputs, ReadOnly: true},
		{Host: exchange.Scratch, Container: exchange.Scratch},
		{Host: tl.AgentViewLink(), Container: tl.AgentViewLink(), ReadOnly: true}}
	return exchange, own, nil
}

// modelRelay returns the relay to the provider's endpoint (nil without
// one) and, for an https endpoint, the host-side bridge it goes through.
func modelRelay(opts Options) (*docker.RelaySpec, *tlsBridge, error) {
	prov := opts.Provider
	if prov.BaseURL == "" {
		return nil, nil, nil
	}
	u, err := url.Parse(prov.BaseURL)
	if err != nil {
		return nil, nil, fmt.Errorf("environment: provider %s: base_url %q: %w", prov.Name, prov.BaseURL, err)
	}
	var bridge *tlsBridge
	if u.Scheme == "https" {
		if bridge, err = startTLSBridge(u); err != nil {
			return nil, nil, fmt.Errorf("environment: provider %s: %w", prov.Name, err)
		}
		u = &url.URL{Scheme: "http", Host: bridge.Addr(), Path: u.Path}
	}
	target, err := relayTarget(u.String())
	if err != nil {
		if bridge != nil {
			bridge.Close()
		}
		return nil, nil, fmt.Errorf("environment: provider %s: %w", prov.Name, err)
	}
	if opts.RelayBinary == "" {
		return nil, nil, errors.New("environment: a container with a model endpoint needs Options.RelayBinary (docker.BuildRelayBinary)")
	}
	return &docker.RelaySpec{Target: target, Port: opts.RelayPort, Binary: opts.RelayBinary}, bridge, nil
}

// Reached is p (an endpoint as the host reaches it, such as a role's own
// relay) as a CLI in the trial's containers reaches it: through the
// in-container model relay, keeping p's path. Without a container relay
// it is p.
func (e *Env) Reached(p harness.Provider) harness.Provider {
	if e.Container == nil || e.Container.ModelBaseURL() == "" || p.BaseURL == "" {
		return p
	}
	u, err := url.Parse(p.BaseURL)
	if err != nil {
		return p
	}
	p.BaseURL = e.Container.ModelBaseURL() + strings.TrimSuffix(u.EscapedPath(), "/")
	return p
}

// startContainer starts the task's container: its limits, or the
// benchmark's own spec, with the options' overrides, hoh's mounts and
// relay, and hoh's CLIs and node after the image's own PATH.
func startContainer(ctx context.Context, bench benchmark.Benchmark, task benchmark.Task, img, abs string, opts Options,
	mounts []docker.Mount, pathDirs []string, relay *docker.RelaySpec) (*docker.Environment, docker.Spec, error) {
	l := task.Limits
	spec := docker.Spec{
		Image: img, CPUs: l.CPUs, MemoryMB: l.MemoryMB, StorageMB: l.StorageMB, GPUs: l.GPUs,
		AllowInternet: l.AllowInternet,
	}
	var err error
	if cs, ok := bench.(ContainerSpecer); ok {
		if spec, err = cs.ContainerSpec(ctx, task); err != nil {
			return nil, spec, err
		}
	}
	if opts.Image != "" {
		spec.Image = opts.Image
	}
	if opts.PidsLimit != 0 {
		spec.Pids = opts.PidsLimit
	}
	// hoh's CLIs and node go after the image's own PATH, never instead.
	icfg, err := opts.Docker.ImageConfig(ctx, spec.Image)
	if err != nil {
		return nil, spec, err
	}
	pathVar, ok := docker.EnvValue(icfg.Env, "PATH")
	if !ok {
		pathVar = docker.DefaultPath
	}
	pathVar = strings.Join(append([]string{pathVar}, pathDirs...), ":")
	spec.Mounts, spec.Relay = append(spec.Mounts, mounts...), relay
	spec.Env = append(spec.Env, "PATH="+pathVar)
	if spec.Labels == nil {
		spec.Labels = map[string]string{}
	}
	spec.Labels["hoh.task"], spec.Labels["hoh.trial"] = task.ID, filepath.Base(abs)
	if d, ok := bench.(SpecDecorator); ok {
		if err := d.DecorateSpec(ctx, task, &spec); err != nil {
			return nil, spec, err
		}
	}
	c, err := opts.Docker.Start(ctx, spec)
	return c, spec, err
}

// prepare readies a started container for the roles: the benchmark's
// tools, the exchange's scratch emptying, the relayed model endpoint, the
// image's workspace linked to the exchange, and the spec's user.
func (e *Env) prepare(ctx context.Context, bench benchmark.Benchmark, task benchmark.Task, workdir string, spec docker.Spec, mounts []docker.Mount, relayed bool) error {
	if tg, ok := bench.(ToolGiver); ok {
		var err error
		if e.Tools, err = tg.AgentTools(task); err != nil {
			return err
		}
	}
	e.Exchange.Empty = e.emptyScratch
	if relayed {
		e.Provider = e.Reached(e.Provider)
	}
	if err := e.linkWorkdir(ctx, workdir, e.Exchange.Current, mounts); err != nil {
		return err
	}
	if spec.User != "" {
		e.Exec = &asUser{env: e, user: spec.User}
	}
	return nil
}

// linkWorkdir replaces the image's workspace directory with a link to the
// exchange's Current link, which points at each invocation's working
// directory (the Developer's workspace, the QA Tester's candidate), so
// instructions naming it (e.g. /app) reach the files the trial snapshots.
// A_0 came from that directory, so nothing is lost.
func (e *Env) linkWorkdir(ctx context.Context, workdir, target string, mounts []docker.Mount) error {
	wd := path.Clean(workdir)
	covers := false // removing wd would remove a mount point
	for _, m := range mounts {
		covers = covers || within(m.Container, wd)
	}
	if wd == "/" || wd == "." || covers || within(wd, "/proc") || within(wd, "/sys") || within(wd, "/dev") {
		e.Notes = append(e.Notes, fmt.Sprintf("image workspace %q not linked to the trial workspace", workdir))
		return nil
	}
	var out strings.Builder
	ex, err := e.Container.ExecutorAs("0").Run(ctx, sandbox.Command{
		Args:   []string{"/bin/sh", "-c", `rm -rf "$1" && mkdir -p "$(dirname "$1")" && ln -s "$2" "$1"`, "link", wd, target},
		Stdout: &out, Stderr: &out, WallTimeout: DefaultSetupTimeout,
	})
	if err != nil {
		return fmt.Errorf("environment: linking %s: %w", wd, err)
	}
	if ex.Code != 0 {
		e.Notes = append(e.Notes, fmt.Sprintf("image workspace %s not linked to the trial workspace: %s", wd, strings.TrimSpace(out.String())))
	}
	return nil
}

// asUser runs every role invocation as the task's agent.user. Between
// invocations hoh writes the exchange's scratch (the workspace while the
// Developer works, CLI state) as root, so before each one it is given to
// the user, and after it back to root: under rootless Podman the user's
// uid is a subordinate one on the host, whose files (a CLI's 0600 state
// among them) hoh could neither read nor remove; the container's root is
// hoh's own uid there, as it is root's on Docker Engine.
type asUser struct {
	env  *Env
	user string
}

func (a *asUser) Run(ctx context.Context, cmd sandbox.Command) (sandbox.Exit, error) {
	var out strings.Builder
	ex, err := a.env.Container.ExecutorAs("0").Run(ctx, sandbox.Command{
		Args:   []string{"/bin/sh", "-c", `chown -R "$1" "$2"`, "share", a.user, a.env.Exchange.Scratch},
		Stdout: &out, Stderr: &out, WallTimeout: DefaultSetupTimeout,
	})
	if err == nil && ex.Code != 0 {
		err = fmt.Errorf("exit %d: %s", ex.Code, strings.TrimSpace(out.String()))
	}
	if err != nil {
		return sandbox.Exit{Code: -1}, &docker.InfraError{Stage: "agent.user", Err: fmt.Errorf("giving the exchange's scratch (the workspace, CLI state) to %s: %w", a.user, err)}
	}
	ex, err = a.env.Container.ExecutorAs(a.user).Run(ctx, cmd)
	out.Reset()
	back, backErr := a.env.Container.ExecutorAs("0").Run(context.WithoutCancel(ctx), sandbox.Command{
		Args:   []string{"/bin/sh", "-c", `chown -R 0:0 "$1"`, "take", a.env.Exchange.Scratch},
		Stdout: &out, Stderr: &out, WallTimeout: DefaultSetupTimeout,
	})
	if backErr == nil && back.Code != 0 {
		backErr = fmt.Errorf("exit %d: %s", back.Code, strings.TrimSpace(out.String()))
	}
	if err == nil && backErr != nil {
		return sandbox.Exit{Code: -1}, &docker.InfraError{Stage: "agent.user", Err: fmt.Errorf("taking the exchange's scratch back from %s: %w", a.user, backErr)}
	}
	return ex, err
}

// emptyScratch empties the exchange's scratch: on the host when hoh may
// remove what the container's users left there, else in the container as
// root.
func (e *Env) emptyScratch(ctx context.Context) error {
	dir := e.Exchange.Scratch
	hostErr := sandbox.EmptyDir(dir)
	if hostErr == nil {
		return nil
	}
	if e.Container == nil {
		return hostErr
	}
	var out strings.Builder
	ex, err := e.Container.ExecutorAs("0").Run(ctx, sandbox.Command{
		Args:   []string{"/bin/sh", "-c", `cd "$1" && rm -rf -- * .[!.]* ..?*`, "empty", dir},
		Stdout: &out, Stderr: &out, WallTimeout: DefaultSetupTimeout,
	})
	if err == nil && ex.Code != 0 {
		err = fmt.Errorf("exit %d: %s", ex.Code, strings.TrimSpace(out.String()))
	}
	if err != nil {
		return fmt.Errorf("%v; in the container: %w", hostErr, err)
	}
	return nil
}

// harnessMounts are the read-only mounts that make the host-installed CLIs
// runnable in the container, and the directories to put on PATH.
func harnessMounts(opts Options) ([]docker.Mount, []string, error) {
	dir := opts.HarnessDir
	if dir == "" {
		var err error
		if dir, err = cliinstall.ToolsDir(); err != nil {
			return nil, nil, err
		}
	}
	if _, err := os.Stat(dir); err != nil {
		return nil, nil, fmt.Errorf("harness CLIs: %w: %s", err, cliinstall.InstallHint)
	}
	dir, _ = filepath.Abs(dir)
	node := opts.Node
	if node == "" {
		p, err := exec.LookPath("node")
		if err != nil {
			return nil, nil, fmt.Errorf("node is needed to run the harness CLIs in a container: %w", err)
		}
		node = p
	}
	ms, err := docker.NodeMounts(node, dir)
	if err != nil {
		return nil, nil, err
	}
	if ms, err = withNativeLibraries(ms, dir); err != nil {
		return nil, nil, err
	}
	real, _ := filepath.EvalSymlinks(node)
	return ms, []string{filepath.Dir(real), filepath.Join(dir, "node_modules", ".bin")}, nil
}

// relayTarget is the host:port the relay forwards to. The relay passes
// bytes through, so it takes plain http only; Open puts a tlsBridge in front
// of an https provider.
func relayTarget(baseURL string) (string, error) {
	u, err := url.Parse(baseURL)
	if err != nil {
		return "", fmt.Errorf("base_url %q: %w", baseURL, err)
	}
	if u.Scheme != "http" {
		return "", fmt.Errorf("base_url %q: the container relay forwards plain http only (https endpoints go through the host-side TLS bridge)", baseURL)
	}
	host, port := u.Hostname(), u.Port()
	if host == "" {
		return "", fmt.Errorf("base_url %q has no host", baseURL)
	}
	if port == "" {
		port = "80"
	}
	return net.JoinHostPort(host, port), nil
}

// within reports whether p is dir or below it.
func within(p, dir string) bool {
	rel, err := filepath.Rel(dir, p)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, "../")
}

// DefaultSetupTimeout bounds the setup commands Open runs in the container.
const DefaultSetupTimeout = 60 * time.Second

// RoleContainers is trial.Env.RoleEnvironment for a trial in task
// containers: each call opens another container of the trial for role,
// started from image(after) (the environment as the Developer left
// checkpoint after; opts.Image, else the task's image, when it gives ""),
// with the same exchange, limits and user, and a relay to the role's own
// provider (opts.RoleProviders); release removes it. image may be nil.
// Every container's relay listens on the same in-container port, so one
// CLI address (Env.Reached) serves every role's container.
func RoleContainers(bench benchmark.Benchmark, task benchmark.Task, trialDir string, opts Options,
	image func(ctx context.Context, after int) (string, error)) func(ctx context.Context, role runrecord.Role, after int) (sandbox.Executor, func(), error) {
	return func(ctx context.Context, role runrecord.Role, after int) (sandbox.Executor, func(), error) {
		o := opts
		if p, ok := opts.RoleProviders[role]; ok {
			o.Provider = p
		}
		if image != nil && after > 0 {
			img, err := image(ctx, after)
			if err != nil {
				return nil, nil, err
			}
			if img != "" {
				o.Image = img
			}
		}
		e, err := Open(ctx, bench, task, trialDir, o)
		if err != nil {
			return nil, nil, err
		}
		return e.Exec, func() { e.Close(context.WithoutCancel(ctx)) }, nil
	}
}
