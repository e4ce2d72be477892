package harbor

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"time"

	"github.com/compose-spec/compose-go/v2/loader"
	"github.com/compose-spec/compose-go/v2/tree"
	"github.com/compose-spec/compose-go/v2/types"
	"github.com/docker/docker/api/types/container"

	"github.com/hoh-research/hoh/adapters/benchmark"
	"github.com/hoh-research/hoh/adapters/sandbox/docker"
)

// mainService is the Compose service Harbor runs the agent in; a task's
// compose file only adds to it (dependencies, environment) and defines the
// sidecars.
const mainService = "main"

// composeNames are the file names Compose looks for, in its order.
var composeNames = []string{"compose.yaml", "compose.yml", "docker-compose.yaml", "docker-compose.yml"}

// composeFile returns the task's environment/ compose file, or "".
func composeFile(taskDir string) string {
	for _, n := range composeNames {
		p := filepath.Join(taskDir, "environment", n)
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	return ""
}

// baseCompose is what Harbor merges a task's compose file onto: the main
// service built from environment/.
const baseCompose = "services:\n  main:\n    build:\n      context: .\n"

// supportedCompose are the attributes hoh starts services with; the
// loader reports every other attribute a task's file uses, so a feature
// hoh does not implement refuses the task instead of being dropped.
var supportedCompose = func() []tree.Path {
	var out []tree.Path
	for _, p := range []string{
		"name", "networks.default.name", "networks.default.internal",
		"services.*.image", "services.*.build.context", "services.*.build.dockerfile",
		"services.*.environment.*", "services.*.command.[]", "services.*.entrypoint.[]",
		"services.*.command", "services.*.entrypoint",
		"services.*.working_dir", "services.*.user", "services.*.hostname",
		"services.*.cpus", "services.*.mem_limit",
		"services.*.expose.[]", "services.*.networks.default",
		"services.*.depends_on.*.condition", "services.*.depends_on.*.required", "services.*.depends_on.*.restart",
		"services.*.healthcheck.test.[]", "services.*.healthcheck.test", "services.*.healthcheck.interval",
		"services.*.healthcheck.timeout", "services.*.healthcheck.retries", "services.*.healthcheck.start_period",
		"services.*.healthcheck.start_interval", "services.*.healthcheck.disable",
	} {
		out = append(out, tree.NewPath(strings.Split(p, ".")...))
	}
	return out
}()

// mainAttributes are what a task's file may set on main: Harbor itself
// sets its image, command, volumes and limits.
var mainAttributes = map[string]bool{"build": true, "depends_on": true, "environment": true, "expose": true, "networks": true}

var projectNameChars = regexp.MustCompile(`[^a-z0-9_-]+`)

// loadCompose reads the task's compose file with the Compose project's own
// loader, merged onto Harbor's base (main built from environment/), with
// ${VAR} interpolated from the host's environment. unsupported names each
// attribute of the file hoh would not honour (dotted path).
func loadCompose(ctx context.Context, taskDir string) (p *types.Project, unsupported []string, err error) {
	file := composeFile(taskDir)
	if file == "" {
		return nil, nil, nil
	}
	envDir := filepath.Join(taskDir, "environment")
	name := strings.Trim(projectNameChars.ReplaceAllString(strings.ToLower(filepath.Base(taskDir)), "-"), "-_")
	if name == "" {
		name = "task"
	}
	details := types.ConfigDetails{
		WorkingDir:  envDir,
		ConfigFiles: []types.ConfigFile{{Filename: filepath.Join(envDir, "hoh-harbor-base.yaml"), Content: []byte(baseCompose)}, {Filename: file}},
		Environment: types.NewMapping(os.Environ()),
	}
	p, err = loader.LoadWithContext(ctx, details, func(o *loader.Options) {
		o.SetProjectName("hoh-"+name, true)
		o.SkipResolveEnvironment = false
	}, loader.WithSupportedAttributes(supportedCompose, func(found []loader.UnsupportedAttribute) {
		for _, f := range found {
			unsupported = append(unsupported, f.Path.String())
		}
	}))
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", file, err)
	}
	if main, ok := p.Services[mainService]; ok {
		for _, attr := range setAttributes(main) {
			if !mainAttributes[attr] {
				unsupported = append(unsupported, fmt.Sprintf("services.%s.%s (Harbor sets the main service itself)", mainService, attr))
			}
		}
	}
	for n, s := range p.Services {
		if s.Build == nil && s.Image == "" {
			unsupported = append(unsupported, fmt.Sprintf("services.%s has neither image nor build", n))
		}
	}
	sort.Strings(unsupported)
	return p, unsupported, nil
}

// setAttributes lists the attributes a main service sets besides what the
// base gives it, by name.
func setAttributes(s types.ServiceConfig) []string {
	var out []string
	add := func(set bool, name string) {
		if set {
			out = append(out, name)
		}
	}
	add(s.Image != "", "image")
	add(s.Command != nil, "command")
	add(s.Entrypoint != nil, "entrypoint")
	add(s.WorkingDir != "", "working_dir")
	add(s.User != "", "user")
	add(s.HealthCheck != nil, "healthcheck")
	add(s.CPUS != 0, "cpus")
	add(s.MemLimit != 0, "mem_limit")
	add(s.Hostname != "", "hostname")
	add(s.Build != nil && (s.Build.Context != "" && filepath.Base(s.Build.Context) != "environment"), "build")
	return out
}

// composeServices turns the task's compose project into the sidecars of
// its environment, building their images (cached per Benchmark, labelled)
// or using local ones, in dependency order. It returns nil for a task
// without a compose file.
func (b *Benchmark) composeServices(ctx context.Context, t benchmark.Task) (*docker.Services, error) {
	p, unsupported, err := loadCompose(ctx, t.Dir)
	if err != nil || p == nil {
		return nil, err
	}
	if len(unsupported) > 0 {
		return nil, fmt.Errorf("task %s: %s: attributes hoh does not run: %s", t.ID, composeFile(t.Dir), strings.Join(unsupported, ", "))
	}
	order, err := serviceOrder(p)
	if err != nil {
		return nil, fmt.Errorf("task %s: %s: %w", t.ID, composeFile(t.Dir), err)
	}
	wait := map[string]string{}
	for _, s := range p.Services {
		for dep, d := range s.DependsOn {
			switch d.Condition {
			case types.ServiceConditionHealthy:
				wait[dep] = "healthy"
			case types.ServiceConditionCompletedSuccessfully:
				if wait[dep] != "healthy" {
					wait[dep] = "completed"
				}
			}
		}
	}
	out := &docker.Services{MainAlias: mainService}
	for _, name := range order {
		s := p.Services[name]
		img, err := b.serviceImage(ctx, t, s)
		if err != nil {
			return nil, err
		}
		svc := docker.Service{
			Name: name, Image: img, WorkingDir: s.WorkingDir, User: s.User, Wait: wait[name],
			CPUs: float64(s.CPUS), MemoryMB: int64(s.MemLimit) >> 20,
		}
		if s.Entrypoint != nil {
			svc.Entrypoint = []string(s.Entrypoint)
		}
		if s.Command != nil {
			svc.Cmd = []string(s.Command)
		}
		for k, v := range s.Environment {
			if v != nil {
				svc.Env = append(svc.Env, k+"="+*v)
			}
		}
		sort.Strings(svc.Env)
		svc.Healthcheck = composeHealthConfig(s.HealthCheck)
		out.List = append(out.List, svc)
	}
	return out, nil
}

// composeMainEnv is the environment the task's compose file gives main.
func composeMainEnv(ctx context.Context, taskDir string) ([]string, error) {
	p, _, err := loadCompose(ctx, taskDir)
	if err != nil || p == nil {
		return nil, err
	}
	var env []string
	for k, v := range p.Services[mainService].Environment {
		if v != nil {
			env = append(env, k+"="+*v)
		}
	}
	sort.Strings(env)
	return env, nil
}

// serviceOrder is the sidecars (main excluded) with each after what it
// depends on; a cycle is an error.
func serviceOrder(p *types.Project) ([]string, error) {
	var names []string
	for n := range p.Services {
		if n != mainService {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	state := map[string]int{} // 1 visiting, 2 done
	var out []string
	var visit func(n string, path []string) error
	visit = func(n string, path []string) error {
		switch state[n] {
		case 1:
			return fmt.Errorf("depends_on cycle: %s", strings.Join(append(path, n), " -> "))
		case 2:
			return nil
		}
		state[n] = 1
		deps := make([]string, 0, len(p.Services[n].DependsOn))
		for d := range p.Services[n].DependsOn {
			if d == mainService {
				return fmt.Errorf("service %s depends on main, which Harbor starts last", n)
			}
			if _, ok := p.Services[d]; !ok {
				return fmt.Errorf("service %s depends on unknown service %s", n, d)
			}
			deps = append(deps, d)
		}
		sort.Strings(deps)
		for _, d := range deps {
			if err := visit(d, append(path, n)); err != nil {
				return err
			}
		}
		state[n] = 2
		out = append(out, n)
		return nil
	}
	for _, n := range names {
		if err := visit(n, nil); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// serviceImage builds a sidecar's build context once per Benchmark within
// environment.build_timeout_sec, or
// uses its image, pulled when it is not present locally.
func (b *Benchmark) serviceImage(ctx context.Context, t benchmark.Task, s types.ServiceConfig) (string, error) {
	if s.Build == nil {
		if err := b.ensureImage(ctx, fmt.Sprintf("task %s: compose service %s: image", t.ID, s.Name), s.Image, ""); err != nil {
			return "", &docker.InfraError{Stage: "service " + s.Name, Err: err}
		}
		return s.Image, nil
	}
	df := s.Build.Dockerfile
	if filepath.IsAbs(df) {
		if rel, err := filepath.Rel(s.Build.Context, df); err == nil {
			df = rel
		}
	}
	f, err := taskFile(t)
	if err != nil {
		return "", err
	}
	return b.buildOnce(ctx, t.Dir+"#"+s.Name, s.Build.Context, df, buildTimeout(f), fmt.Sprintf("task %s: compose service %s", t.ID, s.Name), "environment.build_timeout_sec")
}

func composeHealthConfig(h *types.HealthCheckConfig) *container.HealthConfig {
	if h == nil {
		return nil
	}
	if h.Disable {
		return &container.HealthConfig{Test: []string{"NONE"}}
	}
	hc := &container.HealthConfig{Test: []string(h.Test)}
	dur := func(d *types.Duration) time.Duration {
		if d == nil {
			return 0
		}
		return time.Duration(*d)
	}
	hc.Interval, hc.Timeout, hc.StartPeriod, hc.StartInterval = dur(h.Interval), dur(h.Timeout), dur(h.StartPeriod), dur(h.StartInterval)
	if h.Retries != nil {
		hc.Retries = int(*h.Retries)
	}
	return hc
}

// composeRefusals are the reasons a task's compose file cannot be run:
// the loader's error, attributes hoh does not honour, a bad depends_on.
func (l Loaded) composeRefusals() []Refusal {
	file := composeFile(l.Task.Dir)
	if file == "" {
		return nil
	}
	p, unsupported, err := loadCompose(context.Background(), l.Task.Dir)
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

// composeImagesAvailable makes the prebuilt images of the task's sidecars
// present locally, pulling those that are not.
func (b *Benchmark) composeImagesAvailable(ctx context.Context, l Loaded) error {
	p, _, err := loadCompose(ctx, l.Task.Dir)
	if err != nil || p == nil {
		return err
	}
	for _, name := range p.ServiceNames() {
		s := p.Services[name]
		if name == mainService || s.Build != nil {
			continue
		}
		if err := b.ensureImage(ctx, fmt.Sprintf("%s: services.%s.image", composeFile(l.Task.Dir), name), s.Image, "give the service a build context"); err != nil {
			return err
		}
	}
	return nil
}
