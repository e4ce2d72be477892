package docker

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"strings"
	"time"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/filters"
	"github.com/docker/docker/api/types/network"
	"github.com/docker/docker/client"
)

// Service is one sidecar container of a multi-container environment (a
// Compose service other than the task container), started before the task
// container on the environment's own network.
type Service struct {
	// Name is the service name: its DNS name on the network.
	Name  string
	Image string
	// Entrypoint and Cmd replace the image's when not nil.
	Entrypoint []string
	Cmd        []string
	Env        []string
	WorkingDir string
	User       string
	// Healthcheck replaces the image's HEALTHCHECK when not nil.
	Healthcheck *container.HealthConfig
	CPUs        float64
	MemoryMB    int64
	// Wait is what the task container waits for before it starts:
	// "healthy", "completed" (exited 0) or "" (started).
	Wait string
}

// Services are the sidecars of an environment, in start order (each after
// the services it depends on).
type Services struct {
	// MainAlias is the task container's name on the network (Compose's
	// service name for it; Harbor calls it "main").
	MainAlias string
	List      []Service
	// StartTimeout bounds the wait for every service's condition; default
	// DefaultServiceStartTimeout.
	StartTimeout time.Duration
}

// DefaultServiceStartTimeout bounds how long sidecars may take to become
// healthy (Compose itself waits without a bound; a task must not hang).
const DefaultServiceStartTimeout = 5 * time.Minute

// LabelService names the Compose service a sidecar container runs.
const LabelService = "hoh.service"

// startServices creates the environment's network (internal unless the
// task may reach the internet) and starts every sidecar on it, waiting for
// each one's condition. On error the caller closes the environment, which
// removes what was created.
func (env *Environment) startServices(ctx context.Context) error {
	c, s := env.c, env.spec.Services
	suffix := make([]byte, 6)
	_, _ = rand.Read(suffix)
	name := "hoh-net-" + hex.EncodeToString(suffix)
	resp, err := c.API.NetworkCreate(ctx, name, network.CreateOptions{
		Driver: "bridge", Internal: !env.spec.AllowInternet, Labels: c.Labels(env.spec.Labels),
	})
	if err != nil {
		return &InfraError{Stage: "network", Err: err}
	}
	env.network = resp.ID
	env.networkName = name
	if env.snapshots, err = c.serviceSnapshots(ctx, env.ImageID); err != nil {
		return &InfraError{Stage: "service snapshots", Err: err}
	}
	timeout := s.StartTimeout
	if timeout <= 0 {
		timeout = DefaultServiceStartTimeout
	}
	wctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	for _, svc := range s.List {
		id, err := env.startService(wctx, svc)
		if err != nil {
			return &InfraError{Stage: "service " + svc.Name, Err: err}
		}
		if err := env.waitService(wctx, svc, id); err != nil {
			return &InfraError{Stage: "service " + svc.Name, Err: err}
		}
	}
	return nil
}

func (env *Environment) startService(ctx context.Context, svc Service) (string, error) {
	c := env.c
	labels := map[string]string{LabelService: svc.Name}
	for k, v := range env.spec.Labels {
		labels[k] = v
	}
	img := svc.Image
	if snap, ok := env.snapshots[svc.Name]; ok {
		img = snap // the state the sidecar had when the task image was committed
	}
	cfg := &container.Config{
		Image: img, Env: svc.Env, WorkingDir: svc.WorkingDir, User: svc.User,
		Labels: c.Labels(labels), Healthcheck: svc.Healthcheck, Hostname: svc.Name,
	}
	if svc.Entrypoint != nil {
		cfg.Entrypoint = svc.Entrypoint
	}
	if svc.Cmd != nil {
		cfg.Cmd = svc.Cmd
	}
	hc := &container.HostConfig{NetworkMode: container.NetworkMode(env.networkName)}
	pids := int64(DefaultPids)
	hc.PidsLimit = &pids
	if svc.CPUs > 0 {
		hc.NanoCPUs = int64(svc.CPUs * 1e9)
	}
	if svc.MemoryMB > 0 {
		hc.Memory = svc.MemoryMB << 20
		hc.MemorySwap = hc.Memory
	}
	nc := &network.NetworkingConfig{EndpointsConfig: map[string]*network.EndpointSettings{
		env.networkName: {Aliases: []string{svc.Name}},
	}}
	resp, err := c.API.ContainerCreate(ctx, cfg, hc, nc, nil, "")
	if err != nil {
		return "", err
	}
	env.services = append(env.services, resp.ID)
	env.serviceNames = append(env.serviceNames, svc.Name)
	c.trackContainer(resp.ID, true)
	if err := c.API.ContainerStart(ctx, resp.ID, container.StartOptions{}); err != nil {
		return "", err
	}
	return resp.ID, nil
}

// waitService waits for svc's condition, failing fast when the service
// exits early or turns unhealthy.
func (env *Environment) waitService(ctx context.Context, svc Service, id string) error {
	var lastRun time.Time
	for {
		ins, err := env.c.API.ContainerInspect(ctx, id)
		if err != nil {
			return err
		}
		if svc.Wait == "healthy" {
			if ran, err := env.c.runHealthcheckDue(ctx, ins, &lastRun); err != nil {
				return err
			} else if ran {
				continue
			}
		}
		st := ins.State
		switch {
		case svc.Wait == "completed" && !st.Running:
			if st.ExitCode != 0 {
				return fmt.Errorf("exited with status %d (service_completed_successfully required)%s", st.ExitCode, env.serviceLogs(ctx, id))
			}
			return nil
		case !st.Running && svc.Wait != "completed":
			return fmt.Errorf("exited with status %d before the task container started%s", st.ExitCode, env.serviceLogs(ctx, id))
		case svc.Wait == "":
			return nil
		case svc.Wait == "healthy":
			if st.Health == nil {
				return fmt.Errorf("service_healthy required but the service has no healthcheck")
			}
			switch st.Health.Status {
			case container.Healthy:
				return nil
			case container.Unhealthy:
				return fmt.Errorf("unhealthy: %s", lastProbe(st.Health))
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("not %s in time: %w", orStarted(svc.Wait), ctx.Err())
		case <-time.After(200 * time.Millisecond):
		}
	}
}

func orStarted(w string) string {
	if w == "" {
		return "started"
	}
	return w
}

func lastProbe(h *container.Health) string {
	if h == nil || len(h.Log) == 0 {
		return "no probe output"
	}
	l := h.Log[len(h.Log)-1]
	return fmt.Sprintf("last probe exit %d: %s", l.ExitCode, strings.TrimSpace(tail(l.Output, 500)))
}

// serviceLogs is the tail of a sidecar's output, for the error message.
func (env *Environment) serviceLogs(ctx context.Context, id string) string {
	rc, err := env.c.API.ContainerLogs(ctx, id, container.LogsOptions{ShowStdout: true, ShowStderr: true, Tail: "20"})
	if err != nil {
		return ""
	}
	defer rc.Close()
	var b strings.Builder
	buf := make([]byte, 4096)
	for b.Len() < 4096 {
		n, err := rc.Read(buf)
		b.Write(buf[:n])
		if err != nil {
			break
		}
	}
	if s := strings.TrimSpace(b.String()); s != "" {
		return ": " + s
	}
	return ""
}

// mainNetworking attaches the task container to the services' network
// under its alias.
func (env *Environment) mainNetworking(hc *container.HostConfig) *network.NetworkingConfig {
	if env.networkName == "" {
		return nil
	}
	hc.NetworkMode = container.NetworkMode(env.networkName)
	alias := env.spec.Services.MainAlias
	if alias == "" {
		alias = "main"
	}
	return &network.NetworkingConfig{EndpointsConfig: map[string]*network.EndpointSettings{
		env.networkName: {Aliases: []string{alias}},
	}}
}

// closeServices removes the sidecars and the network.
func (env *Environment) closeServices(ctx context.Context) error {
	var first error
	for _, id := range env.services {
		err := env.c.API.ContainerRemove(ctx, id, container.RemoveOptions{Force: true, RemoveVolumes: true})
		if err != nil && !client.IsErrNotFound(err) && first == nil {
			first = err
		}
		env.c.trackContainer(id, false)
	}
	env.services, env.serviceNames = nil, nil
	if env.network != "" {
		if err := env.c.API.NetworkRemove(ctx, env.network); err != nil && !client.IsErrNotFound(err) && first == nil {
			first = err
		}
		env.network, env.networkName = "", ""
	}
	return first
}

// removeRunNetworks removes the networks labelled with runID (after their
// containers are gone).
func removeRunNetworks(ctx context.Context, api *client.Client, runID string) error {
	nets, err := api.NetworkList(ctx, network.ListOptions{Filters: filters.NewArgs(filters.Arg("label", LabelRun+"="+runID))})
	if err != nil {
		return err
	}
	var first error
	for _, n := range nets {
		if err := api.NetworkRemove(ctx, n.ID); err != nil && !client.IsErrNotFound(err) && first == nil {
			first = err
		}
	}
	return first
}
