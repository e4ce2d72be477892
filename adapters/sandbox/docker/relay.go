package docker

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"github.com/docker/docker/api/types/container"

	"github.com/hoh-research/hoh/internal/splice"
)

// The model relay for containers without a network. hoh listens on a unix
// socket in a host directory bind-mounted into the container; the static
// hoh-relay binary (cmd/hoh-relay, mounted read-only) listens on
// 127.0.0.1:Port inside the container and forwards to that socket; hoh
// forwards each connection to Target and to nothing else. No bridge address
// or host port is involved.

// Container paths of the relay's socket directory and binary.
const (
	RelaySocketDir = "/run/hoh-relay"
	RelayBinPath   = "/run/hoh-bin/hoh-relay"
)

// RelaySpec configures the model relay of one container.
type RelaySpec struct {
	Target string // host address of the model endpoint, e.g. 127.0.0.1:8080
	Port   int    // in-container loopback port; default 18080
	Binary string // host path of a static hoh-relay binary (BuildRelayBinary)
}

type hostRelay struct {
	dir  string
	ln   net.Listener
	wg   sync.WaitGroup
	once sync.Once
}

func (r *hostRelay) Close() {
	r.once.Do(func() {
		r.ln.Close()
		os.RemoveAll(r.dir)
	})
}

func (r *hostRelay) serve(target string) {
	splice.Each(r.ln, func() (net.Conn, error) { return net.DialTimeout("tcp", target, 10*time.Second) }, nil)
}

// RelayTempPrefix starts the names of the host relay's temporary
// directories of run runID.
func RelayTempPrefix(runID string) string { return "hoh-relay-" + runID + "-" }

// RelayTempDirs lists the host relay directories run runID left in the
// temporary directory.
func RelayTempDirs(runID string) []string {
	dirs, _ := filepath.Glob(filepath.Join(os.TempDir(), RelayTempPrefix(runID)+"*"))
	return dirs
}

func (env *Environment) relayMounts() ([]mountSpec, error) {
	rs := env.spec.Relay
	if rs.Target == "" || rs.Binary == "" {
		return nil, errors.New("relay needs Target and Binary")
	}
	if _, err := os.Stat(rs.Binary); err != nil {
		return nil, fmt.Errorf("relay binary: %w (build it with BuildRelayBinary)", err)
	}
	if env.relay == nil {
		// Short path: unix socket paths are limited to ~108 bytes.
		// Named after the run, so a later run can remove what a killed
		// one left (RelayTempDirs).
		dir, err := os.MkdirTemp("", RelayTempPrefix(env.c.RunID()))
		if err != nil {
			return nil, err
		}
		if err := os.Chmod(dir, 0o755); err != nil {
			return nil, err
		}
		ln, err := net.Listen("unix", filepath.Join(dir, "model.sock"))
		if err != nil {
			os.RemoveAll(dir)
			return nil, err
		}
		os.Chmod(filepath.Join(dir, "model.sock"), 0o777)
		env.relay = &hostRelay{dir: dir, ln: ln}
		go env.relay.serve(rs.Target)
	}
	return []mountSpec{
		bindMount(env.relay.dir, RelaySocketDir, true),
		bindMount(rs.Binary, RelayBinPath, true),
	}, nil
}

func (env *Environment) relayPort() int {
	if env.spec.Relay == nil || env.spec.Relay.Port == 0 {
		return 18080
	}
	return env.spec.Relay.Port
}

// ModelBaseURL is the model endpoint's address as seen inside the
// container (append the API path, e.g. /v1). Empty without a relay.
func (env *Environment) ModelBaseURL() string {
	if env.spec.Relay == nil {
		return ""
	}
	return "http://127.0.0.1:" + strconv.Itoa(env.relayPort())
}

func (env *Environment) startRelay(ctx context.Context) error {
	return env.startRelayAt(ctx, "127.0.0.1:"+strconv.Itoa(env.relayPort()), RelaySocketDir+"/model.sock")
}

// startRelayAt runs hoh-relay in the container, forwarding the loopback
// address addr to the unix socket (a path inside the container).
func (env *Environment) startRelayAt(ctx context.Context, addr, socket string) error {
	api := env.c.API
	ec, err := api.ContainerExecCreate(ctx, env.ID, container.ExecOptions{
		Cmd: []string{RelayBinPath, "-listen", addr, "-unix", socket},
	})
	if err != nil {
		return err
	}
	if err := api.ContainerExecStart(ctx, ec.ID, container.ExecStartOptions{Detach: true}); err != nil {
		return err
	}
	var last error
	for i := 0; i < 50; i++ {
		if _, last = env.quickExec(ctx, RelayBinPath, "-probe", addr); last == nil {
			return nil
		}
		time.Sleep(100 * time.Millisecond)
	}
	return fmt.Errorf("relay did not come up on %s: %v", addr, last)
}

// BuildRelayBinary builds cmd/hoh-relay as a static binary at out, from the
// module rooted at moduleDir (needs the go toolchain).
func BuildRelayBinary(ctx context.Context, moduleDir, out string) error {
	cmd := exec.CommandContext(ctx, "go", "build", "-o", out, "./cmd/hoh-relay")
	cmd.Dir = moduleDir
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if b, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("building hoh-relay: %v\n%s", err, b)
	}
	return nil
}
