package docker

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"

	"github.com/docker/docker/client"
)

// Engine is what hoh needs to know of the engine behind the Docker API:
// Docker Engine and Podman's Docker-compatible service differ in what a
// rootless daemon, an old cgroup hierarchy or a storage driver allow.
type Engine struct {
	Podman        bool
	Version       string
	Rootless      bool
	CgroupVersion string // "1" or "2"; "" when not reported
	StorageDriver string
	// Limits: per-container memory, CPU and pids limits are enforced (a
	// rootless daemon on cgroup v1 has no cgroup of its own to set them in).
	Limits bool
}

// Name is the engine as doctor names it: "Docker Engine 26.1.5",
// "Podman 4.3.1 (rootless)".
func (e Engine) Name() string {
	n := "Docker Engine " + e.Version
	if e.Podman {
		n = "Podman " + e.Version
	}
	if e.Rootless {
		n += " (rootless)"
	}
	return n
}

// CanPause: the engine can freeze a container (the freezer cgroup), as a
// consistent commit needs; without it hoh stops the container's processes
// with SIGSTOP itself (freeze).
func (e Engine) CanPause() bool { return e.Limits }

// Lacks lists what the engine cannot do that hoh would otherwise use, and
// what hoh does instead.
func (e Engine) Lacks() []string {
	var out []string
	if !e.Limits {
		out = append(out, fmt.Sprintf("no per-container memory, CPU or pids limits (rootless on cgroup v%s): task limits and containers.pids_limit are not enforced", e.CgroupVersion))
	}
	if !e.CanPause() {
		out = append(out, "no pause: a checkpoint commit stops the container's processes with SIGSTOP instead")
	}
	if e.StorageDriver == "vfs" {
		out = append(out, "no storage-opt size on the vfs storage driver: task storage limits are not enforced")
	}
	if e.Podman {
		out = append(out, "health checks are not run by the engine (Podman runs them from systemd timers): hoh runs them itself")
	}
	return out
}

// DetectEngine asks the engine behind api what it is (/version, /info and,
// for Podman, its own /libpod/info, which says whether it is rootless).
func DetectEngine(ctx context.Context, api *client.Client) (Engine, error) {
	v, err := api.ServerVersion(ctx)
	if err != nil {
		return Engine{}, err
	}
	e := Engine{Version: v.Version}
	for _, c := range v.Components {
		if strings.Contains(c.Name, "Podman") {
			e.Podman, e.Version = true, c.Version
		}
	}
	info, err := api.Info(ctx)
	if err != nil {
		return Engine{}, err
	}
	e.CgroupVersion, e.StorageDriver = info.CgroupVersion, info.Driver
	for _, o := range info.SecurityOptions {
		if strings.Contains(o, "name=rootless") {
			e.Rootless = true
		}
	}
	if e.Podman {
		// Podman's Docker-compatible /info does not say rootless.
		var li struct {
			Host struct {
				Security struct {
					Rootless bool `json:"rootless"`
				} `json:"security"`
				CgroupVersion string `json:"cgroupVersion"`
			} `json:"host"`
		}
		if err := libpodGet(ctx, api, "/info", &li); err != nil {
			return Engine{}, fmt.Errorf("podman /libpod/info: %w", err)
		}
		e.Rootless = e.Rootless || li.Host.Security.Rootless
		if cv := strings.TrimPrefix(li.Host.CgroupVersion, "v"); cv != "" {
			e.CgroupVersion = cv
		}
	}
	e.Limits = !(e.Rootless && e.CgroupVersion == "1")
	return e, nil
}

// libpodGet reads Podman's own API (/v4.0.0/libpod/...) through the Docker
// client's connection.
func libpodGet(ctx context.Context, api *client.Client, path string, out any) error {
	resp, err := libpodDo(ctx, api, http.MethodGet, path)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %s", path, resp.Status)
	}
	return json.NewDecoder(resp.Body).Decode(out)
}

func libpodDo(ctx context.Context, api *client.Client, method, path string) (*http.Response, error) {
	host := "d" // a unix socket: the transport dials the socket whatever the host
	if u, err := url.Parse(api.DaemonHost()); err == nil && u.Scheme == "tcp" {
		host = u.Host
	}
	req, err := http.NewRequestWithContext(ctx, method, "http://"+host+"/v4.0.0/libpod"+path, nil)
	if err != nil {
		return nil, err
	}
	return api.HTTPClient().Do(req)
}

// Engine is the engine behind this client (asked once); when it cannot be
// asked, Docker Engine with limits is assumed.
func (c *Client) Engine(ctx context.Context) Engine {
	if e := c.engine.Load(); e != nil {
		return *e
	}
	e, err := DetectEngine(ctx, c.API)
	if err != nil {
		e = Engine{Limits: true}
	}
	c.engine.Store(&e)
	return e
}

// keepTag is a tag of this client's run for an image hoh builds or commits
// on Podman: Podman removes an untagged parent with the image removed
// (Docker keeps it when asked), and with it every container using it.
func (c *Client) keepTag() string {
	n := c.tagSeq.Add(1)
	t := strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' || r == '.' {
			return r
		}
		return '_'
	}, c.runID)
	if len(t) > 100 {
		t = t[len(t)-100:]
	}
	return fmt.Sprintf("hoh-keep:%s-%d", strings.TrimLeft(t, ".-"), n)
}

type engineCache struct {
	engine atomic.Pointer[Engine]
	tagSeq atomic.Int64
}
