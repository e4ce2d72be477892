package docker

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/image"
)

// DefaultPath is the PATH Docker gives a container whose image sets none.
const DefaultPath = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

// ImageConfig is the image's own configuration (ENTRYPOINT, CMD, ENV,
// WORKDIR, USER, HEALTHCHECK).
func (c *Client) ImageConfig(ctx context.Context, img string) (*container.Config, error) {
	ins, err := c.API.ImageInspect(ctx, img)
	if err != nil {
		return nil, &InfraError{Stage: "image inspect", Err: err}
	}
	if ins.Config == nil {
		return &container.Config{}, nil
	}
	return &container.Config{
		Env: ins.Config.Env, Entrypoint: ins.Config.Entrypoint, Cmd: ins.Config.Cmd,
		WorkingDir: ins.Config.WorkingDir, User: ins.Config.User, Healthcheck: ins.Config.Healthcheck,
	}, nil
}

// EnvValue is KEY's value in a KEY=VALUE list, and whether it is set.
func EnvValue(env []string, key string) (string, bool) {
	for i := len(env) - 1; i >= 0; i-- {
		if k, v, ok := strings.Cut(env[i], "="); ok && k == key {
			return v, true
		}
	}
	return "", false
}

// Commit saves the container's whole file system (not its bind mounts, not
// its processes) as a new image labelled with this client's run and
// labels, and returns the image id. The image keeps the configuration of
// the image the container started from: the keep-alive command, hoh's PATH
// and the values of Spec.Env (host secrets among them) are not written
// into it; Spec.Env's keys are kept empty, to be set again when a container
// starts from the image.
func (env *Environment) Commit(ctx context.Context, labels map[string]string) (string, error) {
	orig, err := env.c.ImageConfig(ctx, env.ImageID)
	if err != nil {
		return "", err
	}
	cfg := &container.Config{
		Env: append([]string(nil), orig.Env...), Entrypoint: orig.Entrypoint, Cmd: orig.Cmd,
		WorkingDir: orig.WorkingDir, User: orig.User, Healthcheck: orig.Healthcheck,
		Labels: env.c.Labels(withCommitted(labels)),
	}
	// The engine adds every container variable the new config lacks.
	for _, kv := range env.spec.Env {
		k, _, _ := strings.Cut(kv, "=")
		if _, ok := EnvValue(cfg.Env, k); ok {
			continue
		}
		v := ""
		if k == "PATH" {
			v = DefaultPath
		}
		cfg.Env = append(cfg.Env, k+"="+v)
	}
	if len(cfg.Entrypoint) == 0 && len(cfg.Cmd) == 0 {
		// Empty would inherit the container's keep-alive command.
		cfg.Cmd = []string{"/bin/sh"}
	}
	id, err := env.c.commit(ctx, env.ID, cfg, true)
	if err != nil {
		return "", &InfraError{Stage: "commit", Err: err}
	}
	if err := env.commitServices(ctx, id); err != nil {
		_ = env.c.RemoveImage(context.WithoutCancel(ctx), id)
		return "", err
	}
	return id, nil
}

// commit commits container id with configuration cfg (paused when pause)
// and returns the image id ("sha256:..."). Docker applies cfg; Podman's
// Docker-compatible commit ignores it (the image would keep the container's
// keep-alive command, its environment values and no labels) and its pause,
// so there cfg goes as Dockerfile changes, one per value (Podman takes the
// rest of the line as the value, unquoted), and hoh freezes the container.
func (c *Client) commit(ctx context.Context, id string, cfg *container.Config, pause bool) (img string, err error) {
	eng := c.Engine(ctx)
	opts := container.CommitOptions{Pause: pause, Config: cfg}
	if pause && (eng.Podman || !eng.CanPause()) {
		var thaw func() error
		if thaw, err = c.freeze(ctx, id); err != nil {
			return "", err
		}
		defer func() {
			if terr := thaw(); terr != nil && err == nil {
				err = terr
			}
		}()
		opts.Pause = false
	}
	if eng.Podman {
		// An empty body is refused ("Decode(): EOF"), any is ignored.
		opts.Config, opts.Changes, opts.Reference = &container.Config{}, podmanChanges(cfg), c.keepTag()
	}
	resp, err := c.API.ContainerCommit(ctx, id, opts)
	if err != nil {
		return "", err
	}
	img = resp.ID
	if !strings.HasPrefix(img, "sha256:") {
		img = "sha256:" + img // Podman answers the bare hex id
	}
	c.trackImage(img, true)
	return img, nil
}

// podmanChanges is cfg as commit changes for Podman.
func podmanChanges(cfg *container.Config) []string {
	var ch []string
	for k, v := range cfg.Labels {
		ch = append(ch, "LABEL "+k+"="+v)
	}
	for _, kv := range cfg.Env {
		ch = append(ch, "ENV "+kv)
	}
	js := func(l []string) string {
		if l == nil {
			l = []string{}
		}
		b, _ := json.Marshal(l)
		return string(b)
	}
	ch = append(ch, "ENTRYPOINT "+js(cfg.Entrypoint), "CMD "+js(cfg.Cmd))
	wd := cfg.WorkingDir
	if wd == "" {
		wd = "/"
	}
	ch = append(ch, "WORKDIR "+wd)
	if cfg.User != "" {
		ch = append(ch, "USER "+cfg.User)
	}
	return ch
}

// freezeScript sends $1 (STOP or CONT) to every process of the container but
// PID 1 (its init, which the kernel shields from its own namespace) and
// the helper itself.
const freezeScript = `for d in /proc/[0-9]*; do p=${d#/proc/}; [ "$p" = 1 ] || [ "$p" = $$ ] || kill -"$1" "$p" 2>/dev/null; done; true`

// freeze stops every process in container id while it is committed: with
// the engine's pause when it can, else by SIGSTOP (a rootless engine on
// cgroup v1 has no freezer). thaw continues them.
func (c *Client) freeze(ctx context.Context, id string) (thaw func() error, err error) {
	if c.Engine(ctx).CanPause() {
		if err := c.API.ContainerPause(ctx, id); err != nil {
			return nil, fmt.Errorf("pausing %s: %w", short(id), err)
		}
		return func() error { return c.API.ContainerUnpause(context.WithoutCancel(ctx), id) }, nil
	}
	env := &Environment{c: c, ID: id}
	if _, err := env.quickExec(ctx, "/bin/sh", "-c", freezeScript, "hoh-freeze", "STOP"); err != nil {
		return nil, fmt.Errorf("stopping the processes of %s (the engine cannot pause): %w", short(id), err)
	}
	return func() error {
		if _, err := env.quickExec(context.WithoutCancel(ctx), "/bin/sh", "-c", freezeScript, "hoh-freeze", "CONT"); err != nil {
			return fmt.Errorf("continuing the processes of %s: %w", short(id), err)
		}
		return nil
	}, nil
}

// waitHealthy waits until the container's health check (if it has one)
// reports healthy; unhealthy, or the container stopping, is an error. The
// engine runs the check with the Docker HEALTHCHECK semantics (start
// period, interval, timeout, retries).
func (env *Environment) waitHealthy(ctx context.Context) error {
	var lastRun time.Time
	for {
		ins, err := env.c.API.ContainerInspect(ctx, env.ID)
		if err != nil {
			return err
		}
		if done, err := healthy(env.ID, ins.State); done || err != nil {
			return err
		}
		if ran, err := env.c.runHealthcheckDue(ctx, ins, &lastRun); ran || err != nil {
			if err != nil {
				return err
			}
			continue
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("waiting for container %s to be healthy: %w", short(env.ID), ctx.Err())
		case <-time.After(250 * time.Millisecond):
		}
	}
}

// healthInterval is the time between checks (Docker's default 30 s).
func healthInterval(h *container.HealthConfig) time.Duration {
	if h == nil || h.Interval <= 0 {
		return 30 * time.Second
	}
	return h.Interval
}

// runHealthcheckDue runs, on Podman, the health check of the container
// inspected as ins when its interval has passed since *last, and says
// whether it ran. Podman runs checks from systemd timers, absent in most
// containers and CI machines; its own API (podman healthcheck run) records
// the result in the container's health status as the timer would.
func (c *Client) runHealthcheckDue(ctx context.Context, ins container.InspectResponse, last *time.Time) (bool, error) {
	if !c.Engine(ctx).Podman || ins.Config == nil || ins.Config.Healthcheck == nil || time.Since(*last) < healthInterval(ins.Config.Healthcheck) {
		return false, nil
	}
	*last = time.Now()
	resp, err := libpodDo(ctx, c.API, http.MethodGet, "/containers/"+ins.ID+"/healthcheck")
	if err != nil {
		return true, fmt.Errorf("running the health check of %s: %w", short(ins.ID), err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 500))
		return true, fmt.Errorf("running the health check of %s: %s: %s", short(ins.ID), resp.Status, strings.TrimSpace(string(b)))
	}
	return true, nil
}

// healthy says whether a container in state st is ready (no health check,
// or healthy), or why it never will be. Docker reports no health check as
// no Health at all; Podman's Docker-compatible API as an empty status.
func healthy(id string, st *container.State) (bool, error) {
	if st == nil || !st.Running {
		return false, fmt.Errorf("container %s stopped before it was healthy: %s", short(id), describeState(st))
	}
	if st.Health == nil || st.Health.Status == "" || st.Health.Status == container.NoHealthcheck || st.Health.Status == container.Healthy {
		return true, nil
	}
	if st.Health.Status == container.Unhealthy {
		last := ""
		if n := len(st.Health.Log); n > 0 {
			l := st.Health.Log[n-1]
			last = fmt.Sprintf(" (last check: exit %d, %q)", l.ExitCode, tail(strings.TrimSpace(l.Output), 500))
		}
		return false, fmt.Errorf("container %s is unhealthy after %d failed check(s)%s", short(id), st.Health.FailingStreak, last)
	}
	return false, nil
}

func describeState(st *container.State) string {
	if st == nil {
		return "no state"
	}
	return fmt.Sprintf("status %s, exit %d, error %q", st.Status, st.ExitCode, st.Error)
}

// CopyContentsIn copies the contents of host directory src into the
// container directory dst (created; files owned by root).
func (env *Environment) CopyContentsIn(ctx context.Context, src, dst string) error {
	if _, err := env.quickExec(ctx, "mkdir", "-p", dst); err != nil {
		return err
	}
	var buf bytes.Buffer
	if err := tarDir(&buf, src, ""); err != nil {
		return fmt.Errorf("copy %s: %w", src, err)
	}
	if err := env.c.API.CopyToContainer(ctx, env.ID, dst, io.Reader(&buf), container.CopyToContainerOptions{}); err != nil {
		return fmt.Errorf("copy %s into container %s:%s: %w", src, short(env.ID), dst, err)
	}
	return nil
}

// RemoveImage removes an image this client made (a checkpoint), with the
// snapshots of its sidecars.
func (c *Client) RemoveImage(ctx context.Context, id string) error {
	if err := c.removeSnapshots(ctx, id); err != nil {
		return err
	}
	// Not PruneChildren: the parent is the task image, still in use.
	_, err := c.API.ImageRemove(ctx, id, image.RemoveOptions{Force: true})
	if err != nil && !isNotFound(err) {
		return err
	}
	c.trackImage(id, false)
	return nil
}

// LabelCommitted marks an image Commit made: its parent is the image the
// container started from, which removing it must not prune.
const LabelCommitted = "hoh.committed"

func withCommitted(labels map[string]string) map[string]string {
	out := map[string]string{LabelCommitted: "1"}
	for k, v := range labels {
		out[k] = v
	}
	return out
}
