package docker

import (
	"archive/tar"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/image"
	"github.com/docker/docker/api/types/mount"
	"github.com/docker/docker/api/types/versions"
	"github.com/docker/docker/client"
)

// Mount is a host path bind-mounted into the container.
type Mount struct {
	Host      string
	Container string
	ReadOnly  bool
}

// Spec describes one task container.
type Spec struct {
	// Image is a local image name or id. When empty, BuildDir is built.
	Image      string
	BuildDir   string
	Dockerfile string // relative to BuildDir; default Dockerfile

	CPUs     float64
	MemoryMB int64
	// Pids bounds the processes of the container (a fork bomb stops there,
	// not at the host's limit): 0 means DefaultPids, negative unlimited.
	Pids          int64
	StorageMB     int64 // only where the storage driver supports a size quota
	GPUs          int
	AllowInternet bool

	// Workspace is a host directory bind-mounted read-write at
	// WorkspacePath (default /workspace), so snapshots stay on the host.
	Workspace     string
	WorkspacePath string
	Mounts        []Mount
	Env           []string
	Name          string // container name; empty lets the engine choose
	Labels        map[string]string
	// Relay, when set, makes the model endpoint reachable inside the
	// container on 127.0.0.1:Relay.Port (see relay.go).
	Relay *RelaySpec
	// Services, when set, are sidecars started first on a network of the
	// environment's own (internal unless AllowInternet), which the task
	// container joins (services.go).
	Services *Services
	// Egress, when set, admits HTTP(S) to the listed hosts only, through a
	// host-side proxy; the container itself has no route out (egress.go).
	Egress *EgressSpec

	// KeepEntrypoint starts the image's own ENTRYPOINT (services a task's
	// image starts there keep running) with a keep-alive command in place
	// of CMD; otherwise the container runs only the keep-alive loop.
	KeepEntrypoint bool
	// Workdir is the container's working directory and the default of
	// every command's Dir; empty keeps the image's WORKDIR.
	Workdir string
	// User runs every command (not hoh's own helpers, which run as root);
	// empty keeps the image's USER.
	User string
	// Healthcheck replaces the image's HEALTHCHECK. Start waits until a
	// container with a health check (this one or the image's, when
	// KeepEntrypoint) is healthy.
	Healthcheck *container.HealthConfig
}

// Environment is one running task container.
type Environment struct {
	c         *Client
	ID        string
	ImageID   string
	builtHere bool
	spec      Spec
	relay     *hostRelay
	egress    *egressProxy
	// services are the sidecar containers; network the network they share
	// with the task container.
	services     []string
	serviceNames []string
	// snapshots are the sidecars' images committed with the task image
	// this environment started from (snapshot.go), by service name.
	snapshots   map[string]string
	network     string
	networkName string
	// Notes records limits that could not be applied (e.g. storage quota).
	Notes []string
}

// Start builds the image if needed, then creates and starts the container.
func (c *Client) Start(ctx context.Context, spec Spec) (*Environment, error) {
	env := &Environment{c: c, spec: spec}
	img := spec.Image
	if img == "" {
		if spec.BuildDir == "" {
			return nil, errors.New("docker: spec has neither Image nor BuildDir")
		}
		id, err := c.BuildImage(ctx, spec.BuildDir, spec.Dockerfile, "")
		if err != nil {
			return nil, &InfraError{Stage: "build", Err: err}
		}
		img, env.builtHere = id, true
	}
	env.ImageID = img
	if spec.WorkspacePath == "" {
		spec.WorkspacePath = "/workspace"
		env.spec.WorkspacePath = spec.WorkspacePath
	}
	if spec.Services != nil {
		if err := env.startServices(ctx); err != nil {
			env.Close(context.WithoutCancel(ctx))
			return nil, err
		}
	}
	if err := env.create(ctx, img, spec, true); err != nil {
		env.Close(context.WithoutCancel(ctx))
		return nil, err
	}
	if spec.Healthcheck != nil || spec.KeepEntrypoint {
		if err := env.waitHealthy(ctx); err != nil {
			env.Close(context.WithoutCancel(ctx))
			return nil, &InfraError{Stage: "healthcheck", Err: err}
		}
	}
	if spec.Relay != nil {
		if err := env.startRelay(ctx); err != nil {
			env.Close(context.WithoutCancel(ctx))
			return nil, &InfraError{Stage: "relay", Err: err}
		}
	}
	if spec.Egress != nil {
		if err := env.startEgressRelay(ctx); err != nil {
			env.Close(context.WithoutCancel(ctx))
			return nil, &InfraError{Stage: "egress proxy", Err: err}
		}
	}
	return env, nil
}

const keepAlive = "trap 'exit 0' TERM; while :; do sleep 3600 & wait $!; done"

// DefaultPids is the container process limit when Spec.Pids is 0: far above
// what a build or test suite starts, far below a fork bomb.
const DefaultPids = 4096

// AgentCapabilities are the only capabilities a task container keeps (all
// others, Docker's NET_RAW, MKNOD, SETFCAP, SETPCAP, SYS_CHROOT and
// AUDIT_WRITE among them, are dropped), and no-new-privileges is set, so no
// setuid binary or file capability raises a process above them. What each
// is for, as root in the container (a task's agent.user has none):
//   - CHOWN, DAC_OVERRIDE, FOWNER, FSETID: root owning and changing files of
//     other users, as package managers, builds and hoh's own helpers (giving
//     the workspace to agent.user, emptying the exchange) do;
//   - SETUID, SETGID: package managers and servers dropping to their own
//     users (apt's _apt, postgres, npm scripts);
//   - KILL: stopping processes started under those users;
//   - NET_BIND_SERVICE: task servers listening on ports below 1024.
//
// Raw sockets, device nodes, chroot, file capabilities and audit writes are
// nothing a build or test suite needs and everything an escape uses.
var AgentCapabilities = []string{"CHOWN", "DAC_OVERRIDE", "FOWNER", "FSETID", "SETUID", "SETGID", "KILL", "NET_BIND_SERVICE"}

func (env *Environment) create(ctx context.Context, img string, spec Spec, withStorage bool) error {
	c := env.c
	cfg := env.containerConfig(img, spec)
	// What the host roles' seccomp filter refuses is refused here too.
	profile, err := c.seccompOpt(ctx)
	if err != nil {
		return &InfraError{Stage: "seccomp profile", Err: err}
	}
	hc := &container.HostConfig{
		CapDrop: []string{"ALL"}, CapAdd: AgentCapabilities,
		SecurityOpt: []string{"no-new-privileges:true", profile},
		// No System V or POSIX IPC object of the host or another container.
		IpcMode: "private",
	}
	if !spec.AllowInternet {
		hc.NetworkMode = "none"
	}
	if spec.CPUs > 0 {
		hc.NanoCPUs = int64(spec.CPUs * 1e9)
	}
	pids := spec.Pids
	if pids == 0 {
		pids = DefaultPids
	}
	if pids > 0 {
		hc.PidsLimit = &pids
	}
	if spec.MemoryMB > 0 {
		hc.Memory = spec.MemoryMB << 20
		hc.MemorySwap = hc.Memory // no swap beyond the limit
	}
	if spec.StorageMB > 0 && withStorage {
		hc.StorageOpt = map[string]string{"size": fmt.Sprintf("%dM", spec.StorageMB)}
	}
	if spec.GPUs > 0 {
		hc.DeviceRequests = []container.DeviceRequest{{Count: spec.GPUs, Capabilities: [][]string{{"gpu"}}}}
	}
	if err := env.addMounts(hc, cfg, spec); err != nil {
		return err
	}
	nc := env.mainNetworking(hc)
	resp, err := c.API.ContainerCreate(ctx, cfg, hc, nc, nil, spec.Name)
	if err != nil {
		// overlay2 on ext4 has no size quota: run without it and say so.
		if withStorage && hc.StorageOpt != nil && strings.Contains(err.Error(), "storage-opt") {
			env.Notes = append(env.Notes, fmt.Sprintf("storage limit %d MB not enforced: %v", spec.StorageMB, err))
			return env.create(ctx, img, spec, false)
		}
		return &InfraError{Stage: "create", Err: err}
	}
	env.ID = resp.ID
	c.trackContainer(resp.ID, true)
	if eng := c.Engine(ctx); !eng.Limits && spec.Workdir != podmanRetryWorkdir {
		// Rootless on cgroup v1: the engine accepts the limits and sets none.
		env.Notes = append(env.Notes, fmt.Sprintf("memory (%d MB), CPU (%g) and process (%d) limits not enforced: %s has no cgroup for a rootless container on cgroup v%s",
			spec.MemoryMB, spec.CPUs, pids, eng.Name(), eng.CgroupVersion))
	}
	if err := c.API.ContainerStart(ctx, resp.ID, container.StartOptions{}); err != nil {
		if msg := err.Error(); spec.Workdir != podmanRetryWorkdir && c.Engine(ctx).Podman && strings.Contains(msg, "mkdir") && strings.Contains(msg, "file exists") {
			return env.startAtRoot(ctx, img, spec, withStorage)
		}
		return &InfraError{Stage: "start", Err: err}
	}
	return nil
}

// containerConfig is the container's configuration: img kept alive by a
// shell loop (work happens through exec), under the image's entrypoint if
// spec keeps it, with the healthcheck the engine's API accepts.
func (env *Environment) containerConfig(img string, spec Spec) *container.Config {
	c := env.c
	cfg := &container.Config{
		Image:  img,
		Env:    spec.Env,
		Labels: c.Labels(spec.Labels),
		// Keep the container alive; work happens through exec.
		Entrypoint:  []string{"/bin/sh", "-c"},
		Cmd:         []string{keepAlive},
		WorkingDir:  spec.Workdir,
		Healthcheck: spec.Healthcheck,
	}
	if spec.KeepEntrypoint {
		// The image's ENTRYPOINT runs with the loop as its arguments (the
		// usual entrypoint ends in exec "$@").
		cfg.Entrypoint, cfg.Cmd = nil, []string{"/bin/sh", "-c", keepAlive}
	}
	if h := spec.Healthcheck; h != nil && h.StartInterval != 0 && versions.LessThan(c.API.ClientVersion(), "1.44") {
		// Older engines reject it; the start period is then checked at the
		// interval.
		hc := *h
		hc.StartInterval = 0
		cfg.Healthcheck = &hc
		env.Notes = append(env.Notes, fmt.Sprintf("healthcheck start interval %s not applied: the Docker engine's API %s predates 1.44 (the interval applies during the start period too)", h.StartInterval, c.API.ClientVersion()))
	}
	return cfg
}

// addMounts bind-mounts the workspace and spec's mounts into hc, and the
// relay's and egress proxy's files when spec uses them (the proxy's
// environment added to cfg).
func (env *Environment) addMounts(hc *container.HostConfig, cfg *container.Config, spec Spec) error {
	if spec.Workspace != "" {
		abs, err := filepath.Abs(spec.Workspace)
		if err != nil {
			return err
		}
		hc.Mounts = append(hc.Mounts, bindMount(abs, spec.WorkspacePath, false))
	}
	for _, m := range spec.Mounts {
		hc.Mounts = append(hc.Mounts, bindMount(m.Host, m.Container, m.ReadOnly))
	}
	if spec.Relay != nil {
		rm, err := env.relayMounts()
		if err != nil {
			return &InfraError{Stage: "relay", Err: err}
		}
		hc.Mounts = append(hc.Mounts, rm...)
	}
	if spec.Egress != nil {
		em, err := env.egressMounts()
		if err != nil {
			return &InfraError{Stage: "egress proxy", Err: err}
		}
		hc.Mounts = append(hc.Mounts, em...)
		cfg.Env = append(append([]string(nil), cfg.Env...), env.egressEnv()...)
	}
	return nil
}

// podmanRetryWorkdir is the working directory of startAtRoot's container.
const podmanRetryWorkdir = "/"

// startAtRoot starts, on Podman, a container whose working directory is a
// link dangling outside the container (a committed checkpoint's workspace
// link to the agent's exchange mount). Podman's runtime refuses to enter it;
// Docker creates the link's target. So the container starts in / and the
// link gives way to an empty directory, as the agent container's setup
// then replaces it, and commands still default to that directory.
func (env *Environment) startAtRoot(ctx context.Context, img string, spec Spec, withStorage bool) error {
	c := env.c
	wd := spec.Workdir
	if wd == "" {
		ic, err := c.ImageConfig(ctx, img)
		if err != nil {
			return err
		}
		wd = ic.WorkingDir
	}
	if err := c.API.ContainerRemove(ctx, env.ID, container.RemoveOptions{Force: true}); err != nil && !isNotFound(err) {
		return &InfraError{Stage: "start", Err: err}
	}
	c.trackContainer(env.ID, false)
	env.ID = ""
	spec.Workdir = podmanRetryWorkdir
	if err := env.create(ctx, img, spec, withStorage); err != nil {
		return err
	}
	if _, err := env.quickExec(ctx, "/bin/sh", "-c", `if [ -L "$1" ] && [ ! -e "$1" ]; then rm -f "$1"; fi; mkdir -p "$1"`, "hoh-workdir", wd); err != nil {
		return &InfraError{Stage: "start", Err: fmt.Errorf("working directory %s: %w", wd, err)}
	}
	env.spec.Workdir = wd
	return nil
}

// WorkspacePath is the container path of the bind-mounted workspace.
func (env *Environment) WorkspacePath() string { return env.spec.WorkspacePath }

// State reports the container's current state.
func (env *Environment) State(ctx context.Context) (*container.State, error) {
	ins, err := env.c.API.ContainerInspect(ctx, env.ID)
	if err != nil {
		return nil, err
	}
	return ins.State, nil
}

// Kill stops the container at once (used when a process tree cannot be
// killed any other way, and by tests simulating a dying container).
func (env *Environment) Kill(ctx context.Context) error {
	return env.c.API.ContainerKill(ctx, env.ID, "KILL")
}

// Close removes the container, stops the relay, and removes the image if
// this environment built it (unless the client keeps images).
func (env *Environment) Close(ctx context.Context) error {
	var first error
	if env.relay != nil {
		env.relay.Close()
	}
	if env.egress != nil {
		env.egress.Close()
	}
	if env.ID != "" {
		err := env.c.API.ContainerRemove(ctx, env.ID, container.RemoveOptions{Force: true, RemoveVolumes: true})
		if err != nil && !client.IsErrNotFound(err) {
			first = err
		}
		env.c.trackContainer(env.ID, false)
	}
	if err := env.closeServices(ctx); err != nil && first == nil {
		first = err
	}
	if env.builtHere && !env.c.keepImages {
		_, err := env.c.API.ImageRemove(ctx, env.ImageID, image.RemoveOptions{Force: true, PruneChildren: true})
		if err != nil && !client.IsErrNotFound(err) && first == nil {
			first = err
		}
		env.c.trackImage(env.ImageID, false)
	}
	return first
}

// CopyIn copies the host file or directory src into the container directory
// dstDir (created if missing), keeping src's base name.
func (env *Environment) CopyIn(ctx context.Context, src, dstDir string) error {
	if _, err := env.ExecutorAs("0").Run(ctx, simple("mkdir", "-p", dstDir)); err != nil {
		return err
	}
	pr, pw := io.Pipe()
	go func() {
		pw.CloseWithError(tarDir(pw, src, filepath.Base(src)))
	}()
	err := env.c.API.CopyToContainer(ctx, env.ID, dstDir, pr, container.CopyToContainerOptions{})
	pr.CloseWithError(err)
	if err != nil {
		return fmt.Errorf("copy %s into container %s:%s: %w", src, short(env.ID), dstDir, err)
	}
	return nil
}

// CopyOut copies the container file or directory src into the host
// directory dstDir, keeping src's base name. Symlinks are recreated (a
// workspace's own); special files are skipped; nothing is written through
// a link.
func (env *Environment) CopyOut(ctx context.Context, src, dstDir string) error {
	return env.copyOut(ctx, src, dstDir, true)
}

// CopyOutFiles is CopyOut for outputs hoh reads or keeps as records (a
// verifier's logs): only directories and regular files are copied, each
// symlink is replaced by a note, so no host path is read or kept through
// a link left in the container.
func (env *Environment) CopyOutFiles(ctx context.Context, src, dstDir string) error {
	return env.copyOut(ctx, src, dstDir, false)
}

func (env *Environment) copyOut(ctx context.Context, src, dstDir string, links bool) error {
	rc, _, err := env.c.API.CopyFromContainer(ctx, env.ID, src)
	if err != nil {
		return fmt.Errorf("copy %s out of container %s: %w", src, short(env.ID), err)
	}
	defer rc.Close()
	return untarLinks(rc, dstDir, links)
}

// ReadFile returns a file's contents from the container; os.ErrNotExist
// (wrapped) when it does not exist.
func (env *Environment) ReadFile(ctx context.Context, p string) ([]byte, error) {
	rc, st, err := env.c.API.CopyFromContainer(ctx, env.ID, p)
	if err != nil {
		if isNotFound(err) {
			return nil, fmt.Errorf("%s: %w", p, os.ErrNotExist)
		}
		return nil, err
	}
	defer rc.Close()
	if st.Mode.IsDir() {
		return nil, fmt.Errorf("%s is a directory", p)
	}
	tr := tar.NewReader(rc)
	if _, err := tr.Next(); err != nil {
		return nil, err
	}
	return io.ReadAll(tr)
}

func untar(r io.Reader, dstDir string) error { return untarLinks(r, dstDir, true) }

// untarLinks extracts r into dstDir; links says whether symlinks are
// recreated (else each becomes a note). No entry is written through a
// symlink: a link an archive made earlier cannot lead a later file out.
func untarLinks(r io.Reader, dstDir string, links bool) error {
	tr := tar.NewReader(r)
	root, err := filepath.Abs(dstDir)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(root, 0o755); err != nil {
		return err
	}
	for {
		hdr, err := tr.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		name := path.Clean("/" + hdr.Name)
		target := filepath.Join(root, filepath.FromSlash(name))
		if !strings.HasPrefix(target, root) {
			return fmt.Errorf("tar entry %q escapes %s", hdr.Name, dstDir)
		}
		// An entry under a link or file (no archive of a real tree has
		// one) is skipped: nothing is written through a link.
		if err := mkdirNoFollow(root, filepath.Dir(target)); errors.Is(err, errNotDir) {
			continue
		} else if err != nil {
			return fmt.Errorf("tar entry %q: %w", hdr.Name, err)
		}
		switch hdr.Typeflag {
		case tar.TypeDir:
			if err := mkdirNoFollow(root, target); err != nil && !errors.Is(err, errNotDir) {
				return fmt.Errorf("tar entry %q: %w", hdr.Name, err)
			}
		case tar.TypeReg:
			if err := writeNoFollow(target, tr, os.FileMode(hdr.Mode)&0o777|0o600); err != nil {
				return err
			}
		case tar.TypeSymlink:
			_ = os.Remove(target)
			if !links {
				note := fmt.Sprintf("hoh: this was a symbolic link to %q in the container; hoh keeps no link from there.\n", hdr.Linkname)
				if err := writeNoFollow(target, strings.NewReader(note), 0o644); err != nil {
					return err
				}
				continue
			}
			if err := os.Symlink(hdr.Linkname, target); err != nil {
				return err
			}
		}
	}
}

var errNotDir = errors.New("not a directory (a link is not followed)")

// mkdirNoFollow creates dir (under root) and its parents, refusing any
// existing component that is not a directory (a symlink included).
func mkdirNoFollow(root, dir string) error {
	rel, err := filepath.Rel(root, dir)
	if err != nil || rel == "." {
		return err
	}
	cur := root
	for _, part := range strings.Split(rel, string(filepath.Separator)) {
		cur = filepath.Join(cur, part)
		fi, err := os.Lstat(cur)
		switch {
		case os.IsNotExist(err):
			if err := os.Mkdir(cur, 0o755); err != nil && !os.IsExist(err) {
				return err
			}
		case err != nil:
			return err
		case !fi.IsDir():
			return fmt.Errorf("%s: %w", cur, errNotDir)
		}
	}
	return nil
}

// writeNoFollow writes a new regular file at target, replacing a file or
// link there, never writing through a link.
func writeNoFollow(target string, r io.Reader, mode os.FileMode) error {
	if fi, err := os.Lstat(target); err == nil && !fi.IsDir() {
		if err := os.Remove(target); err != nil {
			return err
		}
	}
	f, err := os.OpenFile(target, os.O_CREATE|os.O_WRONLY|os.O_EXCL|syscall.O_NOFOLLOW, mode)
	if err != nil {
		return err
	}
	_, err = io.Copy(f, r)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

func short(id string) string {
	if len(id) > 12 {
		return id[:12]
	}
	return id
}

func simple(args ...string) sandboxCommand {
	return sandboxCommand{Args: args, WallTimeout: time.Minute}
}

type mountSpec = mount.Mount

func bindMount(host, ctr string, ro bool) mount.Mount {
	return mount.Mount{Type: mount.TypeBind, Source: host, Target: ctr, ReadOnly: ro}
}

func isNotFound(err error) bool {
	return client.IsErrNotFound(err) || strings.Contains(err.Error(), "No such") || strings.Contains(err.Error(), "Could not find")
}
