package runner

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/hoh-research/hoh/adapters/benchmark"
	"github.com/hoh-research/hoh/adapters/harness"
	"github.com/hoh-research/hoh/adapters/harness/catalogue"
	"github.com/hoh-research/hoh/adapters/harness/cliinstall"
	"github.com/hoh-research/hoh/adapters/sandbox"
	"github.com/hoh-research/hoh/experiments/config"
	"github.com/hoh-research/hoh/experiments/environment"
	"github.com/hoh-research/hoh/experiments/trial"
	"github.com/hoh-research/hoh/runrecord"
)

// checkInView runs each configuration's CLI (--version) in the view a role
// invocation of a host benchmark gets (trial.RoleExecutor, the run's output
// directory hidden like the trials'), offline: hoh run --check refuses a
// CLI the view hides or cannot execute, as the preflight and every trial
// would. Container benchmarks run their CLIs in the task image, which only
// the preflight can check.
func checkInView(ctx context.Context, e *config.Experiment, bench benchmark.Benchmark) config.Problems {
	if _, inContainers := bench.(environment.ContainerBenchmark); inContainers {
		return nil
	}
	// The view forwards the model endpoint into its own network namespace, so
	// the stand-in for the relay chosen when the run starts is a real free
	// loopback port (a low one cannot be bound there).
	stand, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return config.Problems{e.Problem("configs", "no loopback port for the view's model endpoint: %v", err)}
	}
	defer stand.Close()
	var ps config.Problems
	for i, c := range e.Configs {
		ps = append(ps, agentInView(ctx, e, fmt.Sprintf("configs[%d]", i), fmt.Sprintf("config %q", c.Label), c, stand)...)
		for _, role := range runrecord.Roles {
			if c.Roles.Agent(role) != nil {
				ps = append(ps, agentInView(ctx, e, fmt.Sprintf("configs[%d].roles.%s", i, role), fmt.Sprintf("config %q role %s", c.Label, role), c.ForRole(role), stand)...)
			}
		}
	}
	return ps
}

// agentInView checks that one agent's CLI runs in a role's view (key: its
// config key, name: who it is in the message).
func agentInView(ctx context.Context, e *config.Experiment, key, name string, c config.HarnessModel, stand net.Listener) config.Problems {
	at := key + ".harness"
	if c.Binary != "" {
		at = key + ".binary"
	}
	spec := c.HarnessSpec()
	if c.IsScripted() || spec.Provider.BaseURL == "" {
		spec.Provider.BaseURL = "http://" + stand.Addr().String() + "/v1"
	}
	h, err := catalogue.New(spec)
	if err != nil {
		return nil // preflight.Harnesses reports it
	}
	in, ok := h.(harness.Installed)
	if !ok || in.Binary() == "" {
		return nil
	}
	if why := runInView(ctx, h, in.Binary(), e.Output); why != "" {
		return config.Problems{e.Problem(at, "%s: %s cannot run inside a role's view (the run directory, /tmp and $TMPDIR hidden; its install directory shown): %s",
			name, in.Binary(), why)}
	}
	return nil
}

// runInView runs bin --version confined as a role is; "" when it exits 0.
func runInView(ctx context.Context, h harness.Harness, bin, runDir string) string {
	tmp, err := os.MkdirTemp("", "hoh-check-view-")
	if err != nil {
		return err.Error()
	}
	defer os.RemoveAll(tmp)
	work, state := filepath.Join(tmp, "work"), filepath.Join(tmp, "state")
	for _, d := range []string{work, state} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return err.Error()
		}
	}
	ex := trial.RoleExecutor(nil, h, runDir, trial.RoleView{Access: harness.AccessReadOnly, WorkDir: work, StateDir: state}, nil)
	var out bytes.Buffer
	exit, err := ex.Run(ctx, sandbox.Command{Args: cliinstall.Command([]string{bin, "--version"}), Dir: work,
		Env:    []string{"PATH=" + os.Getenv("PATH"), "HOME=" + state, "XDG_CONFIG_HOME=" + filepath.Join(state, ".config")},
		Stdout: &out, Stderr: &out, WallTimeout: time.Minute})
	switch {
	case err != nil:
		return err.Error()
	case exit.Code != 0:
		msg := strings.TrimSpace(out.String())
		if len(msg) > 300 {
			msg = msg[len(msg)-300:]
		}
		return fmt.Sprintf("--version exited %d: %s", exit.Code, msg)
	}
	return ""
}
